"""mx.image functions, augmenters and ImageIter against MXNet 2.0 fixtures
(tools/make_mx_image_fixtures.py), NumPy and hand-computed values."""
import json
import random
from pathlib import Path

import numpy as np
import pytest

import mxjax as mx
from mxjax import image
from mxjax.base import MXNetError

FIX = Path(__file__).parent / "../fixtures/mx_image"
CASES = np.load(FIX / "cases.npz")
DUMPS = json.loads((FIX / "dumps.json").read_text())
IMG = CASES["img"]  # (13, 17, 3) uint8


def close_u8(got, want, tol=1):
    """uint8 images: same shape, within ``tol`` grey levels (OpenCV rounds in fixed point)."""
    got = got.asnumpy() if hasattr(got, "asnumpy") else np.asarray(got)
    assert got.shape == want.shape
    assert np.abs(got.astype(np.int32) - want.astype(np.int32)).max() <= tol


def seeded(seed):
    random.seed(seed)
    np.random.seed(seed)


# ----------------------------------------------------------------------------- decoding

def test_imdecode_png_matches_mxnet():
    data = (FIX / "img.png").read_bytes()
    rgb = image.imdecode(data)
    assert isinstance(rgb, mx.np.ndarray) and rgb.dtype == np.uint8
    np.testing.assert_array_equal(rgb.asnumpy(), CASES["decode_rgb"])
    np.testing.assert_array_equal(image.imdecode(data, to_rgb=0).asnumpy(), CASES["decode_bgr"])
    np.testing.assert_array_equal(image.imdecode(bytearray(data), flag=0).asnumpy(), CASES["decode_gray"])
    as_array = np.frombuffer(data, np.uint8)
    np.testing.assert_array_equal(image.imdecode(as_array).asnumpy(), IMG)
    np.testing.assert_array_equal(image.imdecode(mx.nd.array(as_array, dtype="uint8")).asnumpy(), IMG)


def test_imdecode_and_imread_into_out():
    buf = mx.np.zeros((13, 17, 3), dtype="uint8")
    assert image.imdecode((FIX / "img.png").read_bytes(), out=buf) is buf
    np.testing.assert_array_equal(buf.asnumpy(), IMG)
    buf = mx.np.zeros((13, 17, 3), dtype="uint8")
    assert image.imread(str(FIX / "img.png"), to_rgb=False, out=buf) is buf
    np.testing.assert_array_equal(buf.asnumpy(), IMG[..., ::-1])


def test_imdecode_legacy_mode_gives_ndarray():
    mx.npx.reset_np()
    out = image.imdecode((FIX / "img.png").read_bytes())
    assert type(out) is mx.nd.NDArray and out.shape == (13, 17, 3)


def test_imdecode_bad_input():
    with pytest.raises(ValueError, match="imdecode"):
        image.imdecode("not bytes")
    with pytest.raises(MXNetError, match="imdecode"):
        image.imdecode(b"not an image")


def test_imread(tmp_path):
    out = image.imread(str(FIX / "img.png"))
    np.testing.assert_array_equal(out.asnumpy(), IMG)
    assert image.imread(str(FIX / "img.png"), flag=0).shape == (13, 17, 1)
    with pytest.raises(MXNetError, match="imread"):
        image.imread(str(tmp_path / "missing.png"))


# ----------------------------------------------------------------------------- resize and pad

@pytest.mark.parametrize("interp", range(5))
@pytest.mark.parametrize("w,h", [(29, 23), (9, 7), (25, 6)])
def test_imresize_matches_opencv(interp, w, h):
    out = image.imresize(mx.np.array(IMG, dtype="uint8"), w, h, interp=interp)
    close_u8(out, CASES[f"imresize_u8_{w}x{h}_{interp}"])
    out = image.imresize(mx.nd.array(IMG, dtype="float32"), w, h, interp)
    assert type(out) is mx.nd.NDArray
    np.testing.assert_allclose(out.asnumpy(), CASES[f"imresize_f32_{w}x{h}_{interp}"], atol=1e-3)


