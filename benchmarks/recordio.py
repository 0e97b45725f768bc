"""RecordIO read throughput: mxjax's pure-Python reader vs MXNet's ``MXRecordIO.read`` loop.

(a) sequential read of 20k records of 1 KiB; (b) an image ``.rec`` of 500 small JPEGs, read and
decoded. MXNet runs in a subprocess with the interpreter named by ``MXNET_PYTHON`` (a venv with
mxnet installed) on the same files; without it only mxjax is measured. MXNet decodes with
``mx.image.imdecode`` (its built-in OpenCV), mxjax with ``recordio.unpack_img`` (Pillow).
Goal (issue 20): mxjax >= 3x MXNet's read loop for (a).

Rates are records per second of process CPU time (best of ``--repeat``), which shifts less than
wall time when other work shares the machine; the files sit in the page cache after the warm-up.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np

import mxjax.recordio as recordio

MXNET_SCRIPT = r"""
import json, sys, time
import mxnet as mx
rec, imgs, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
def seq():
    r = mx.recordio.MXRecordIO(rec, 'r'); n = 0
    while r.read() is not None: n += 1
    r.close(); return n
def img():
    r = mx.recordio.MXRecordIO(imgs, 'r'); n = 0
    while True:
        s = r.read()
        if s is None: break
        h, body = mx.recordio.unpack(s)
        mx.image.imdecode(body).asnumpy(); n += 1
    r.close(); return n
out = {}
for name, fn in (('seq', seq), ('img', img)):
    fn(); best = float('inf')
    for _ in range(repeat):
        t = time.process_time(); n = fn(); best = min(best, time.process_time() - t)
    out[name] = n / best
print(json.dumps(out))
"""


def make_files(folder: str, records: int, size: int, images: int) -> tuple:
    rng = np.random.RandomState(0)
    rec = os.path.join(folder, "seq.rec")
    with recordio.MXRecordIO(rec, "w") as writer:
        for _ in range(records):
            writer.write(rng.bytes(size))
    imgs = os.path.join(folder, "img.rec")
    yy, xx = np.mgrid[0:64, 0:64]
    with recordio.MXRecordIO(imgs, "w") as writer:
        for i in range(images):
            bgr = np.stack([(xx * 3 + i) % 256, (yy * 5) % 256, (xx + yy + 7 * i) % 256], -1).astype(np.uint8)
            writer.write(recordio.pack_img(recordio.IRHeader(0, float(i % 10), i, 0), bgr, quality=90))
    return rec, imgs


def best_rate(fn, repeat: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        n = fn()
        best = min(best, time.process_time() - start)
    return n / best


def mxjax_seq(rec: str) -> int:
    reader = recordio.MXRecordIO(rec, "r")
    n = 0
    while reader.read() is not None:
        n += 1
    reader.close()
    return n


def mxjax_img(imgs: str) -> int:
    reader = recordio.MXRecordIO(imgs, "r")
    n = 0
    while True:
        record = reader.read()
        if record is None:
            break
        recordio.unpack_img(record, 1)
        n += 1
    reader.close()
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--images", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        rec, imgs = make_files(folder, args.records, args.size, args.images)
        ours = {"seq": best_rate(lambda: mxjax_seq(rec), args.repeat),
                "img": best_rate(lambda: mxjax_img(imgs), args.repeat)}
        theirs = None
        python = os.environ.get("MXNET_PYTHON")
        if python:
            done = subprocess.run([python, "-c", MXNET_SCRIPT, rec, imgs, str(args.repeat)],
                                  capture_output=True, text=True, check=True)
            theirs = json.loads(done.stdout.strip().splitlines()[-1])
    labels = {"seq": f"(a) sequential read, {args.records} x {args.size} B",
              "img": f"(b) read + decode, {args.images} JPEG 64x64"}
    for key, label in labels.items():
        line = f"{label}: mxjax {ours[key]:,.0f} records/s"
        if theirs is not None:
            line += f", MXNet {theirs[key]:,.0f} records/s, ratio {ours[key] / theirs[key]:.2f}x"
        print(line)
    if theirs is None:
        print("MXNet skipped: set MXNET_PYTHON to an interpreter with mxnet installed to compare")


if __name__ == "__main__":
    main()
