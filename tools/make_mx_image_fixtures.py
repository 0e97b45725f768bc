"""Write the reference outputs of MXNet 2.0's ``mx.image`` used by tests/image.

Run with the MXNet 2.0 interpreter (it needs no OpenCV Python module or Pillow):

    python tools/make_mx_image_fixtures.py [OUTPUT_DIR]

OUTPUT_DIR defaults to tests/fixtures/mx_image.  Writes ``cases.npz`` (inputs and outputs),
``dumps.json`` (augmenter descriptions), a tiny RecordIO dataset (``tiny.rec``/``tiny.idx``), a
detection one (``det.rec``/``det.idx``), PNG files with an image list (``imgs/``, ``tiny.lst``).
Everything random is seeded through Python's ``random`` and ``numpy.random``, which is where
``mx.image`` draws from.
"""
from __future__ import annotations

import json
import os
import random
import struct
import sys
import zlib

import numpy as np
import mxnet as mx

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures",
                                                         "mx_image")


def png_bytes(pixels: np.ndarray) -> bytes:
    """A minimal RGB (or grey) 8-bit PNG encoder, so the fixtures need no imaging library."""
    height, width, channels = pixels.shape
    color_type = {1: 0, 3: 2}[channels]
    rows = b"".join(b"\x00" + pixels[r].astype(np.uint8).tobytes() for r in range(height))

    def chunk(tag: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def test_image(height: int, width: int, seed: int) -> np.ndarray:
    """Smooth gradients plus noise: exercises interpolation without being trivially linear."""
    rng = np.random.RandomState(seed)
    yy, xx = np.mgrid[0:height, 0:width]
    base = np.stack([xx * 255.0 / max(width - 1, 1), yy * 255.0 / max(height - 1, 1),
                     (xx + yy) * 127.0 / max(height + width - 2, 1)], axis=-1)
    return np.clip(base + rng.randint(-40, 40, base.shape), 0, 255).astype(np.uint8)


def main() -> None:
    os.makedirs(os.path.join(OUT, "imgs"), exist_ok=True)
    cases: dict[str, np.ndarray] = {}
    dumps: dict[str, object] = {}
    img = test_image(13, 17, 0)
    cases["img"] = img
    src_u8 = mx.np.array(img, dtype="uint8")
    src_f32 = mx.np.array(img, dtype="float32")

    # imresize: every interp, up / down / mixed, uint8 and float32
    for w, h in ((29, 23), (9, 7), (25, 6)):
        for interp in range(5):
            cases[f"imresize_u8_{w}x{h}_{interp}"] = mx.image.imresize(src_u8, w, h, interp=interp).asnumpy()
            cases[f"imresize_f32_{w}x{h}_{interp}"] = mx.image.imresize(src_f32, w, h, interp=interp).asnumpy()
    for size in (5, 20):
        for interp in (0, 1, 2, 3, 4, 9):
            cases[f"resize_short_{size}_{interp}"] = mx.image.resize_short(src_u8, size, interp=interp).asnumpy()

    # copyMakeBorder (MXNet 2.0 takes legacy NDArrays only here)
    legacy = mx.nd.array(img, dtype="uint8")
    for kind in range(5):
        out = mx.image.copyMakeBorder(legacy, 2, 1, 3, 4, type=kind, values=(10, 20, 30))
        cases[f"border_{kind}"] = out.asnumpy()
    cases["border_value"] = mx.image.copyMakeBorder(legacy, 1, 2, 2, 1, type=0, value=7).asnumpy()

    # decoding a PNG
    png = png_bytes(img)
    with open(os.path.join(OUT, "img.png"), "wb") as f:
        f.write(png)
    cases["decode_rgb"] = mx.image.imdecode(png).asnumpy()
    cases["decode_bgr"] = mx.image.imdecode(png, to_rgb=0).asnumpy()
    cases["decode_gray"] = mx.image.imdecode(png, flag=0).asnumpy()

    # crops with a seeded ``random``
    for seed in range(4):
        random.seed(seed)
        out, rect = mx.image.random_crop(src_u8, (6, 5))
        cases[f"random_crop_{seed}"], cases[f"random_crop_rect_{seed}"] = out.asnumpy(), np.array(rect)
        random.seed(seed)
        out, rect = mx.image.random_crop(src_u8, (30, 20))
        cases[f"random_crop_up_{seed}"], cases[f"random_crop_up_rect_{seed}"] = out.asnumpy(), np.array(rect)
        random.seed(seed)
        out, rect = mx.image.random_size_crop(src_u8, (8, 8), (0.3, 0.9), (0.75, 1.333))
        cases[f"random_size_crop_{seed}"], cases[f"random_size_crop_rect_{seed}"] = out.asnumpy(), np.array(rect)
    out, rect = mx.image.center_crop(src_u8, (7, 9))
    cases["center_crop"], cases["center_crop_rect"] = out.asnumpy(), np.array(rect)
    out, rect = mx.image.center_crop(src_u8, (40, 20), interp=1)
    cases["center_crop_up"], cases["center_crop_up_rect"] = out.asnumpy(), np.array(rect)
    cases["fixed_crop"] = mx.image.fixed_crop(src_u8, 2, 3, 8, 6, size=(5, 4), interp=3).asnumpy()

    # augmenters on legacy float32 arrays (MXNet 2.0's colour augmenters need them), seeded
    eigval = np.array([55.46, 4.794, 1.148])
    eigvec = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140], [-0.5836, -0.6948, 0.4203]])
    augs = {
        "brightness": mx.image.BrightnessJitterAug(0.4),
        "contrast": mx.image.ContrastJitterAug(0.4),
        "saturation": mx.image.SaturationJitterAug(0.4),
        "hue": mx.image.HueJitterAug(0.4),
        "colorjitter": mx.image.ColorJitterAug(0.3, 0.3, 0.3),
        "lighting": mx.image.LightingAug(0.5, eigval, eigvec),
        "gray": mx.image.RandomGrayAug(0.5),
        "flip": mx.image.HorizontalFlipAug(0.5),
        "normalize": mx.image.ColorNormalizeAug(mx.nd.array([100.0, 110.0, 120.0]), mx.nd.array([50.0, 60.0, 70.0])),
        "resize": mx.image.ResizeAug(9, interp=1),
        "forceresize": mx.image.ForceResizeAug((11, 5), interp=9),
        "randomcrop": mx.image.RandomCropAug((6, 6), interp=1),
        "randomsizedcrop": mx.image.RandomSizedCropAug((7, 5), 0.2, (0.5, 2.0), interp=1),
        "centercrop": mx.image.CenterCropAug((10, 4), interp=1),
        "cast": mx.image.CastAug("float16"),
    }
    uses_legacy = {"brightness", "contrast", "saturation", "hue", "colorjitter", "lighting", "gray", "flip",
                   "normalize", "cast"}
    for name, aug in augs.items():
        dumps[name] = aug.dumps()
        for seed in range(3):
            random.seed(seed)
            np.random.seed(seed)
            src = mx.nd.array(img, dtype="float32") if name in uses_legacy else mx.np.array(img, dtype="float32")
            cases[f"aug_{name}_{seed}"] = aug(src).asnumpy()
    dumps["sequential"] = mx.image.SequentialAug([augs["cast"], augs["flip"]]).dumps()
    dumps["create_default"] = [a.dumps() for a in mx.image.CreateAugmenter((3, 8, 8))]
    dumps["create_full"] = [a.dumps() for a in mx.image.CreateAugmenter(
        (3, 8, 10), resize=12, rand_crop=True, rand_resize=True, rand_mirror=True, mean=True, std=True,
        brightness=0.1, contrast=0.2, saturation=0.3, hue=0.4, pca_noise=0.5, rand_gray=0.6, inter_method=1)]
    dumps["create_crop"] = [a.dumps() for a in mx.image.CreateAugmenter(
        (3, 6, 6), rand_crop=True, mean=np.array([1.0, 2.0, 3.0]), std=np.array([2.0]))]

    # a tiny classification RecordIO dataset and ImageIter over it
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(OUT, "tiny.idx"), os.path.join(OUT, "tiny.rec"), "w")
    lst = []
    for i in range(5):
        pixels = test_image(10 + i, 12 + 2 * i, 10 + i)
        data = png_bytes(pixels)
        rec.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, float(i % 3), i, 0), data))
        name = f"im{i}.png"
        with open(os.path.join(OUT, "imgs", name), "wb") as f:
            f.write(data)
        lst.append(f"{i}\t{float(i % 3)}\t{float(i)}\t{name}")
    rec.close()
    with open(os.path.join(OUT, "tiny.lst"), "w") as f:
        f.write("\n".join(lst) + "\n")

    def run_iter(tag: str, seed: int = 0, epochs: int = 2, legacy: bool = False, **kwargs) -> None:
        random.seed(seed)
        np.random.seed(seed)
        if legacy:  # MXNet 2.0's flip augmenter only works on legacy arrays
            mx.npx.reset_np()
        it = mx.image.ImageIter(**kwargs)
        for epoch in range(epochs):
            for b, batch in enumerate(it):
                cases[f"iter_{tag}_{epoch}_{b}_data"] = batch.data[0].asnumpy()
                cases[f"iter_{tag}_{epoch}_{b}_label"] = batch.label[0].asnumpy()
                cases[f"iter_{tag}_{epoch}_{b}_pad"] = np.array(batch.pad)
            it.reset()
        mx.npx.set_np()

    rec_path, idx_path = os.path.join(OUT, "tiny.rec"), os.path.join(OUT, "tiny.idx")
    run_iter("seq_pad", batch_size=2, data_shape=(3, 8, 8), path_imgrec=rec_path)
    run_iter("seq_discard", batch_size=2, data_shape=(3, 8, 8), path_imgrec=rec_path, last_batch_handle="discard")
    run_iter("idx_rollover", epochs=3, batch_size=2, data_shape=(3, 8, 8), path_imgrec=rec_path,
             path_imgidx=idx_path, last_batch_handle="roll_over")
    run_iter("shuffle_aug", seed=3, legacy=True, batch_size=3, data_shape=(3, 6, 7), path_imgrec=rec_path,
             path_imgidx=idx_path, shuffle=True, rand_crop=True, rand_mirror=True, resize=9, mean=True, std=True)
    run_iter("part1", epochs=1, batch_size=2, data_shape=(3, 8, 8), path_imgrec=rec_path, path_imgidx=idx_path,
             num_parts=2, part_index=1)
    run_iter("lst", epochs=1, batch_size=2, data_shape=(3, 8, 8), label_width=2,
             path_imglist=os.path.join(OUT, "tiny.lst"), path_root=os.path.join(OUT, "imgs"))
    run_iter("imglist", epochs=1, batch_size=4, data_shape=(3, 8, 8), path_root=os.path.join(OUT, "imgs"),
             imglist=[[1.0, "im0.png"], [2.0, "im3.png"], [0.0, "im4.png"]])

    # rotation (CHW / NCHW float32, bilinear sampling with zero fill)
    chw = mx.np.array(test_image(8, 10, 7).transpose(2, 0, 1), dtype="float32")
    cases["rot_src"] = chw.asnumpy()
    cases["rot_30"] = mx.image.imrotate(chw, 30).asnumpy()
    cases["rot_30_in"] = mx.image.imrotate(chw, 30, zoom_in=True).asnumpy()
    cases["rot_30_out"] = mx.image.imrotate(chw, 30, zoom_out=True).asnumpy()
    batch = mx.np.stack([chw, chw[:, ::-1]])
    cases["rot_batch"] = mx.image.imrotate(batch, mx.nd.array([10, -45])).asnumpy()
    np.random.seed(4)
    cases["rot_random"] = mx.image.random_rotate(batch, (-30, 30), zoom_in=True).asnumpy()

    # detection
    write_detection(cases, dumps)
    np.savez_compressed(os.path.join(OUT, "cases.npz"), **cases)
    with open(os.path.join(OUT, "dumps.json"), "w") as f:
        json.dump(dumps, f, indent=1, sort_keys=True)


