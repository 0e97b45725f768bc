"""``mx.nd.image`` / ``mx.npx.image`` / ``mx.sym.image`` and ``mx.nd.imdecode`` against MXNet 2.0
(fixtures from ``tools/make_image_fixtures.py``).

Exact: to_tensor, normalize, crop, flips, brightness, contrast, saturation, lighting, random_crop
(fixed offsets), nearest resize, uint8 area downscaling, PNG decoding.  Within tolerance: float
resize (float32 rounding of OpenCV's coefficients), uint8 resize in the other modes and uint8 hue
(OpenCV's fixed-point arithmetic: at most 1 level), JPEG decoding (another IDCT: 2 levels).
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import mxjax as mx
from mxjax.base import MXNetError

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "image"
DATA = np.load(FIXTURES / "cases.npz")
PARAMS = json.loads(str(DATA["params"]))
I = mx.nd.image


def _run(name, namespace=I, cls=mx.nd.array):
    params = dict(PARAMS[name])
    op = params.pop("op")
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
    x = DATA[f"{name}/in"]
    return getattr(namespace, op)(cls(x, dtype=x.dtype), **kwargs).asnumpy(), DATA[f"{name}/out"]


def _tolerance(name, want):
    """(atol, rtol) for a case: 0 where mxjax reproduces MXNet bit for bit."""
    if name.startswith("resize") and not name.endswith("_0") and want.dtype == np.uint8:
        exact = ("_down_3", "_half_3")  # OpenCV's uint8 box filter rounds as we do
        return (0, 0) if name.endswith(exact) else (1, 0)
    if name.startswith("resize") and want.dtype != np.uint8:
        return (2e-4, 1e-6)
    if name.startswith("hue"):
        return (1, 0) if want.dtype == np.uint8 else (2e-4, 1e-6)
    if want.dtype == np.float32:
        return (1e-6, 1e-6)
    return (0, 0)


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_matches_mxnet(name):
    got, want = _run(name)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    atol, rtol = _tolerance(name, want)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), atol=atol, rtol=rtol)


@pytest.mark.parametrize("name", ["to_tensor_nhwc", "normalize_u8", "resize_f32_up_1", "crop_nhwc", "lighting_u8"])
def test_npx_forms(name):
    got, want = _run(name, mx.npx.image, mx.np.array)
    atol, rtol = _tolerance(name, want)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), atol=atol, rtol=rtol)


def test_symbol_forms():
    x = mx.sym.var("x")
    s = mx.sym.image.resize(x, size=(5, 4))
    assert json.loads(s.tojson())["nodes"][1]["op"] == "_image_resize"
    assert s.infer_shape(x=(7, 9, 3))[1] == [(4, 5, 3)]
    img = DATA["resize_f32_down_1/in"]
    out = s.eval(x=mx.nd.array(img))[0].asnumpy()
    np.testing.assert_allclose(out, DATA["resize_f32_down_1/out"], atol=2e-4)
    t = mx.sym.npx.image.to_tensor(x)
    assert json.loads(t.tojson())["nodes"][1]["op"] == "_npx__image_to_tensor"
    assert "to_tensor" in dir(mx.sym.image) and "to_tensor" in dir(mx.sym.npx.image)
    assert not [n for n in dir(mx.sym.npx) if n.startswith("_image_")]


def test_names():
    names = ["to_tensor", "normalize", "resize", "crop", "random_crop", "random_resized_crop", "flip_left_right",
             "flip_top_bottom", "random_flip_left_right", "random_flip_top_bottom", "random_brightness",
             "random_contrast", "random_saturation", "random_hue", "random_color_jitter", "adjust_lighting",
             "random_lighting"]
    for name in names:
        assert getattr(mx.nd.image, name).__name__ == name
        assert callable(getattr(mx.npx.image, name)) and callable(getattr(mx.sym.image, name))
    assert mx.nd.image.resize.op.name == "_image_resize"
    assert mx.npx.image.resize.op is mx.operator.get_op("_npx__image_resize")


# ----------------------------------------------------------------------------- random ops

def _u8(shape=(6, 8, 3), seed=0):
    return mx.nd.array(np.random.default_rng(seed).integers(0, 256, shape), dtype="uint8")


def test_random_flips_forced():
    x = _u8()
    a = x.asnumpy()
    np.testing.assert_array_equal(I.random_flip_left_right(x, p=1.0).asnumpy(), a[:, ::-1])
    np.testing.assert_array_equal(I.random_flip_left_right(x, p=0.0).asnumpy(), a)
    np.testing.assert_array_equal(I.random_flip_top_bottom(x, p=1.0).asnumpy(), a[::-1])
    np.testing.assert_array_equal(I.random_flip_top_bottom(x, p=0.0).asnumpy(), a)


def test_random_flip_probability_and_seed():
    x = _u8()
    a = x.asnumpy()
    mx.random.seed(3)
    flips = [bool((I.random_flip_left_right(x, p=0.3).asnumpy() == a[:, ::-1]).all()) for _ in range(200)]
    assert 40 <= sum(flips) <= 80
    mx.random.seed(3)
    again = [bool((I.random_flip_left_right(x, p=0.3).asnumpy() == a[:, ::-1]).all()) for _ in range(20)]
    assert again == flips[:20]


def test_random_brightness_range():
    x = mx.nd.ones((4, 5, 3)) * 10
    mx.random.seed(0)
    factors = [float(I.random_brightness(x, 0.5, 1.5).asnumpy()[0, 0, 0]) / 10 for _ in range(100)]
    assert 0.5 <= min(factors) and max(factors) <= 1.5 and np.std(factors) > 0.2
    out = I.random_brightness(_u8(), 3.0, 3.0)
    assert out.dtype == np.uint8 and out.asnumpy().max() == 255  # saturated, not wrapped


def test_random_color_ops_shapes_and_identity():
    x = _u8()
    for fn in (I.random_contrast, I.random_saturation, I.random_brightness):
        out = fn(x, 1.0, 1.0)
        assert out.shape == x.shape and out.dtype == np.uint8
        np.testing.assert_array_equal(out.asnumpy(), x.asnumpy())
    np.testing.assert_allclose(I.random_hue(x, 0.0, 0.0).asnumpy(), x.asnumpy(), atol=1)
    np.testing.assert_array_equal(I.random_color_jitter(x, 0, 0, 0, 0).asnumpy(), x.asnumpy())
    jittered = I.random_color_jitter(x.astype("float32"), 0.3, 0.3, 0.3, 0.1)
    assert jittered.shape == x.shape and jittered.dtype == np.float32


def test_random_lighting_distribution():
    x = mx.nd.zeros((1, 1, 3)) + 100
    mx.random.seed(1)
    shifts = np.stack([I.random_lighting(x, alpha_std=0.1).asnumpy().ravel() - 100 for _ in range(300)])
    # the shift is eig @ alpha with alpha ~ N(0, 0.1): its spread is dominated by 55.46 * 0.1 * |v0|
    assert abs(shifts.mean()) < 1.0 and 2.5 < shifts[:, 0].std() < 4.0
    np.testing.assert_array_equal(I.random_lighting(x, alpha_std=0.0).asnumpy(), x.asnumpy())


def test_random_crop_offsets_are_uniform():
    yy, xx = np.meshgrid(np.arange(10), np.arange(12), indexing="ij")
    img = mx.nd.array(np.stack([yy, xx, xx], -1).astype("float32"))
    mx.random.seed(5)
    corners = {tuple(I.random_crop(img, width=4, height=3).asnumpy()[0, 0, :2]) for _ in range(60)}
    assert len(corners) > 15 and all(0 <= y <= 7 and 0 <= x <= 8 for y, x in corners)


def test_random_resized_crop():
    x = _u8((2, 20, 24, 3))
    mx.random.seed(2)
    out = I.random_resized_crop(x, 8, 6)
    assert out.shape == (2, 6, 8, 3) and out.dtype == np.uint8
    # area (1, 1) and ratio matching the image: the whole image, resized
    whole = I.random_resized_crop(x[0], 12, 10, area=(1.0, 1.0), ratio=(1.2, 1.2), interp=0)
    np.testing.assert_array_equal(whole.asnumpy(), I.resize(x[0], (12, 10), interp=0).asnumpy())
    # nothing fits (area > 1): the centred fallback window
    fallback = I.random_resized_crop(x[0], 8, 6, area=(4.0, 4.0), interp=0)
    np.testing.assert_array_equal(fallback.asnumpy(), x[0].asnumpy()[7:13, 8:16])


# ----------------------------------------------------------------------------- decoding

def test_imdecode_png_exact_and_jpeg_close():
    png = (FIXTURES / "tiny.png").read_bytes()
    np.testing.assert_array_equal(mx.npx.image.imdecode(png).asnumpy(), DATA["png/rgb"])
    np.testing.assert_array_equal(mx.npx.image.imdecode(png, to_rgb=False).asnumpy(), DATA["png/bgr"])
    np.testing.assert_array_equal(mx.npx.image.imdecode(png, flag=0).asnumpy(), DATA["png/gray"])
    jpg = mx.npx.image.imdecode((FIXTURES / "tiny.jpg").read_bytes()).asnumpy()
    assert jpg.dtype == np.uint8
    np.testing.assert_allclose(jpg.astype(int), DATA["jpg/rgb"].astype(int), atol=2)
    read = mx.npx.image.imread(str(FIXTURES / "tiny.png"))
    np.testing.assert_array_equal(read.asnumpy(), DATA["png/rgb"])


def test_nd_imdecode_legacy_layout():
    png = (FIXTURES / "tiny.png").read_bytes()
    out = mx.nd.imdecode(png)
    assert isinstance(out, mx.nd.NDArray) and out.dtype == np.float32
    np.testing.assert_array_equal(out.asnumpy(), DATA["png/bgr"].transpose(2, 0, 1))
    clipped = mx.nd.imdecode(png, clip_rect=(1, 2, 5, 6), mean=mx.nd.ones((3, 4, 4)))
    np.testing.assert_array_equal(clipped.asnumpy(), DATA["png/bgr"][2:6, 1:5].transpose(2, 0, 1) - 1.0)
    assert mx.nd.imdecode(png, channels=1).shape == (1, 6, 9)


# ----------------------------------------------------------------------------- errors

@pytest.mark.parametrize("call, match", [
    (lambda: I.to_tensor(mx.nd.ones((4, 5))), r"to_tensor: expected a HWC \(3-D\) or NHWC \(4-D\) image, got shape \(4, 5\)"),
    (lambda: I.normalize(mx.nd.ones((3, 2, 2)), mean=(1, 2), std=(1,)), r"normalize: mean must have 1 or 3 elements"),
    (lambda: I.normalize(mx.nd.ones((4, 2, 2)), mean=(1,), std=(1,)), r"normalize: .*1 or 3 channels.*\(4, 2, 2\)"),
    (lambda: I.crop(mx.nd.ones((4, 5, 3)), 3, 3, 4, 4), r"crop: a 4x4 .* does not fit the image \(4, 5, 3\)"),
    (lambda: I.resize(mx.nd.ones((4, 5, 3)), 0), r"resize: size must be positive"),
    (lambda: I.resize(mx.nd.ones((4, 5, 3), dtype="float16"), 3), r"resize: float16"),
    (lambda: I.resize(mx.nd.ones((4, 5, 3)), 3, interp=7), r"resize: interp=7 is not supported"),
    (lambda: I.flip_left_right(mx.nd.ones((2, 4, 5, 3))), r"flip_left_right: expected a HWC \(3-D\) image"),
    (lambda: I.random_brightness(mx.nd.ones((4, 5, 3)), 1.5, 0.5), r"random_brightness: expected 0 <= min_factor"),
    (lambda: I.adjust_lighting(mx.nd.ones((4, 5, 3)), alpha=(1, 2)), r"adjust_lighting: alpha must hold 3 values"),
    (lambda: mx.npx.image.imdecode(b"not an image"), r"imdecode: decoding failed, 12 bytes"),
])
def test_errors(call, match):
    with pytest.raises(MXNetError, match=match):
        call()
