"""mx.image.detection against MXNet 2.0 fixtures (tools/make_mx_image_fixtures.py) and NumPy."""
import json
import random
from pathlib import Path

import numpy as np
import pytest

import mxjax as mx
from mxjax import image
from mxjax.image import detection as det

FIX = Path(__file__).parent / "../fixtures/mx_image"
CASES = np.load(FIX / "cases.npz")
DUMPS = json.loads((FIX / "dumps.json").read_text())
LABEL = CASES["det_label"]  # 3 objects: [class, xmin, ymin, xmax, ymax]
IMG = CASES["det_img"]  # (20, 24, 3) uint8


def make_augs():
    return {"crop": det.DetRandomCropAug(min_object_covered=0.3, area_range=(0.2, 1.0)),
            "pad": det.DetRandomPadAug(area_range=(1.2, 2.5), pad_val=(1, 2, 3)),
            "flip": det.DetHorizontalFlipAug(1.0)}


@pytest.mark.parametrize("name", ["crop", "pad", "flip"])
@pytest.mark.parametrize("make", [mx.np.array, mx.nd.array])
def test_det_augmenters_match_mxnet(name, make):
    aug = make_augs()[name]
    for seed in range(4):
        random.seed(seed)
        out, label = aug(make(IMG, dtype="float32"), LABEL.copy())
        assert type(out) is (mx.np.ndarray if make is mx.np.array else mx.nd.NDArray)
        np.testing.assert_array_equal(out.asnumpy(), CASES[f"det_{name}_{seed}_img"])
        np.testing.assert_allclose(label, CASES[f"det_{name}_{seed}_label"], rtol=1e-6)


def test_dumps_match_mxnet():
    augs = make_augs()
    augs["borrow"] = det.DetBorrowAug(image.CastAug())
    augs["select"] = det.DetRandomSelectAug([augs["flip"]], skip_prob=0.3)
    for name, aug in augs.items():
        assert aug.dumps() == DUMPS[f"det_{name}"]
    assert [a.dumps() for a in det.CreateDetAugmenter((3, 16, 16))] == DUMPS["det_create_default"]
    full = det.CreateDetAugmenter((3, 16, 16), resize=20, rand_crop=0.5, rand_pad=0.5, rand_gray=0.2, rand_mirror=True,
                                  mean=True, std=True, brightness=0.1, contrast=0.1, saturation=0.1, pca_noise=0.1,
                                  hue=0.1, inter_method=1)
    assert [a.dumps() for a in full] == DUMPS["det_create_full"]
    multi = det.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.5], aspect_ratio_range=(0.5, 2.0),
                                             skip_prob=0.2)
    assert multi.dumps() == DUMPS["det_multi"]
    assert len(multi.aug_list) == 2 and multi.aug_list[1].min_object_covered == 0.5


def test_flip_label_by_hand():
    label = np.array([[3, 0.1, 0.2, 0.4, 0.9]], dtype=np.float32)
    out, new = det.DetHorizontalFlipAug(1)(mx.np.array(IMG), label)
    np.testing.assert_allclose(new, [[3, 0.6, 0.2, 0.9, 0.9]], rtol=1e-6)
    np.testing.assert_array_equal(out.asnumpy(), IMG[:, ::-1])
    same, kept = det.DetHorizontalFlipAug(0)(mx.np.array(IMG), label.copy())
    np.testing.assert_array_equal(same.asnumpy(), IMG)
    np.testing.assert_allclose(kept, label)


def test_pad_places_image_and_boxes():
    aug = det.DetRandomPadAug(area_range=(1.5, 3.0), pad_val=(9, 8, 7))
    for seed in range(5):
        random.seed(seed)
        out, label = aug(mx.np.array(IMG, dtype="float32"), LABEL.copy())
        canvas = out.asnumpy()
        height, width = canvas.shape[:2]
        # locate the original image in the canvas from the first box's new position
        x0 = int(round(label[0, 1] * width - LABEL[0, 1] * IMG.shape[1]))
        y0 = int(round(label[0, 2] * height - LABEL[0, 2] * IMG.shape[0]))
        np.testing.assert_array_equal(canvas[y0:y0 + 20, x0:x0 + 24], IMG)
        mask = np.ones(canvas.shape[:2], bool)
        mask[y0:y0 + 20, x0:x0 + 24] = False
        np.testing.assert_array_equal(canvas[mask], np.broadcast_to([9, 8, 7], (mask.sum(), 3)))
        np.testing.assert_allclose((label[:, 3] - label[:, 1]) * width, (LABEL[:, 3] - LABEL[:, 1]) * 24, rtol=1e-5)


def test_crop_is_window_with_boxes_inside():
    aug = det.DetRandomCropAug(min_object_covered=0.5, area_range=(0.3, 0.8))
    for seed in range(5):
        random.seed(seed)
        out, label = aug(mx.np.array(IMG), LABEL.copy())
        window = out.asnumpy()
        h, w = window.shape[:2]
        hits = [(y, x) for y in range(21 - h) for x in range(25 - w) if np.array_equal(IMG[y:y + h, x:x + w], window)]
        assert hits and (h, w) != (20, 24)
        assert label.shape[1] == 5 and np.all((label[:, 1:] >= 0) & (label[:, 1:] <= 1))
        assert set(label[:, 0]) <= {0.0, 1.0, 2.0}


def test_invalid_ranges_warn_and_disable():
    with pytest.warns(UserWarning, match="DetRandomCropAug.*area_range"):
        crop = det.DetRandomCropAug(area_range=(0.8, 0.2))
    with pytest.warns(UserWarning, match="DetRandomPadAug.*area_range"):
        pad = det.DetRandomPadAug(area_range=(0.5, 1.0))
    for aug in (crop, pad):
        out, label = aug(mx.np.array(IMG), LABEL.copy())
        np.testing.assert_array_equal(out.asnumpy(), IMG)
        np.testing.assert_array_equal(label, LABEL)
    assert det.DetRandomCropAug(aspect_ratio_range=1.0).aspect_ratio_range == (1.0, 1.0)