def test_imresize_default_is_bilinear_and_out():
    src = mx.np.array(IMG, dtype="uint8")
    out = mx.np.zeros((7, 9, 3), dtype="uint8")
    assert image.imresize(src, 9, 7, out=out) is out
    close_u8(out, CASES["imresize_u8_9x7_1"])


@pytest.mark.parametrize("interp", [9, 10, 6, -1])
def test_imresize_rejects_unknown_interp(interp):
    with pytest.raises(MXNetError, match="imresize.*interp"):
        image.imresize(mx.np.array(IMG), 4, 4, interp=interp)


def test_imresize_bad_shapes():
    with pytest.raises(MXNetError, match="imresize.*shape \\(13, 17\\)"):
        image.imresize(mx.np.array(IMG[..., 0]), 4, 4)
    with pytest.raises(MXNetError, match="imresize.*positive"):
        image.imresize(mx.np.array(IMG), 0, 4)


@pytest.mark.parametrize("size", [5, 20])
@pytest.mark.parametrize("interp", [0, 1, 2, 3, 4, 9])
def test_resize_short_matches_mxnet(size, interp):
    close_u8(image.resize_short(mx.np.array(IMG, dtype="uint8"), size, interp=interp),
             CASES[f"resize_short_{size}_{interp}"])


def test_resize_short_errors():
    with pytest.raises(MXNetError, match="resize_short"):
        image.resize_short(mx.np.array(IMG[0]), 4)
    with pytest.raises(ValueError, match="resize_short.*interp"):
        image.resize_short(mx.np.array(IMG), 4, interp=7)


def test_scale_down_hand_values():
    assert image.scale_down((640, 480), (720, 120)) == (640, 106)
    assert image.scale_down((100, 50), (80, 100)) == (40, 50)
    assert image.scale_down((100, 100), (30, 40)) == (30, 40)


@pytest.mark.parametrize("kind", range(5))
def test_copy_make_border_matches_opencv(kind):
    out = image.copyMakeBorder(mx.nd.array(IMG, dtype="uint8"), 2, 1, 3, 4, type=kind, values=(10, 20, 30))
    assert type(out) is mx.nd.NDArray
    np.testing.assert_array_equal(out.asnumpy(), CASES[f"border_{kind}"])


def test_copy_make_border_value_np_kind_and_numpy_oracle():
    out = image.copyMakeBorder(mx.np.array(IMG, dtype="uint8"), 1, 2, 2, 1, value=7)
    assert isinstance(out, mx.np.ndarray)
    np.testing.assert_array_equal(out.asnumpy(), CASES["border_value"])
    src = IMG.astype(np.float32)
    out = image.copyMakeBorder(mx.np.array(src), 3, 0, 1, 2, type=4)
    np.testing.assert_array_equal(out.asnumpy(), np.pad(src, ((3, 0), (1, 2), (0, 0)), mode="reflect"))


def test_copy_make_border_errors():
    with pytest.raises(MXNetError, match="copyMakeBorder.*type=7"):
        image.copyMakeBorder(mx.np.array(IMG), 1, 1, 1, 1, type=7)
    with pytest.raises(MXNetError, match="copyMakeBorder.*>= 0"):
        image.copyMakeBorder(mx.np.array(IMG), -1, 1, 1, 1)


# ----------------------------------------------------------------------------- crops

def test_fixed_crop_is_slicing():
    src = mx.np.array(IMG)
    np.testing.assert_array_equal(image.fixed_crop(src, 2, 3, 8, 6).asnumpy(), IMG[3:9, 2:10])
    close_u8(image.fixed_crop(src, 2, 3, 8, 6, size=(5, 4), interp=3), CASES["fixed_crop"])


def test_fixed_crop_outside_raises():
    with pytest.raises(ValueError, match="fixed_crop.*20x5"):
        image.fixed_crop(mx.np.array(IMG), 0, 0, 20, 5)
    with pytest.raises(ValueError, match="fixed_crop"):
        image.fixed_crop(mx.np.array(IMG), -1, 0, 2, 2)


def test_fixed_crop_auto_interp_picks_by_direction():
    src = mx.np.array(IMG)
    for size, code in (((16, 12), 2), ((3, 2), 3), ((16, 2), 1)):
        np.testing.assert_array_equal(image.fixed_crop(src, 1, 1, 8, 6, size=size, interp=9).asnumpy(),
                                      image.imresize(src[1:7, 1:9], *size, interp=code).asnumpy())


