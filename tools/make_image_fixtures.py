"""Write tests/fixtures/image/: MXNet 2.0's ``mx.nd.image`` operators and ``mx.image.imdecode``.

Run inside a reference MXNet 2.0 virtualenv (``python tools/make_image_fixtures.py``).  ``cases.npz``
holds, per case, its input (``<case>/in``) and output (``<case>/out``), with every case's op and
parameters in ``params`` (JSON).  Random ops run with their range collapsed to one value
(``min_factor == max_factor``, ``xrange=(a, a)``), which makes them deterministic.

``tiny.png`` is written here (uncompressed RGB, by hand: no imaging library needed); ``tiny.jpg``
must exist already -- make it once with Pillow: ``python tools/make_image_fixtures.py --jpeg``.
"""
from __future__ import annotations

import json
import pathlib
import struct
import sys
import zlib

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "image"
RNG = np.random.default_rng(7)


def tiny_image():
    return RNG.integers(0, 256, (6, 9, 3)).astype("uint8")


def png_bytes(pixels):
    """An 8-bit RGB PNG of ``pixels`` (H, W, 3)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    height, width = pixels.shape[:2]
    raw = b"".join(b"\x00" + pixels[r].tobytes() for r in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def write_jpeg():
    from PIL import Image  # only for this one-off step, outside the reference venv
    pixels = np.random.default_rng(8).integers(0, 256, (8, 12, 3)).astype("uint8")
    pixels = (pixels // 32 * 32).astype("uint8")  # coarse levels: a JPEG worth comparing
    Image.fromarray(pixels).save(OUT / "tiny.jpg", quality=95)


def main():
    import mxnet as mx
    I = mx.nd.image
    OUT.mkdir(parents=True, exist_ok=True)
    record, params = {}, {}

    def case(name, op, data, **kw):
        out = getattr(I, op)(mx.nd.array(data, dtype=data.dtype), **kw)
        record[f"{name}/in"] = data
        record[f"{name}/out"] = out.asnumpy()
        params[name] = {"op": op, **kw}

    u8 = RNG.integers(0, 256, (7, 9, 3)).astype("uint8")
    f32 = RNG.uniform(0, 255, (7, 9, 3)).astype("float32")
    batch = RNG.integers(0, 256, (2, 6, 8, 3)).astype("uint8")
    case("to_tensor_u8", "to_tensor", u8)
    case("to_tensor_f32", "to_tensor", f32)
    case("to_tensor_nhwc", "to_tensor", batch)
    chw = RNG.uniform(0, 1, (3, 4, 5)).astype("float32")
    case("normalize_chw", "normalize", chw, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))
    case("normalize_nchw", "normalize", RNG.uniform(0, 1, (2, 3, 4, 5)).astype("float32"), mean=(0.5,), std=(0.25,))
    case("normalize_gray", "normalize", RNG.uniform(0, 1, (1, 4, 5)).astype("float32"), mean=(0.1,), std=(2.0,))
    case("normalize_u8", "normalize", RNG.integers(10, 256, (3, 4, 5)).astype("uint8"),
         mean=(0.5, 1.5, 2.9), std=(1.5, 2.0, 0.7))
    sizes = {"down": (5, 4), "up": (13, 11), "half": (4, 3), "mixed": (5, 10)}
    for interp in range(5):
        for label, size in sizes.items():
            case(f"resize_u8_{label}_{interp}", "resize", u8, size=size, interp=interp)
            case(f"resize_f32_{label}_{interp}", "resize", f32, size=size, interp=interp)
    case("resize_keep", "resize", u8, size=4, keep_ratio=True)
    case("resize_square", "resize", f32, size=4)
    case("resize_nhwc", "resize", batch, size=(5, 3))
    case("resize_f64", "resize", f32.astype("float64"), size=(5, 4))
    case("crop_hwc", "crop", u8, x=2, y=1, width=4, height=3)
    case("crop_nhwc", "crop", batch, x=0, y=2, width=8, height=4)
    case("flip_left_right", "flip_left_right", u8)
    case("flip_top_bottom", "flip_top_bottom", u8)
    for kind, factor in (("brightness", 0.7), ("contrast", 0.6), ("saturation", 0.3), ("hue", 0.3)):
        op = f"random_{kind}"
        case(f"{kind}_u8", op, u8, min_factor=factor, max_factor=factor)
        case(f"{kind}_f32", op, f32, min_factor=factor, max_factor=factor)
    case("brightness_u8_up", "random_brightness", u8, min_factor=1.8, max_factor=1.8)
    case("contrast_u8_up", "random_contrast", u8, min_factor=1.7, max_factor=1.7)
    case("saturation_u8_up", "random_saturation", u8, min_factor=1.5, max_factor=1.5)
    case("hue_u8_small", "random_hue", u8, min_factor=0.05, max_factor=0.05)
    case("lighting_u8", "adjust_lighting", u8, alpha=(0.1, -0.2, 0.3))
    case("lighting_f32", "adjust_lighting", f32, alpha=(-1.0, 0.5, 2.0))
    img = RNG.uniform(0, 255, (10, 12, 3)).astype("float32")
    case("random_crop_fixed", "random_crop", img, xrange=(0.5, 0.5), yrange=(0.25, 0.25), width=5, height=4)
    case("random_crop_nhwc", "random_crop", batch, xrange=(1.0, 1.0), yrange=(0.0, 0.0), width=3, height=2)
    case("random_crop_upsample", "random_crop", img, xrange=(0.5, 0.5), yrange=(0.0, 0.0), width=4, height=20,
         interp=0)

    png = tiny_image()
    (OUT / "tiny.png").write_bytes(png_bytes(png))
    record["png/pixels"] = png
    for name, kw in (("png/rgb", {}), ("png/bgr", {"to_rgb": False}), ("png/gray", {"flag": 0})):
        record[name] = mx.image.imdecode((OUT / "tiny.png").read_bytes(), **kw).asnumpy()
    record["jpg/rgb"] = mx.image.imdecode((OUT / "tiny.jpg").read_bytes()).asnumpy()
    record["params"] = np.array(json.dumps(params))
    np.savez_compressed(OUT / "cases.npz", **record)


if __name__ == "__main__":
    if "--jpeg" in sys.argv:
        OUT.mkdir(parents=True, exist_ok=True)
        write_jpeg()
    else:
        main()
