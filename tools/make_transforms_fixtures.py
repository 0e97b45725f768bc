"""Write tests/fixtures/transforms/: outputs of MXNet 2.0's ``gluon.data.vision.transforms``.

Run inside a reference MXNet 2.0 virtualenv: ``python tools/make_transforms_fixtures.py``.
The inputs are a seeded 11x14 RGB uint8 image (``input/image``) and a batch of two
(``input/batch``); each case stores ``<case>/out``, and ``params`` (JSON) names, per case, the
input, the transform (a constructor expression evaluated against ``transforms``) and whether
the input first goes through ``ToTensor``.  Only deterministic settings are recorded: random
transforms appear with a zero magnitude, probability 1, or a window that fills the image.

``bbox.npz`` holds MXNet 2.0's detection transforms (``gluon.contrib.data.vision.transforms.bbox``)
on an 8x10 image with three boxes; the random ones run after ``random.seed(s)`` and
``numpy.random.seed(s)`` (their draws come from those streams), with ``s`` stored per case.
"""
from __future__ import annotations

import json
import pathlib

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "transforms"

# name -> (input, transform expression, apply ToTensor first)
CASES = {
    "to_tensor": ("image", "ToTensor()", False),
    "to_tensor_batch": ("batch", "ToTensor()", False),
    "normalize_rgb": ("image", "Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))", True),
    "normalize_scalar": ("batch", "Normalize(0.5, 0.25)", True),
    "resize_square": ("image", "Resize(7)", False),
    "resize_wh": ("image", "Resize((9, 5))", False),
    "resize_keep_ratio": ("image", "Resize(6, keep_ratio=True)", False),
    "resize_up": ("image", "Resize((20, 15))", False),
    "resize_nearest": ("image", "Resize((20, 15), interpolation=0)", False),
    "resize_cubic": ("image", "Resize((9, 5), interpolation=2)", False),
    "resize_area": ("image", "Resize((9, 5), interpolation=3)", False),
    "resize_lanczos": ("image", "Resize((20, 15), interpolation=4)", False),
    "resize_batch": ("batch", "Resize((9, 5))", False),
    "resize_float": ("image_f32", "Resize((9, 5))", False),
    "center_crop": ("image", "CenterCrop(5)", False),
    "center_crop_wh": ("image", "CenterCrop((8, 6))", False),
    "center_crop_up": ("image", "CenterCrop(20)", False),
    "center_crop_batch": ("batch", "CenterCrop((8, 6))", False),
    "crop_resize": ("image", "CropResize(2, 3, 7, 5)", False),
    "crop_resize_size": ("image", "CropResize(2, 3, 7, 5, size=(10, 8), interpolation=1)", False),
    "crop_resize_cubic": ("image", "CropResize(1, 1, 9, 6, size=4, interpolation=2)", False),
    "crop_resize_batch": ("batch", "CropResize(2, 3, 7, 5)", False),
    "random_crop_full": ("image", "RandomCrop((14, 11))", False),
    "random_crop_pad": ("image", "RandomCrop((18, 15), pad=2, pad_value=9)", False),
    "random_crop_pad4": ("image", "RandomCrop((17, 14), pad=(1, 2, 3, 0))", False),
    "flip_left_right": ("image", "RandomFlipLeftRight(1)", False),
    "flip_top_bottom": ("image", "RandomFlipTopBottom(1.0)", False),
    "brightness_0": ("image", "RandomBrightness(0)", False),
    "contrast_0": ("image", "RandomContrast(0)", False),
    "saturation_0": ("image", "RandomSaturation(0)", False),
    "hue_0": ("image", "RandomHue(0)", False),
    "jitter_0": ("image", "RandomColorJitter()", False),
    "lighting_0": ("image", "RandomLighting(0)", False),
    "rotate_30": ("image", "Rotate(30)", True),
    "rotate_90": ("image", "Rotate(90)", True),
    "rotate_zoom_in": ("image", "Rotate(-20, zoom_in=True)", True),
    "rotate_zoom_out": ("image", "Rotate(45, zoom_out=True)", True),
    "rotate_batch": ("batch", "Rotate(15)", True),
    "compose": ("image", "Compose([Resize(9), CenterCrop(7), ToTensor(), Normalize(0.5, 0.25)])", False),
    "cast_f16": ("image", "Cast('float16')", False),
}


def inputs() -> dict:
    rng = np.random.default_rng(20)
    ys, xs = np.mgrid[0:11, 0:14]
    smooth = np.stack([ys * 20, xs * 15, (ys + xs) * 9], axis=-1)  # gradients make resizing visible
    image = (smooth + rng.integers(0, 40, (11, 14, 3))).clip(0, 255).astype("uint8")
    batch = np.stack([image, rng.integers(0, 256, (11, 14, 3)).astype("uint8")])
    return {"image": image, "batch": batch, "image_f32": image.astype("float32") / 3}