def test_random_interp_is_seeded_choice():
    src = mx.np.array(IMG)
    for seed in range(3):
        random.seed(seed)
        code = random.randint(0, 4)
        random.seed(seed)
        np.testing.assert_array_equal(image.fixed_crop(src, 0, 0, 8, 6, size=(5, 9), interp=10).asnumpy(),
                                      image.imresize(src[0:6, 0:8], 5, 9, interp=code).asnumpy())


@pytest.mark.parametrize("seed", range(4))
def test_random_crops_match_mxnet_with_seed(seed):
    src = mx.np.array(IMG, dtype="uint8")
    for name, call in (("random_crop", lambda: image.random_crop(src, (6, 5))),
                       ("random_crop_up", lambda: image.random_crop(src, (30, 20))),
                       ("random_size_crop", lambda: image.random_size_crop(src, (8, 8), (0.3, 0.9), (0.75, 1.333)))):
        random.seed(seed)
        out, rect = call()
        assert rect == tuple(CASES[f"{name}_rect_{seed}"])
        close_u8(out, CASES[f"{name}_{seed}"])


def test_random_crop_window_is_a_slice():
    src = mx.np.array(IMG)
    for seed in range(5):
        random.seed(seed)
        out, (x0, y0, w, h) = image.random_crop(src, (5, 4))
        np.testing.assert_array_equal(out.asnumpy(), IMG[y0:y0 + h, x0:x0 + w])


def test_center_crop_matches_mxnet():
    src = mx.np.array(IMG, dtype="uint8")
    out, rect = image.center_crop(src, (7, 9))
    assert rect == tuple(CASES["center_crop_rect"]) == (5, 2, 7, 9)
    np.testing.assert_array_equal(out.asnumpy(), IMG[2:11, 5:12])
    out, rect = image.center_crop(src, (40, 20), interp=1)
    assert rect == tuple(CASES["center_crop_up_rect"])
    close_u8(out, CASES["center_crop_up"])


def test_crop_errors():
    with pytest.raises(ValueError, match="center_crop.*size"):
        image.center_crop(mx.np.array(IMG), (0, 3))
    with pytest.raises(MXNetError, match="random_crop.*shape"):
        image.random_crop(mx.np.array(IMG[0]), (3, 3))
    with pytest.raises(TypeError, match="random_size_crop.*bogus"):
        image.random_size_crop(mx.np.array(IMG), (3, 3), 0.5, (1, 1), bogus=1)


def test_random_size_crop_min_area_deprecated():
    random.seed(0)
    with pytest.warns(DeprecationWarning, match="min_area"):
        out, _ = image.random_size_crop(mx.np.array(IMG), (4, 4), None, (0.8, 1.2), min_area=0.5)
    assert out.shape == (4, 4, 3)


def test_color_normalize_numpy_oracle_in_place():
    src = mx.np.array(IMG, dtype="float32")
    mean, std = np.array([10.0, 20.0, 30.0]), np.array([2.0, 4.0, 8.0])
    out = image.color_normalize(src, mx.nd.array(mean), mx.np.array(std))
    assert out is src
    np.testing.assert_allclose(out.asnumpy(), (IMG - mean) / std, rtol=1e-6)
    legacy = mx.nd.array(IMG, dtype="float32")
    np.testing.assert_allclose(image.color_normalize(legacy, mean).asnumpy(), IMG - mean, rtol=1e-6)


# ----------------------------------------------------------------------------- augmenters

