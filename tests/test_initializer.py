"""mx.init: each initializer against a NumPy reference, name dispatch, JSON round trips and bad input."""
from __future__ import annotations

import json
import math
import warnings

import numpy as onp
import pytest
from oracle import compilations

import mxjax as mx
from mxjax import initializer as minit
from mxjax.base import MXNetError

D = minit.InitDesc


def fresh(shape, dtype="float32", legacy=False):
    """A NaN-filled array, so a value the initializer forgot to write shows up."""
    values = onp.full(shape, onp.nan if onp.dtype(dtype).kind == "f" else 7, dtype)
    return mx.nd.array(values, dtype=dtype) if legacy else mx.np.array(values, dtype=dtype)


def run(init, shape, name="fc_weight", dtype="float32", legacy=False):
    arr = fresh(shape, dtype, legacy)
    init(D(name), arr)
    values = arr.asnumpy()
    assert values.shape == tuple(shape) and values.dtype == onp.dtype(dtype)
    return values


def bilinear_ref(shape):
    """MXNet's loop, element by element."""
    weight = onp.zeros(int(onp.prod(shape)), dtype="float32")
    f = onp.ceil(shape[3] / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    for i in range(int(onp.prod(shape))):
        x = i % shape[3]
        y = (i // shape[3]) % shape[2]
        weight[i] = (1 - abs(x / f - c)) * (1 - abs(y / f - c))
    return weight.reshape(shape)


def lstm_bias_ref(n, forget):
    out = onp.zeros(n, "float32")
    out[n // 4:2 * (n // 4)] = forget
    return out


# -- exact initializers ----------------------------------------------------------------------------
EXACT = [
    # (initializer, shape, dtype, reference)
    (minit.Zero(), (3, 4), "float32", lambda s: onp.zeros(s)),
    (minit.Zeros(), (2,), "float64", lambda s: onp.zeros(s)),
    (minit.One(), (2, 3, 2), "float32", lambda s: onp.ones(s)),
    (minit.Ones(), (5,), "int32", lambda s: onp.ones(s)),
    (minit.Constant(0.5), (2, 3), "float32", lambda s: onp.full(s, 0.5)),
    (minit.Constant(3), (4,), "int64", lambda s: onp.full(s, 3)),
    (minit.Constant(-1.25), (2, 2), "float16", lambda s: onp.full(s, -1.25)),
    (minit.Constant(onp.arange(6.0).reshape(2, 3)), (2, 3), "float32", lambda s: onp.arange(6.0).reshape(s)),
    (minit.Constant(mx.np.array([1.0, 2.0, 3.0])), (2, 3), "float32", lambda s: onp.tile([1.0, 2.0, 3.0], (2, 1))),
    (minit.Bilinear(), (1, 1, 4, 4), "float32", bilinear_ref),
    (minit.Bilinear(), (2, 3, 3, 5), "float32", bilinear_ref),
    (minit.Bilinear(), (1, 2, 6, 6), "float64", bilinear_ref),
    (minit.LSTMBias(), (16,), "float32", lambda s: lstm_bias_ref(s[0], 1.0)),
    (minit.LSTMBias(forget_bias=2.5), (8,), "float32", lambda s: lstm_bias_ref(s[0], 2.5)),
]


@pytest.mark.parametrize("init,shape,dtype,ref", EXACT, ids=lambda v: repr(v) if isinstance(v, minit.Initializer) else None)
def test_exact_initializers(init, shape, dtype, ref):
    got = run(init, shape, dtype=dtype)
    onp.testing.assert_array_equal(got, onp.asarray(ref(shape)).astype(dtype))


def test_bilinear_values_known():
    got = run(minit.Bilinear(), (1, 1, 4, 4))
    row = onp.array([0.25, 0.75, 0.75, 0.25])
    onp.testing.assert_allclose(got[0, 0], onp.outer(row, row))


def test_legacy_nd_array_filled_in_place():
    arr = fresh((2, 3), legacy=True)
    same = arr
    minit.Constant(4.0)(D("fc_weight"), arr)
    assert same is arr and isinstance(arr, mx.nd.NDArray)
    onp.testing.assert_array_equal(arr.asnumpy(), onp.full((2, 3), 4.0, "float32"))


# -- random initializers ---------------------------------------------------------------------------
def xavier_scale(shape, factor_type="avg", magnitude=3.0):
    hw = float(onp.prod(shape[2:])) if len(shape) > 2 else 1.0
    fan_in, fan_out = shape[1] * hw, shape[0] * hw
    factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[factor_type]
    return math.sqrt(magnitude / factor)


RANDOM = [
    # (initializer, shape, dtype, kind, bound or sigma)
    (minit.Uniform(), (64, 64), "float32", "uniform", 0.07),
    (minit.Uniform(0.5), (40, 50), "float64", "uniform", 0.5),
    (minit.Normal(), (64, 64), "float32", "normal", 0.01),
    (minit.Normal(2.0), (50, 40), "float16", "normal", 2.0),
    (minit.Xavier(), (64, 32, 3, 3), "float32", "uniform", xavier_scale((64, 32, 3, 3))),
    (minit.Xavier(factor_type="in", magnitude=2.34), (128, 96), "float32", "uniform",
     xavier_scale((128, 96), "in", 2.34)),
    (minit.Xavier(rnd_type="gaussian", factor_type="out"), (32, 16, 5, 5), "float32", "normal",
     xavier_scale((32, 16, 5, 5), "out")),
    (minit.MSRAPrelu(), (64, 16, 3, 3), "float32", "normal", xavier_scale((64, 16, 3, 3), "avg", 2 / 1.0625)),
    (minit.MSRAPrelu("in", slope=0.0), (96, 80), "float64", "normal", xavier_scale((96, 80), "in", 2.0)),
]


@pytest.mark.parametrize("init,shape,dtype,kind,scale", RANDOM, ids=lambda v: repr(v) if isinstance(v, minit.Initializer) else None)
def test_random_initializers(init, shape, dtype, kind, scale):
    mx.random.seed(7)
    got = run(init, shape, dtype=dtype).astype(onp.float64)
    assert onp.isfinite(got).all()
    if kind == "uniform":
        assert got.min() >= -scale and got.max() <= scale
        assert got.max() > 0.9 * scale and got.min() < -0.9 * scale  # fills the whole range
        want_std = scale / math.sqrt(3)
    else:
        assert abs(got).max() < 6 * scale
        want_std = scale
    assert abs(got.mean()) < 0.1 * want_std
    assert abs(got.std() - want_std) < 0.1 * want_std


def test_integer_target_gets_cast_samples():
    got = run(minit.Uniform(5.0), (20, 20), dtype="int32")
    assert got.min() >= -5 and got.max() <= 5 and len(onp.unique(got)) > 3


@pytest.mark.parametrize("shape", [(16, 16), (8, 2, 3, 4), (20, 5), (6,)])
@pytest.mark.parametrize("rand_type", ["uniform", "normal"])
def test_orthogonal(shape, rand_type):
    scale = 1.414
    got = run(minit.Orthogonal(rand_type=rand_type), shape).astype(onp.float64)
    w = got.reshape(shape[0], -1)
    nout, nin = w.shape
    gram = w @ w.T if nout <= nin else w.T @ w  # orthonormal rows or columns, whichever fit
    onp.testing.assert_allclose(gram, scale ** 2 * onp.eye(min(nout, nin)), atol=1e-4)


def test_orthogonal_custom_scale_square():
    w = run(minit.Orthogonal(scale=0.5), (12, 12)).astype(onp.float64)
    onp.testing.assert_allclose(w @ w.T, 0.25 * onp.eye(12), atol=1e-5)
    onp.testing.assert_allclose(w.T @ w, 0.25 * onp.eye(12), atol=1e-5)


@pytest.mark.parametrize("init", [minit.Uniform(), minit.Normal(1.0), minit.Xavier(), minit.MSRAPrelu(),
                                  minit.Orthogonal()], ids=repr)
def test_reproducible_under_seed(init):
    mx.random.seed(123)
    first = run(init, (6, 5))
    second = run(init, (6, 5))
    mx.random.seed(123)
    again = run(init, (6, 5))
    onp.testing.assert_array_equal(first, again)
    assert not onp.array_equal(first, second)
    mx.random.seed(124)
    assert not onp.array_equal(first, run(init, (6, 5)))


# -- name-based dispatch ---------------------------------------------------------------------------
DISPATCH = [
    ("dense0_bias", 0.0), ("bn_gamma", 1.0), ("bn_beta", 0.0), ("bn_running_mean", 0.0),
    ("bn_running_var", 1.0), ("bn_moving_mean", 0.0), ("bn_moving_var", 1.0), ("bn_moving_inv_var", 0.0),
    ("ema_moving_avg", 0.0), ("data_min", 0.0), ("data_max", 1.0), ("fc_bias_quantize", 0.0),
]


@pytest.mark.parametrize("name,value", DISPATCH)
def test_dispatch_by_name(name, value):
    got = run(minit.Constant(9.0), (3, 2), name=name)
    onp.testing.assert_array_equal(got, onp.full((3, 2), value, "float32"))


def test_weight_goes_to_init_weight():
    onp.testing.assert_array_equal(run(minit.Constant(9.0), (3, 2), name="conv0_weight"), onp.full((3, 2), 9.0))
    mx.random.seed(0)
    got = run(minit.Uniform(0.1), (10, 10), name="dense1_weight")
    assert abs(got).max() <= 0.1 and len(onp.unique(got)) > 50


def test_quantized_weight_is_int8_range():
    got = run(minit.Uniform(), (50,), name="fc_weight_quantize", dtype="int8")
    assert got.min() >= -127 and got.max() < 127 and len(onp.unique(got)) > 10


def test_unknown_name_raises():
    with pytest.raises(ValueError, match="Unknown initialization pattern for data"):
        run(minit.Uniform(), (2,), name="data")


def test_legacy_string_names():
    with pytest.warns(DeprecationWarning, match="InitDesc"):
        arr = fresh((1, 1, 4, 4))
        minit.Uniform()("upsampling0_weight", arr)  # upsampling → bilinear, whatever the initializer
    onp.testing.assert_array_equal(arr.asnumpy(), bilinear_ref((1, 1, 4, 4)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name, shape, want in [("stn_loc_weight", (6, 4), onp.zeros((6, 4))),
                                  ("stn_loc_bias", (6,), onp.array([1.0, 0, 0, 0, 1.0, 0])),
                                  ("fc_bias", (3,), onp.zeros(3)), ("bn_gamma", (3,), onp.ones(3)),
                                  ("bn_moving_var", (3,), onp.ones(3)), ("fc_weight", (2, 2), onp.full((2, 2), 2.0))]:
            arr = fresh(shape)
            minit.Constant(2.0)(name, arr)
            onp.testing.assert_array_equal(arr.asnumpy(), want.astype("float32"))
        with pytest.raises(TypeError, match="name must be a string"):
            minit.Zero()(3, fresh((2,)))


@pytest.mark.parametrize("attr,want", [
    ('["constant", {"value": 0.5}]', 0.5), ('["Constant", {"value": 0.25}]', 0.25), ('["zero", {}]', 0.0),
    ('["one", {}]', 1.0), ("zeros", 0.0), ("ones", 1.0), (minit.Constant(3.0), 3.0),
])
def test_init_attr_overrides_name(attr, want):
    glob = minit.Uniform()
    for name in ("fc_bias", "bn_gamma", "anything_at_all"):
        desc = D(name, attrs={"__init__": attr})
        arr = fresh((2, 3))
        glob(desc, arr)
        onp.testing.assert_array_equal(arr.asnumpy(), onp.full((2, 3), want, "float32"))
        assert desc.global_init is glob


def test_init_desc_is_a_string():
    desc = D("fc_weight", attrs={"lr_mult": "2"})
    assert desc == "fc_weight" and desc.endswith("weight") and desc.attrs == {"lr_mult": "2"}
    assert desc.global_init is None and D("x").attrs == {}


# -- dumps / create --------------------------------------------------------------------------------
DUMPS = [
    (minit.Zero(), ["zero", {}]), (minit.One(), ["one", {}]), (minit.Constant(0.5), ["constant", {"value": 0.5}]),
    (minit.Uniform(), ["uniform", {"scale": 0.07}]), (minit.Normal(0.5), ["normal", {"sigma": 0.5}]),
    (minit.Orthogonal(), ["orthogonal", {"scale": 1.414, "rand_type": "uniform"}]),
    (minit.Xavier(), ["xavier", {"rnd_type": "uniform", "factor_type": "avg", "magnitude": 3}]),
    (minit.Xavier(factor_type="in", magnitude=2.34), ["xavier", {"rnd_type": "uniform", "factor_type": "in",
                                                                 "magnitude": 2.34}]),
    (minit.MSRAPrelu(), ["msraprelu", {"factor_type": "avg", "slope": 0.25}]),
    (minit.Bilinear(), ["bilinear", {}]), (minit.LSTMBias(0.5), ["lstmbias", {"forget_bias": 0.5}]),
    (minit.Constant(onp.eye(2)), ["constant", {"value": [[1.0, 0.0], [0.0, 1.0]]}]),
]


@pytest.mark.parametrize("init,want", DUMPS, ids=lambda v: repr(v) if isinstance(v, minit.Initializer) else None)
def test_dumps_and_create_round_trip(init, want):
    text = init.dumps()
    assert json.loads(text) == want
    back = minit.create(text)
    assert type(back) is type(init) and back.dumps() == text


def test_dumps_exact_text():
    assert minit.Constant(0.5).dumps() == '["constant", {"value": 0.5}]'
    assert minit.Zero().dumps() == '["zero", {}]'
    assert minit.Xavier().dumps() == '["xavier", {"rnd_type": "uniform", "factor_type": "avg", "magnitude": 3}]'


@pytest.mark.parametrize("spec,cls", [
    ("zeros", minit.Zero), ("zero", minit.Zero), ("ones", minit.One), ("One", minit.One), ("Xavier", minit.Xavier),
    ("msraprelu", minit.MSRAPrelu), ('["zero", {}]', minit.Zero), ('["Constant", {"value": 0.25}]', minit.Constant),
    ('{"initializer": "normal", "sigma": 0.1}', minit.Normal), ({"initializer": "uniform", "scale": 0.2}, minit.Uniform),
])
def test_create_accepts_mxnet_spellings(spec, cls):
    assert type(minit.create(spec)) is cls


def test_create_arguments_and_instances():
    assert minit.create("xavier", magnitude=2).magnitude == 2.0
    assert minit.create("constant", 0.25).value == 0.25
    assert minit.create(initializer="normal", sigma=0.3).sigma == 0.3
    inst = minit.Uniform(0.3)
    assert minit.create(inst) is inst
    with pytest.raises(ValueError, match="already an instance"):
        minit.create(inst, scale=1.0)


def test_register_and_alias_custom():
    @minit.register
    @minit.alias("my_init_alias")
    class MyTestInit(minit.Initializer):
        def __init__(self, value=0.1):
            super().__init__(value=value)
            self.value = value

        def _init_weight(self, _, arr):
            arr[:] = self.value

        def _init_bias(self, _, arr):
            arr[:] = 5

    for spec in ("mytestinit", "MY_INIT_ALIAS", '["mytestinit", {"value": 0.75}]'):
        init = minit.create(spec)
        assert isinstance(init, MyTestInit)
    init = minit.create(MyTestInit(0.75).dumps())
    onp.testing.assert_allclose(run(init, (2, 2)), 0.75)
    onp.testing.assert_array_equal(run(init, (2,), name="fc_bias"), [5.0, 5.0])
    with pytest.raises(TypeError, match="subclass of mx.init.Initializer"):
        minit.register(dict)


# -- Mixed and Load --------------------------------------------------------------------------------
def test_mixed():
    init = minit.Mixed(["conv.*", "bn_.*", ".*"], [minit.Constant(2.0), minit.One(), minit.Constant(3.0)])
    # the chosen initializer still dispatches on the name: a bias is 0 whatever its pattern
    for name, want in [("conv0_weight", 2.0), ("conv0_bias", 0.0), ("bn_gamma", 1.0), ("bn_beta", 0.0),
                       ("fc_weight", 3.0), ("myconv_weight", 3.0)]:  # re.match is anchored at the start
        arr = fresh((2, 2))
        init(D(name), arr)
        onp.testing.assert_array_equal(arr.asnumpy(), onp.full((2, 2), want))
    with pytest.raises(ValueError, match="did not match any pattern"):
        minit.Mixed(["fc.*"], [minit.Zero()])(D("conv_weight"), fresh((2,)))
    with pytest.raises(ValueError, match="2 patterns but 1 initializers"):
        minit.Mixed(["a", "b"], [minit.Zero()])


def test_load_from_dict_and_file(tmp_path):
    params = {"arg:fc_weight": mx.nd.array([[1.0, 2.0], [3.0, 4.0]]), "aux:bn_moving_mean": mx.nd.array([5.0])}
    init = minit.Load(params, default_init=minit.Constant(7.0))
    arr = fresh((2, 2))
    init("fc_weight", arr)
    onp.testing.assert_array_equal(arr.asnumpy(), [[1.0, 2.0], [3.0, 4.0]])
    arr = fresh((3,))
    init(D("other_weight"), arr)
    onp.testing.assert_array_equal(arr.asnumpy(), [7.0, 7.0, 7.0])
    with pytest.raises(ValueError, match="Shape mismatch"):
        init("fc_weight", fresh((3,)))
    with pytest.raises(ValueError, match="no default initializer"):
        minit.Load(params)("missing", fresh((1,)))
    path = str(tmp_path / "p.params")
    mx.nd.save(path, params)
    arr = fresh((1,))
    minit.Load(path)("bn_moving_mean", arr)
    onp.testing.assert_array_equal(arr.asnumpy(), [5.0])


# -- bad input -------------------------------------------------------------------------------------
def test_xavier_needs_2d():
    with pytest.raises(ValueError, match="Xavier initializer cannot be applied to vector fc_weight.*at least 2D"):
        run(minit.Xavier(), (5,))
    with pytest.raises(MXNetError, match="MSRAPrelu initializer cannot be applied"):
        run(minit.MSRAPrelu(), (5,))


@pytest.mark.parametrize("make,match", [
    (lambda: minit.Xavier(rnd_type="bad"), "rnd_type must be"),
    (lambda: minit.Xavier(factor_type="sum"), "factor_type must be"),
    (lambda: minit.MSRAPrelu(factor_type="x"), "factor_type must be"),
    (lambda: minit.Orthogonal(rand_type="gaussian"), "rand_type must be"),
    (lambda: minit.create("nosuchinit"), "'nosuchinit' is not registered"),
    (lambda: minit.create('["nosuch", {}]'), "'nosuch' is not registered"),
    (lambda: minit.create('["constant"'), "not valid initializer JSON"),
    (lambda: minit.create('["zero", {}]', 1), "no further arguments"),
])
def test_bad_arguments(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_targets():
    with pytest.raises(ValueError, match="4-D"):
        run(minit.Bilinear(), (3, 3))
    with pytest.raises(ValueError, match=r"shape \(3,\) cannot fill an array of shape \(2, 2\)"):
        run(minit.Constant(onp.ones(3)), (2, 2))
    with pytest.raises(TypeError, match="must be an NDArray, got ndarray"):
        minit.Zero()(D("fc_weight"), onp.zeros(3))
    with pytest.raises(TypeError, match="create: an initializer must be given"):
        minit.create(3)
    with pytest.raises(TypeError, match="does not initialize weights"):
        minit.Initializer()(D("fc_weight"), fresh((2,)))


def test_set_verbosity_logs(caplog):
    init = minit.Constant(2.0).set_verbosity(True)
    with caplog.at_level("INFO"):
        run(init, (2, 2))
    assert "Initialized fc_weight as weight: 2.0" in caplog.text
    init = minit.One().set_verbosity(True, print_func=lambda x: "custom-stat")
    with caplog.at_level("INFO"):
        run(init, (2,), name="bn_gamma")
    assert "Initialized bn_gamma as gamma: custom-stat" in caplog.text


def test_random_initializers_compile_nothing_per_weight_shape():
    """Values are drawn on the host: a network of many weight shapes (the model zoo's) initializes
    without one XLA compilation per shape, and a seed still decides the values."""
    def draw(seed, shapes, init):
        mx.random.seed(seed)
        arrays = [mx.np.array(onp.zeros(s, onp.float32)) for s in shapes]
        for a in arrays:
            init(minit.InitDesc("weight"), a)
        return [a.asnumpy() for a in arrays]

    draw(0, [(2, 2)], mx.init.Xavier())  # the fill's own programs, once
    draw(0, [(2, 2)], mx.init.Normal(0.1))
    shapes = [(3 + i, 5 + 2 * i) for i in range(6)]
    with compilations() as compiles:
        first = draw(7, shapes, mx.init.Xavier()) + draw(7, shapes, mx.init.Normal(0.1))
    assert compiles == []
    again = draw(7, shapes, mx.init.Xavier()) + draw(7, shapes, mx.init.Normal(0.1))
    for a, b, shape in zip(first, again, shapes + shapes):
        assert a.shape == shape
        onp.testing.assert_array_equal(a, b)
    assert not onp.array_equal(draw(8, shapes[:1], mx.init.Normal(0.1))[0], first[len(shapes)])