def main() -> None:
    import mxnet as mx
    from mxnet.gluon.data.vision import transforms

    mx.npx.set_np()
    data = {f"input/{k}": v for k, v in inputs().items()}
    names = {n: getattr(transforms, n) for n in dir(transforms) if not n.startswith("_")}
    for case, (source, expr, tensor_first) in CASES.items():
        x = mx.np.array(data[f"input/{source}"], dtype=data[f"input/{source}"].dtype)
        if tensor_first:
            x = transforms.ToTensor()(x)
        out = eval(expr, {}, names)(x)  # noqa: S307 (expressions from the table above)
        out = out[0] if isinstance(out, tuple) else out
        data[f"{case}/out"] = out.asnumpy()
    params = {case: {"input": s, "transform": e, "to_tensor_first": t} for case, (s, e, t) in CASES.items()}
    data["params"] = np.array(json.dumps(params))
    OUT.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT / "cases.npz", **data)
    print(f"wrote {len(CASES)} cases to {OUT / 'cases.npz'} (MXNet {mx.__version__})")


# name -> (transform expression, seed or None)
BBOX_CASES = {
    "flip": ("ImageBboxRandomFlipLeftRight(1)", None),
    "crop": ("ImageBboxCrop((1, 1, 6, 5))", None),
    "crop_outside_center": ("ImageBboxCrop((1, 1, 6, 5), allow_outside_center=True)", None),
    "resize_down": ("ImageBboxResize(5, 4)", None),
    "resize_up": ("ImageBboxResize(20, 13, interp=2)", None),
    # a scalar fill fails in MXNet 2.0's numpy mode (np.full(val=...)); the tests compare it to (9, 9, 9)
    "expand": ("ImageBboxRandomExpand(p=1, max_ratio=3, fill=(9, 9, 9))", 3),
    "expand_rgb": ("ImageBboxRandomExpand(p=1, max_ratio=2, fill=(1, 2, 3), keep_ratio=False)", 4),
    "random_crop_1": ("ImageBboxRandomCropWithConstraints(p=1)", 1),
    "random_crop_2": ("ImageBboxRandomCropWithConstraints(p=1, min_scale=0.5, max_trial=10)", 2),
    "random_crop_3": ("ImageBboxRandomCropWithConstraints(p=1, constraints=((0.3, None), (None, 0.9)))", 5),
}


def bbox_fixtures() -> None:
    import random

    import mxnet as mx
    from mxnet.gluon.contrib.data.vision.transforms import bbox as B
    from mxnet.gluon.contrib.data.vision.transforms.bbox import utils as U

    mx.npx.set_np()
    image = (np.arange(8 * 10 * 3).reshape(8, 10, 3) * 7 % 256).astype("uint8")
    boxes = np.array([[1, 2, 5, 6, 7], [0, 0, 9, 7, 1], [6, 1, 9, 3, 2]], dtype="float32")
    data = {"input/image": image, "input/bbox": boxes}
    names = {n: getattr(B, n) for n in dir(B) if n.startswith("Image")}
    for case, (expr, seed) in BBOX_CASES.items():
        if seed is not None:
            random.seed(seed)
            np.random.seed(seed)
        block = eval(expr, {}, names)  # noqa: S307 (expressions from the table above)
        img, box = block(mx.np.array(image, dtype="uint8"), mx.np.array(boxes.copy(), dtype="float32"))
        data[f"{case}/image"] = img.asnumpy()
        data[f"{case}/bbox"] = box.asnumpy()
    other = np.array([[2, 1, 6, 4], [0, 3, 8, 8]], dtype="float64")
    data["utils/iou"] = U.bbox_iou(boxes.astype("float64"), other)
    data["utils/iou_offset"] = U.bbox_iou(boxes.astype("float64"), other, offset=1)
    data["utils/xywh_to_xyxy"] = U.bbox_xywh_to_xyxy(other)
    data["utils/xyxy_to_xywh"] = U.bbox_xyxy_to_xywh(other)
    data["utils/clip"] = U.bbox_clip_xyxy(np.array([[-2, 1, 12, 4], [3, -1, 5, 9]], dtype="float64"), 10, 8)
    data["utils/flip"] = U.bbox_flip(boxes, (10, 8), flip_x=True, flip_y=True)
    data["utils/crop_open"] = U.bbox_crop(boxes, (2, None, None, 4))
    data["params"] = np.array(json.dumps({c: {"transform": e, "seed": s} for c, (e, s) in BBOX_CASES.items()}))
    np.savez_compressed(OUT / "bbox.npz", **data)
    print(f"wrote {len(BBOX_CASES)} bbox cases to {OUT / 'bbox.npz'}")


if __name__ == "__main__":
    main()
    bbox_fixtures()