AUG_FACTORIES = {
    "brightness": lambda: image.BrightnessJitterAug(0.4),
    "contrast": lambda: image.ContrastJitterAug(0.4),
    "saturation": lambda: image.SaturationJitterAug(0.4),
    "hue": lambda: image.HueJitterAug(0.4),
    "colorjitter": lambda: image.ColorJitterAug(0.3, 0.3, 0.3),
    "lighting": lambda: image.LightingAug(0.5, np.array([55.46, 4.794, 1.148]),
                                          np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                                                    [-0.5836, -0.6948, 0.4203]])),
    "gray": lambda: image.RandomGrayAug(0.5),
    "flip": lambda: image.HorizontalFlipAug(0.5),
    "normalize": lambda: image.ColorNormalizeAug(mx.nd.array([100.0, 110.0, 120.0]), mx.nd.array([50.0, 60.0, 70.0])),
    "resize": lambda: image.ResizeAug(9, interp=1),
    "forceresize": lambda: image.ForceResizeAug((11, 5), interp=9),
    "randomcrop": lambda: image.RandomCropAug((6, 6), interp=1),
    "randomsizedcrop": lambda: image.RandomSizedCropAug((7, 5), 0.2, (0.5, 2.0), interp=1),
    "centercrop": lambda: image.CenterCropAug((10, 4), interp=1),
    "cast": lambda: image.CastAug("float16"),
}


@pytest.mark.parametrize("name", sorted(AUG_FACTORIES))
def test_augmenter_matches_mxnet(name):
    assert AUG_FACTORIES[name]().dumps() == DUMPS[name]
    for make in (mx.np.array, mx.nd.array):
        aug = AUG_FACTORIES[name]()  # RandomOrderAug's shuffles carry over between calls
        for seed in range(3):
            seeded(seed)
            out = aug(make(IMG, dtype="float32"))
            assert type(out) is (mx.np.ndarray if make is mx.np.array else mx.nd.NDArray)
            want = CASES[f"aug_{name}_{seed}"]
            assert out.dtype == want.dtype
            np.testing.assert_allclose(out.asnumpy().astype(np.float64), want, atol=1.01 if "crop" in name
                                       or "resize" in name else 2e-3, rtol=1e-3)


def test_sequential_and_create_augmenter_dumps():
    seq = image.SequentialAug([image.CastAug("float16"), image.HorizontalFlipAug(0.5)])
    assert seq.dumps() == DUMPS["sequential"]
    assert [a.dumps() for a in image.CreateAugmenter((3, 8, 8))] == DUMPS["create_default"]
    full = image.CreateAugmenter((3, 8, 10), resize=12, rand_crop=True, rand_resize=True, rand_mirror=True,
                                 mean=True, std=True, brightness=0.1, contrast=0.2, saturation=0.3, hue=0.4,
                                 pca_noise=0.5, rand_gray=0.6, inter_method=1)
    assert [a.dumps() for a in full] == DUMPS["create_full"]
    crop = image.CreateAugmenter((3, 6, 6), rand_crop=True, mean=np.array([1.0, 2.0, 3.0]), std=np.array([2.0]))
    assert [a.dumps() for a in crop] == DUMPS["create_crop"]


def test_sequential_applies_in_order():
    seq = image.SequentialAug([image.CenterCropAug((4, 4)), image.CastAug("float16")])
    out = seq(mx.np.array(IMG))
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out.asnumpy(), IMG[4:8, 6:10].astype(np.float16))


def test_create_augmenter_errors():
    with pytest.raises(AssertionError, match="CreateAugmenter.*mean"):
        image.CreateAugmenter((3, 4, 4), mean=[1, 2, 3])
    with pytest.raises(ValueError, match="CreateAugmenter.*rand_crop"):
        image.CreateAugmenter((3, 4, 4), rand_resize=True)


@pytest.mark.parametrize("aug", [image.BrightnessJitterAug(0), image.ContrastJitterAug(0),
                                 image.SaturationJitterAug(0), image.ColorJitterAug(0, 0, 0),
                                 image.RandomGrayAug(0), image.HorizontalFlipAug(0),
                                 image.LightingAug(0, np.ones(3), np.eye(3))])
def test_zero_magnitude_is_identity(aug):
    np.testing.assert_allclose(aug(mx.np.array(IMG, dtype="float32")).asnumpy(), IMG, atol=1e-3)


def test_hue_zero_is_nearly_identity():
    # MXNet's YIQ matrices are rounded, so a zero rotation is identity only to ~1%
    out = image.HueJitterAug(0)(mx.np.array(IMG, dtype="float32")).asnumpy()
    np.testing.assert_allclose(out, IMG, atol=0.02 * 255)


