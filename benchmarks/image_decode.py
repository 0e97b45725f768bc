"""JPEG decoding throughput: Pillow (what mxjax uses) against OpenCV (what MXNet uses).

Generates JPEGs in memory (200 at 256x256 and 50 at 1024x768 by default), decodes each set with
both libraries to an RGB uint8 array, and prints images/s and the OpenCV / Pillow ratio.  OpenCV
is optional: without ``cv2`` only Pillow is timed.

    python benchmarks/image_decode.py [--small N] [--large N] [--repeat R]
"""
from __future__ import annotations

import argparse
import io
import time

import numpy as np
from PIL import Image


def make_jpegs(count: int, width: int, height: int, seed: int) -> list[bytes]:
    """Photo-like JPEGs: smooth gradients plus noise, quality 90."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    out = []
    for _ in range(count):
        phase = rng.uniform(0, 6.3, 3)
        base = np.stack([np.sin(xx / 37 + phase[0]), np.cos(yy / 23 + phase[1]), np.sin((xx + yy) / 51 + phase[2])], -1)
        pixels = np.clip(127 + 100 * base + rng.normal(0, 12, base.shape), 0, 255).astype(np.uint8)
        buf = io.BytesIO()
        Image.fromarray(pixels).save(buf, format="JPEG", quality=90)
        out.append(buf.getvalue())
    return out


def decode_pillow(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("RGB"))


def decode_opencv(data: bytes) -> np.ndarray:
    import cv2
    bgr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)


def rate(decode, images: list[bytes], repeat: int) -> float:
    """Best-of-``repeat`` images per second."""
    decode(images[0])  # warm up
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for data in images:
            decode(data)
        best = min(best, time.perf_counter() - start)
    return len(images) / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=200, help="number of 256x256 JPEGs")
    parser.add_argument("--large", type=int, default=50, help="number of 1024x768 JPEGs")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    try:
        import cv2
        cv2.setNumThreads(1)
    except ImportError:
        cv2 = None
    sets = {"256x256": make_jpegs(args.small, 256, 256, 0), "1024x768": make_jpegs(args.large, 1024, 768, 1)}
    for name, images in sets.items():
        pil = rate(decode_pillow, images, args.repeat)
        line = f"{name:>9} ({len(images)} JPEGs): Pillow {pil:8.1f} img/s"
        if cv2 is not None:
            ocv = rate(decode_opencv, images, args.repeat)
            line += f"   OpenCV {ocv:8.1f} img/s   OpenCV/Pillow {ocv / pil:.2f}x"
        print(line)


if __name__ == "__main__":
    main()
