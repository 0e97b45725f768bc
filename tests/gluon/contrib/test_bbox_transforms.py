"""gluon.contrib.data.vision.transforms.bbox: image + box transforms vs MXNet 2.0 fixtures."""
from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as onp
import pytest

import mxjax as mx
from mxjax.base import MXNetError
from mxjax.gluon.contrib.data.vision.transforms import bbox as B
from mxjax.gluon.contrib.data.vision.transforms.bbox import utils as U


UINT8_TOL = 1  # uint8 resize: OpenCV rounds in fixed point, one level at most


def _np(x: onp.ndarray):
    return mx.np.array(x, dtype=x.dtype)


BBOX = onp.load(Path(__file__).parent / "../../fixtures/transforms/bbox.npz")
BBOX_PARAMS = json.loads(str(BBOX["params"]))


def _bbox_block(expr: str):
    return eval(expr, {}, {n: getattr(B, n) for n in B.__all__})  # noqa: S307 (our fixture table)


@pytest.mark.parametrize("case", sorted(BBOX_PARAMS))
def test_bbox_transform_matches_mxnet(case):
    expr, seed = BBOX_PARAMS[case]["transform"], BBOX_PARAMS[case]["seed"]
    boxes = BBOX["input/bbox"]
    given = mx.np.array(boxes, dtype="float32")
    if seed is not None:
        random.seed(seed)
        onp.random.seed(seed)
    img, box = _bbox_block(expr)(_np(BBOX["input/image"]), given)
    assert isinstance(img, mx.np.ndarray) and isinstance(box, mx.np.ndarray)
    want = BBOX[case + "/image"]
    assert img.shape == want.shape and img.dtype == want.dtype
    tolerance = UINT8_TOL if case.startswith("resize") else 0  # OpenCV's fixed-point resize: one level
    assert onp.abs(img.asnumpy().astype(int) - want).max() <= tolerance
    onp.testing.assert_allclose(box.asnumpy(), BBOX[case + "/bbox"], rtol=1e-6)
    assert onp.array_equal(given.asnumpy(), boxes)  # the caller's boxes are never modified (MXNet's flip does)


def test_bbox_expand_scalar_fill_and_legacy_arrays():
    image, boxes = BBOX["input/image"], BBOX["input/bbox"]
    random.seed(3)
    img, box = _bbox_block("ImageBboxRandomExpand(p=1, max_ratio=3, fill=9)")(_np(image), mx.np.array(boxes))
    onp.testing.assert_array_equal(img.asnumpy(), BBOX["expand/image"])  # the (9, 9, 9) fixture
    onp.testing.assert_allclose(box.asnumpy(), BBOX["expand/bbox"])
    legacy_img, legacy_box = _bbox_block("ImageBboxRandomFlipLeftRight(1)")(mx.nd.array(image, dtype="uint8"),
                                                                        mx.nd.array(boxes))
    assert type(legacy_box) is mx.nd.NDArray and type(legacy_img) is mx.nd.NDArray
    onp.testing.assert_array_equal(legacy_box.asnumpy(), BBOX["flip/bbox"])
    with pytest.raises(ValueError, match="fill has 2 values for 3 channels"):
        _bbox_block("ImageBboxRandomExpand(p=1, fill=(1, 2))")(_np(image), mx.np.array(boxes))


def test_bbox_crop_window_on_the_border_and_bad_arguments():
    image, boxes = BBOX["input/image"], BBOX["input/bbox"]
    img, box = _bbox_block("ImageBboxCrop((2, 0, 8, 8))")(_np(image), mx.np.array(boxes))
    assert onp.array_equal(img.asnumpy(), image[:, 2:])  # MXNet 2.0 skips a window ending on the border
    bbox_crop = U.bbox_crop
    onp.testing.assert_allclose(box.asnumpy(), bbox_crop(boxes, (2, 0, 8, 8), False))
    img, box = _bbox_block("ImageBboxCrop((4, 0, 8, 8))")(_np(image), mx.np.array(boxes))
    assert img.shape == image.shape  # a window past the border leaves both alone
    with pytest.raises(AssertionError):
        _bbox_block("ImageBboxCrop((1, 1, 0, 3))")
    with pytest.raises(AssertionError, match=r"\(N, 4\+\)"):
        _bbox_block("ImageBboxRandomFlipLeftRight(1)")(_np(image), mx.np.zeros((3, 3)))
    with pytest.raises(NotImplementedError, match="ImageBboxResize"):
        _bbox_block("ImageBboxResize(4, 4)")(_np(onp.stack([image, image])), mx.np.array(boxes))


def test_bbox_utils_match_mxnet():
    boxes = BBOX["input/bbox"]
    other = onp.array([[2, 1, 6, 4], [0, 3, 8, 8]], dtype="float64")
    onp.testing.assert_allclose(U.bbox_iou(boxes.astype("float64"), other), BBOX["utils/iou"])
    onp.testing.assert_allclose(U.bbox_iou(boxes.astype("float64"), other, offset=1), BBOX["utils/iou_offset"])
    onp.testing.assert_array_equal(U.bbox_xywh_to_xyxy(other), BBOX["utils/xywh_to_xyxy"])
    onp.testing.assert_array_equal(U.bbox_xyxy_to_xywh(other), BBOX["utils/xyxy_to_xywh"])
    clipped = U.bbox_clip_xyxy(onp.array([[-2, 1, 12, 4], [3, -1, 5, 9]], dtype="float64"), 10, 8)
    onp.testing.assert_array_equal(clipped, BBOX["utils/clip"])
    onp.testing.assert_array_equal(U.bbox_flip(boxes, (10, 8), flip_x=True, flip_y=True), BBOX["utils/flip"])
    onp.testing.assert_array_equal(U.bbox_crop(boxes, (2, None, None, 4)), BBOX["utils/crop_open"])
    assert U.bbox_xywh_to_xyxy([1, 2, 3, 4]) == (1, 2, 3, 5) and U.bbox_xyxy_to_xywh((1, 2, 3, 5)) == (1, 2, 3, 4)
    with pytest.raises(IndexError):
        U.bbox_iou(other[:, :3], other)
    with pytest.raises(TypeError, match="bbox_xywh_to_xyxy"):
        U.bbox_xywh_to_xyxy("box")


def test_bbox_random_crop_keeps_box_centres():
    bbox_random_crop_with_constraints = U.bbox_random_crop_with_constraints
    boxes = onp.array([[10, 10, 40, 30, 1], [50, 20, 90, 70, 2]], dtype="float64")
    random.seed(0)
    onp.random.seed(0)
    for _ in range(20):
        kept, (x, y, w, h) = bbox_random_crop_with_constraints(boxes, (100, 80))
        assert 0 <= x and 0 <= y and x + w <= 100 and y + h <= 80 and len(kept) >= 1
        assert onp.all(kept[:, :4] >= 0) and onp.all(kept[:, [0, 2]] <= w) and onp.all(kept[:, [1, 3]] <= h)
        assert set(kept[:, 4]) <= {1, 2}
    # a crop as large as the image has one position (Python's randrange(0) would raise)
    kept, window = bbox_random_crop_with_constraints(boxes, (100, 80), min_scale=1, max_scale=1,
                                                     max_aspect_ratio=1, constraints=((None, None),))
    assert window == (0, 0, 100, 80) and onp.array_equal(kept, boxes)