def test_brightness_range_and_spread():
    ratios = []
    for seed in range(60):
        random.seed(seed)
        ratios.append(float(image.BrightnessJitterAug(0.5)(mx.np.ones((2, 2, 3))).asnumpy()[0, 0, 0]))
    assert 0.5 <= min(ratios) < 0.7 and 1.3 < max(ratios) <= 1.5


def test_saturation_keeps_luma():
    luma = np.array([0.299, 0.587, 0.114])
    random.seed(1)
    out = image.SaturationJitterAug(0.8)(mx.np.array(IMG, dtype="float32")).asnumpy()
    np.testing.assert_allclose(out @ luma, IMG @ luma, rtol=1e-4, atol=1e-3)


def test_random_gray_and_flip_frequencies():
    random.seed(0)
    gray = image.RandomGrayAug(0.3)
    flip = image.HorizontalFlipAug(0.7)
    n_gray = n_flip = 0
    for _ in range(200):
        g = gray(mx.np.array(IMG[:2, :3], dtype="float32")).asnumpy()
        n_gray += bool(np.allclose(g[..., 0], g[..., 2]))
        f = flip(mx.np.array(IMG[:2, :3], dtype="float32")).asnumpy()
        n_flip += bool(np.array_equal(f, IMG[:2, :3][:, ::-1]))
    assert 40 < n_gray < 80 and 120 < n_flip < 160
    np.testing.assert_allclose(image.RandomGrayAug(1)(mx.np.array(IMG, dtype="float32")).asnumpy()[..., 1],
                               IMG @ np.array([0.21, 0.72, 0.07]), rtol=1e-5)


def test_random_order_uses_both_orders():
    class Add(image.Augmenter):
        def __call__(self, src):
            return src + 1

    class Double(image.Augmenter):
        def __call__(self, src):
            return src * 2

    aug = image.RandomOrderAug([Add(), Double()])
    results = set()
    for seed in range(20):
        random.seed(seed)
        results.add(float(aug(mx.np.zeros((1, 1, 3))).asnumpy()[0, 0, 0]))
    assert results == {1.0, 2.0}
    assert aug.dumps()[0] == "randomorderaug" and sorted(aug.dumps()[1]) == ['["add", {}]', '["double", {}]']


def test_random_sized_crop_aug_kwargs():
    with pytest.warns(DeprecationWarning):
        aug = image.RandomSizedCropAug((4, 4), None, (0.75, 1.33), min_area=0.3)
    assert aug.area == 0.3
    with pytest.raises(TypeError, match="RandomSizedCropAug.*bogus"):
        image.RandomSizedCropAug((4, 4), 0.3, (0.75, 1.33), bogus=True)


def test_base_augmenter_is_abstract():
    with pytest.raises(NotImplementedError):
        image.Augmenter(a=1)(mx.np.zeros((1, 1, 3)))
    dumped = image.Augmenter(a=mx.nd.array([1, 2]), b=np.arange(2)).dumps()
    assert dumped == '["augmenter", {"a": [1.0, 2.0], "b": [0, 1]}]'


# ----------------------------------------------------------------------------- ImageIter

REC, IDX = str(FIX / "tiny.rec"), str(FIX / "tiny.idx")
ITER_CASES = {
    "seq_pad": dict(batch_size=2, data_shape=(3, 8, 8), path_imgrec=REC),
    "seq_discard": dict(batch_size=2, data_shape=(3, 8, 8), path_imgrec=REC, last_batch_handle="discard"),
    "idx_rollover": dict(epochs=3, batch_size=2, data_shape=(3, 8, 8), path_imgrec=REC, path_imgidx=IDX,
                         last_batch_handle="roll_over"),
    "shuffle_aug": dict(seed=3, batch_size=3, data_shape=(3, 6, 7), path_imgrec=REC, path_imgidx=IDX, shuffle=True,
                        rand_crop=True, rand_mirror=True, resize=9, mean=True, std=True),
    "part1": dict(epochs=1, batch_size=2, data_shape=(3, 8, 8), path_imgrec=REC, path_imgidx=IDX, num_parts=2,
                  part_index=1),
    "lst": dict(epochs=1, batch_size=2, data_shape=(3, 8, 8), label_width=2, path_imglist=str(FIX / "tiny.lst"),
                path_root=str(FIX / "imgs")),
    "imglist": dict(epochs=1, batch_size=4, data_shape=(3, 8, 8), path_root=str(FIX / "imgs"),
                    imglist=[[1.0, "im0.png"], [2.0, "im3.png"], [0.0, "im4.png"]]),
}