def test_select_and_borrow():
    flip = det.DetHorizontalFlipAug(1.0)
    out, _ = det.DetRandomSelectAug([flip], skip_prob=1)(mx.np.array(IMG), LABEL.copy())
    np.testing.assert_array_equal(out.asnumpy(), IMG)
    assert det.DetRandomSelectAug([]).skip_prob == 1
    out, _ = det.DetRandomSelectAug(flip)(mx.np.array(IMG), LABEL.copy())
    np.testing.assert_array_equal(out.asnumpy(), IMG[:, ::-1])
    out, label = det.DetBorrowAug(image.CastAug("float16"))(mx.np.array(IMG), LABEL)
    assert out.dtype == np.float16 and label is LABEL
    with pytest.raises(TypeError, match="DetBorrowAug"):
        det.DetBorrowAug(flip)
    with pytest.raises(ValueError, match="DetRandomSelectAug"):
        det.DetRandomSelectAug([image.CastAug()])
    with pytest.raises(NotImplementedError):
        det.DetAugmenter()(IMG, LABEL)


def test_create_errors():
    with pytest.raises(AssertionError, match="CreateMultiRandCropAugmenter"):
        det.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.2], max_attempts=[1, 2, 3])
    with pytest.raises(ValueError, match="CreateDetAugmenter.*mean"):
        det.CreateDetAugmenter((3, 8, 8), mean=[1, 2, 3])


def test_image_det_iter_matches_mxnet():
    random.seed(0)
    it = det.ImageDetIter(2, (3, 8, 8), path_imgrec=str(FIX / "det.rec"), path_imgidx=str(FIX / "det.idx"))
    assert it.provide_label == [("label", tuple(CASES["detiter_provide_label"]))]
    batches = list(it)
    assert len(batches) == 2
    for b, batch in enumerate(batches):
        np.testing.assert_array_equal(batch.data[0].asnumpy(), CASES[f"detiter_{b}_data"])
        np.testing.assert_array_equal(batch.label[0].asnumpy(), CASES[f"detiter_{b}_label"])
        assert batch.pad == int(CASES[f"detiter_{b}_pad"])


def _list_iter(labels, **kwargs):
    imglist = [[*lab, str(FIX / "imgs" / f"im{i}.png")] for i, lab in enumerate(labels)]
    return det.ImageDetIter(len(labels), (3, 6, 6), imglist=imglist, **kwargs)


def test_image_det_iter_pads_labels_and_reshapes():
    one = [2, 5, 0, 0.1, 0.1, 0.5, 0.5]
    two = [2, 5, 1, 0.2, 0.2, 0.6, 0.7, 0, 0.0, 0.0, 0.3, 0.3]
    it = _list_iter([one, two])
    assert it.label_shape == (2, 5)
    label = it.next().label[0].asnumpy()
    np.testing.assert_allclose(label[0], [one[2:], [-1] * 5])
    np.testing.assert_allclose(label[1], np.reshape(two[2:], (2, 5)))
    it.reshape(label_shape=(4, 5))
    it.reset()
    assert it.next().label[0].shape == (2, 4, 5)
    with pytest.raises(ValueError, match="reduce the label count"):
        it.reshape(label_shape=(1, 5))
    with pytest.raises(ValueError, match="object width"):
        it.reshape(label_shape=(4, 6))
    other = _list_iter([one])
    assert it.sync_label_shape(other) is other and other.label_shape == (4, 5)


def test_image_det_iter_bad_labels():
    with pytest.raises(RuntimeError, match="Label shape is invalid"):
        _list_iter([[2, 5, 0, 0.1]])
    with pytest.raises(RuntimeError, match="inconsistent with annotation width"):
        _list_iter([[2, 5, 0, 0.1, 0.1, 0.5, 0.5, 0.9]])
    with pytest.raises(RuntimeError, match="no valid label"):
        _list_iter([[2, 5, 0, 0.5, 0.5, 0.1, 0.1]])


def test_draw_next_draws_boxes_on_bgr_images():
    one = [2, 5, 0, 0.25, 0.25, 0.75, 0.75]
    it = det.ImageDetIter(1, (3, 8, 8), imglist=[[*one, str(FIX / "imgs" / "im0.png")]],
                          path_root=None, mean=np.array([1.0, 2.0, 3.0]))
    drawn = list(it.draw_next(color=(255, 0, 0), thickness=1, mean=np.array([1.0, 2.0, 3.0])))
    assert len(drawn) == 1
    img = drawn[0]
    assert img.shape == (8, 8, 3) and img.dtype == np.uint8
    # the box outline (rows/cols 2..6) is the colour in BGR order; the inside is the image, in BGR
    np.testing.assert_array_equal(img[2, 2:7], np.broadcast_to([0, 0, 255], (5, 3)))
    np.testing.assert_array_equal(img[2:7, 6], np.broadcast_to([0, 0, 255], (5, 3)))
    it.reset()
    # CreateDetAugmenter's default: force-resize the whole image to 8x8 (bicubic)
    plain = image.imresize(image.imread(str(FIX / "imgs" / "im0.png")), 8, 8, interp=2).asnumpy()
    np.testing.assert_allclose(img[3:6, 3:6], plain[3:6, 3:6, ::-1], atol=1)
    with pytest.warns(UserWarning, match="draw_next"):
        assert len(list(it.draw_next(waitKey=1))) == 1