def write_detection(cases: dict, dumps: dict) -> None:
    det = mx.image.det
    label = np.array([[0, 0.1, 0.2, 0.5, 0.6], [1, 0.4, 0.3, 0.9, 0.95], [2, 0.6, 0.05, 0.8, 0.3]], dtype=np.float32)
    cases["det_label"] = label
    cases["det_img"] = test_image(20, 24, 5)
    img = mx.nd.array(cases["det_img"], dtype="float32")
    crop = det.DetRandomCropAug(min_object_covered=0.3, area_range=(0.2, 1.0))
    pad = det.DetRandomPadAug(area_range=(1.2, 2.5), pad_val=(1, 2, 3))
    flip = det.DetHorizontalFlipAug(1.0)
    for seed in range(4):
        for name, aug in (("crop", crop), ("pad", pad), ("flip", flip)):
            random.seed(seed)
            out, new_label = aug(img.copy(), label.copy())
            cases[f"det_{name}_{seed}_img"] = out.asnumpy()
            cases[f"det_{name}_{seed}_label"] = np.asarray(new_label)
    for name, aug in (("crop", crop), ("pad", pad), ("flip", flip),
                      ("borrow", det.DetBorrowAug(mx.image.CastAug())),
                      ("select", det.DetRandomSelectAug([flip], skip_prob=0.3))):
        dumps[f"det_{name}"] = aug.dumps()
    dumps["det_create_default"] = [a.dumps() for a in det.CreateDetAugmenter((3, 16, 16))]
    dumps["det_create_full"] = [a.dumps() for a in det.CreateDetAugmenter(
        (3, 16, 16), resize=20, rand_crop=0.5, rand_pad=0.5, rand_gray=0.2, rand_mirror=True, mean=True, std=True,
        brightness=0.1, contrast=0.1, saturation=0.1, pca_noise=0.1, hue=0.1, inter_method=1)]
    dumps["det_multi"] = det.CreateMultiRandCropAugmenter(
        min_object_covered=[0.1, 0.5], aspect_ratio_range=(0.5, 2.0), skip_prob=0.2).dumps()

    # a detection RecordIO: labels are [header_width=2, object_width=5, objects...]
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(OUT, "det.idx"), os.path.join(OUT, "det.rec"), "w")
    for i in range(3):
        objects = label[: i + 1].ravel()
        full = np.concatenate([[2, 5], objects]).astype(np.float32)
        data = png_bytes(test_image(12 + i, 14, 20 + i))
        rec.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, full, i, 0), data))
    rec.close()
    random.seed(0)
    it = det.ImageDetIter(2, (3, 8, 8), path_imgrec=os.path.join(OUT, "det.rec"),
                          path_imgidx=os.path.join(OUT, "det.idx"))
    cases["detiter_provide_label"] = np.array(it.provide_label[0][1])
    for b, batch in enumerate(it):
        cases[f"detiter_{b}_data"] = batch.data[0].asnumpy()
        cases[f"detiter_{b}_label"] = batch.label[0].asnumpy()
        cases[f"detiter_{b}_pad"] = np.array(batch.pad)


if __name__ == "__main__":
    main()