@pytest.mark.parametrize("tag", sorted(ITER_CASES))
def test_image_iter_matches_mxnet(tag):
    kwargs = dict(ITER_CASES[tag])
    epochs, seed = kwargs.pop("epochs", 2), kwargs.pop("seed", 0)
    seeded(seed)
    it = image.ImageIter(**kwargs)
    assert it.provide_data == [("data", (kwargs["batch_size"],) + kwargs["data_shape"])]
    for epoch in range(epochs):
        count = 0
        for b, batch in enumerate(it):
            key = f"iter_{tag}_{epoch}_{b}"
            data, label = batch.data[0], batch.label[0]
            assert isinstance(data, mx.np.ndarray) and data.dtype == np.float32
            assert label.shape == it.provide_label[0][1]
            # one grey level of resize rounding, scaled by the ImageNet std where normalized
            np.testing.assert_allclose(data.asnumpy(), CASES[key + "_data"], atol=0.02 if tag == "shuffle_aug" else 0)
            np.testing.assert_array_equal(label.asnumpy(), CASES[key + "_label"])
            assert batch.pad == int(CASES[key + "_pad"])
            count += 1
        assert f"iter_{tag}_{epoch}_{count}_data" not in CASES.files
        it.reset()


def test_image_iter_legacy_mode_and_hard_reset():
    mx.npx.reset_np()
    it = image.ImageIter(2, (3, 8, 8), path_imgrec=REC, path_imgidx=IDX, last_batch_handle="roll_over")
    batches = list(it)
    assert len(batches) == 2 and type(batches[0].data[0]) is mx.nd.NDArray
    it.hard_reset()
    first = it.next()
    np.testing.assert_array_equal(first.data[0].asnumpy(), CASES["iter_idx_rollover_0_0_data"])


def test_image_iter_numpy_oracle_for_center_crop():
    it = image.ImageIter(1, (3, 6, 6), imglist=[[7.0, str(FIX / "img.png")]])
    batch = it.next()
    np.testing.assert_array_equal(batch.data[0].asnumpy()[0], IMG[3:9, 5:11].transpose(2, 0, 1))
    assert batch.label[0].asnumpy().tolist() == [7.0]


def test_image_iter_errors(tmp_path):
    with pytest.raises(AssertionError, match="ImageIter"):
        image.ImageIter(2, (3, 8, 8))
    with pytest.raises(ValueError, match="data_shape.*length 3"):
        image.ImageIter(2, (8, 8), path_imgrec=REC)
    with pytest.raises(ValueError, match="3-channel"):
        image.ImageIter(2, (1, 8, 8), path_imgrec=REC)
    with pytest.raises(ValueError, match="last_batch_handle"):
        image.ImageIter(2, (3, 8, 8), path_imgrec=REC, last_batch_handle="keep")
    with pytest.raises(AssertionError, match="path_imgidx"):
        image.ImageIter(2, (3, 8, 8), path_imgrec=REC, shuffle=True)
    with pytest.raises(AssertionError, match="dtype"):
        image.ImageIter(2, (3, 8, 8), path_imgrec=REC, dtype="uint8")
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"garbage")
    it = image.ImageIter(1, (3, 4, 4), imglist=[[0.0, str(broken)]])
    with pytest.raises(RuntimeError, match="Broken image filename: .*broken.png"):
        it.next()
    it = image.ImageIter(1, (3, 4, 4), imglist=[[[1.0, 2.0], str(FIX / "img.png")]])
    with pytest.raises(ValueError, match="ImageIter.*label_width=1"):
        it.next()


