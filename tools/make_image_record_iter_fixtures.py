"""Write the ImageRecordIter fixtures: a tiny .rec/.idx of PNG images and MXNet's batches for it.

Run with MXNet 1.9.1's interpreter (its C++ ImageRecordIter is the oracle):

    python tools/make_image_record_iter_fixtures.py [out_dir]

PNG is lossless, so decoding is exact and only MXNet's resize/normalisation arithmetic can
differ.  Every case is deterministic (no random crop/mirror/shuffle); each .npz holds two
epochs of batches (data, label, pad, index) under keys ``e{epoch}_b{batch}_{field}``.
"""
import json
import os
import struct
import sys
import zlib

import numpy as np

import mxnet as mx

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures",
                                                         "image_record_iter")
SIZES = [(12, 16), (16, 12), (10, 10), (9, 14), (14, 9), (11, 13), (13, 11), (10, 12), (12, 10)]  # (h, w)


def png_bytes(arr):
    """A minimal RGB PNG (8-bit, no filtering): the reference venv has no image library."""
    h, w, _ = arr.shape

    def chunk(tag, body):
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + arr[y].tobytes() for y in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def write_rec(name, label_width):
    rng = np.random.RandomState(42 + label_width)
    rec_path, idx_path = os.path.join(OUT, name + ".rec"), os.path.join(OUT, name + ".idx")
    writer = mx.recordio.MXIndexedRecordIO(idx_path, rec_path, "w")
    for i, (h, w) in enumerate(SIZES):
        img = rng.randint(0, 256, (h, w, 3)).astype(np.uint8)
        label = float(i) if label_width == 1 else [float(i), float(10 * i + 1)][:label_width]
        header = mx.recordio.IRHeader(0, label, i, 0)
        writer.write_idx(i, mx.recordio.pack(header, png_bytes(img)))
    writer.close()


CASES = {
    "center_crop": dict(path_imgrec="plain.rec", data_shape=(3, 8, 8), batch_size=4),
    "resize_norm": dict(path_imgrec="plain.rec", data_shape=(3, 8, 8), batch_size=4, resize=9,
                        mean_r=120.5, mean_g=110.0, mean_b=100.25, std_r=50.0, std_g=60.0, std_b=70.0,
                        scale=0.5),
    "no_round": dict(path_imgrec="plain.rec", data_shape=(3, 9, 9), batch_size=4, round_batch=False),
    "part1of2": dict(path_imgrec="plain.rec", data_shape=(3, 8, 8), batch_size=3, num_parts=2, part_index=1),
    "indexed_part0of3": dict(path_imgrec="plain.rec", path_imgidx="plain.idx", data_shape=(3, 8, 8),
                             batch_size=2, num_parts=3, part_index=0),
    "label2": dict(path_imgrec="label2.rec", data_shape=(3, 8, 8), batch_size=4, label_width=2),
    "gray": dict(path_imgrec="plain.rec", data_shape=(1, 8, 8), batch_size=4),
    "mirror": dict(path_imgrec="plain.rec", data_shape=(3, 8, 8), batch_size=5, mirror=True),
    "upscale": dict(path_imgrec="plain.rec", data_shape=(3, 12, 8), batch_size=4),
    "uint8": dict(path_imgrec="plain.rec", data_shape=(3, 8, 8), batch_size=4, resize=10, _iter="uint8"),
}


def run_case(name, args):
    args = dict(args)
    kind = args.pop("_iter", "float")
    for key in ("path_imgrec", "path_imgidx"):
        if key in args:
            args[key] = os.path.join(OUT, args[key])
    make = {"float": mx.io.ImageRecordIter, "uint8": mx.io.ImageRecordUInt8Iter}[kind]
    it = make(preprocess_threads=1, **args)
    out = {}
    for epoch in range(2):
        for b, batch in enumerate(it):
            # Without round_batch MXNet leaves uninitialised rows after the last record (and says
            # pad=0): keep only the real rows, whose count the (one-part) record total gives.
            real = batch.data[0].shape[0]
            if not args.get("round_batch", True):
                real = min(real, len(SIZES) - b * real)
                out[f"e{epoch}_b{b}_real"] = np.array(real)
            out[f"e{epoch}_b{b}_data"] = batch.data[0].asnumpy()[:real]
            out[f"e{epoch}_b{b}_label"] = batch.label[0].asnumpy()[:real]
            out[f"e{epoch}_b{b}_pad"] = np.array(batch.pad)
            if batch.index is not None:
                out[f"e{epoch}_b{b}_index"] = np.asarray(batch.index)
        it.reset()
    np.savez_compressed(os.path.join(OUT, name + ".npz"), **out)
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    write_rec("plain", 1)
    write_rec("label2", 2)
    cases = {}
    for name, args in CASES.items():
        out = run_case(name, args)
        cases[name] = {k: v for k, v in args.items()}
        cases[name]["batches"] = sorted(k for k in out if k.endswith("_pad"))
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump({"mxnet_version": mx.__version__, "cases": cases}, f, indent=1, sort_keys=True, default=list)


if __name__ == "__main__":
    main()