def test_namespace_matches_mxnet():
    names = {"imrotate", "random_rotate",
             "Augmenter", "BrightnessJitterAug", "CastAug", "CenterCropAug", "ColorJitterAug", "ColorNormalizeAug",
             "ContrastJitterAug", "CreateAugmenter", "ForceResizeAug", "HorizontalFlipAug", "HueJitterAug",
             "ImageIter", "LightingAug", "RandomCropAug", "RandomGrayAug", "RandomOrderAug", "RandomSizedCropAug",
             "ResizeAug", "SaturationJitterAug", "SequentialAug", "center_crop", "color_normalize", "copyMakeBorder",
             "fixed_crop", "imdecode", "imread", "imresize", "random_crop", "random_size_crop", "resize_short",
             "scale_down"}
    assert names <= set(image.__all__)
    assert image.image.ImageIter is image.ImageIter and image.det is image.detection
    assert issubclass(image.ImageIter, mx.io.DataIter)


# ----------------------------------------------------------------------------- host resize vs the operator

@pytest.mark.parametrize("interp", range(5))
def test_host_resize_agrees_with_resize_operator(interp):
    # mx.image resizes on the host; mx.nd.image.resize implements the same OpenCV rules in JAX
    rng = np.random.RandomState(interp)
    src = rng.randint(0, 256, (11, 14, 3)).astype(np.uint8)
    for w, h in ((20, 15), (6, 5), (9, 16)):
        host = image.imresize(mx.nd.array(src, dtype="uint8"), w, h, interp=interp).asnumpy()
        op = mx.nd.image.resize(mx.nd.array(src, dtype="uint8"), size=(w, h), interp=interp).asnumpy()
        assert np.abs(host.astype(int) - op.astype(int)).max() <= 1


def test_imresize_nearest_is_index_pick():
    src = np.arange(4 * 6 * 1, dtype=np.float32).reshape(4, 6, 1)
    out = image.imresize(mx.np.array(src), 3, 2, interp=0).asnumpy()
    np.testing.assert_array_equal(out, src[[0, 2]][:, [0, 2, 4]])


# ----------------------------------------------------------------------------- rotation

@pytest.mark.parametrize("key,kwargs", [("rot_30", {}), ("rot_30_in", {"zoom_in": True}),
                                        ("rot_30_out", {"zoom_out": True})])
def test_imrotate_matches_mxnet(key, kwargs):
    out = image.imrotate(mx.np.array(CASES["rot_src"]), 30, **kwargs)
    assert isinstance(out, mx.np.ndarray)
    np.testing.assert_allclose(out.asnumpy(), CASES[key], atol=1e-3)


def test_imrotate_batch_and_random_match_mxnet():
    src = CASES["rot_src"]
    batch = mx.nd.array(np.stack([src, src[:, ::-1]]))
    out = image.imrotate(batch, mx.nd.array([10, -45]))
    assert type(out) is mx.nd.NDArray
    np.testing.assert_allclose(out.asnumpy(), CASES["rot_batch"], atol=1e-3)
    np.random.seed(4)
    np.testing.assert_allclose(image.random_rotate(batch, (-30, 30), zoom_in=True).asnumpy(), CASES["rot_random"],
                               atol=1e-3)


def test_imrotate_half_turn_is_double_flip():
    src = CASES["rot_src"]
    np.testing.assert_allclose(image.imrotate(mx.np.array(src), 180).asnumpy(), src[:, ::-1, ::-1], atol=1e-3)
    np.testing.assert_allclose(image.imrotate(mx.np.array(src), 0).asnumpy(), src, atol=1e-4)


def test_imrotate_errors():
    src = mx.np.array(CASES["rot_src"])
    with pytest.raises(ValueError, match="imrotate.*zoom"):
        image.imrotate(src, 10, zoom_in=True, zoom_out=True)
    with pytest.raises(TypeError, match="imrotate.*float32"):
        image.imrotate(mx.np.array(IMG), 10)
    with pytest.raises(TypeError, match="imrotate.*scalar"):
        image.imrotate(src, [10])
    with pytest.raises(ValueError, match="imrotate.*2 images but 3"):
        image.imrotate(mx.np.stack([src, src]), np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="imrotate.*shape"):
        image.imrotate(mx.np.zeros((2, 2), dtype="float32"), np.array([1.0]))
