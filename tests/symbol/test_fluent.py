"""Symbol's fluent methods: each builds the same graph as the ``mx.sym`` function and evaluates like NumPy."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax.symbol import NotImplementedForSymbol

RNG = onp.random.default_rng(7)
X = RNG.uniform(0.1, 0.9, (2, 3, 4)).astype("float32")
M = RNG.uniform(0.1, 0.9, (3, 3)).astype("float32")
ROW = RNG.uniform(0.1, 0.9, (1, 3, 4)).astype("float32")
IMG = RNG.uniform(0.1, 0.9, (1, 4, 2, 3)).astype("float32")
IDX = onp.array([2, 0, 1], "float32")


def _softmax(x, axis=-1):
    e = onp.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _depth_to_space(x, b):
    n, c, h, w = x.shape
    y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return y.reshape(n, c // (b * b), h * b, w * b)


def _space_to_depth(x, b):
    n, c, h, w = x.shape
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)


_sig = lambda x: 1 / (1 + onp.exp(-x))  # noqa: E731

# method: (input, args, kwargs, NumPy oracle of the input); "other" inputs are extra variables
CASES = {
    "zeros_like": (X, (), {}, onp.zeros_like),
    "ones_like": (X, (), {}, onp.ones_like),
    "broadcast_axes": (ROW, (), {"axis": 0, "size": 2}, lambda x: onp.broadcast_to(x, (2, 3, 4))),
    "repeat": (X, (), {"repeats": 2, "axis": 1}, lambda x: onp.repeat(x, 2, axis=1)),
    "pad": (IMG, (), {"mode": "constant", "pad_width": (0, 0, 0, 0, 1, 1, 2, 2), "constant_value": 0.5},
            lambda x: onp.pad(x, ((0, 0), (0, 0), (1, 1), (2, 2)), constant_values=0.5)),
    "swapaxes": (X, (), {"dim1": 0, "dim2": 2}, lambda x: onp.swapaxes(x, 0, 2)),
    "slice": (X, (), {"begin": (0, 1), "end": (2, 3)}, lambda x: x[0:2, 1:3]),
    "slice_axis": (X, (), {"axis": 2, "begin": 1, "end": 3}, lambda x: x[:, :, 1:3]),
    "sort": (X, (), {"axis": -1}, lambda x: onp.sort(x, axis=-1)),
    "topk": (X, (), {"k": 2, "ret_typ": "value"}, lambda x: -onp.sort(-x, axis=-1)[..., :2]),
    "argsort": (X, (), {}, lambda x: onp.argsort(x, axis=-1).astype("float32")),
    "argmax": (X, (), {"axis": 1}, lambda x: x.argmax(1).astype("float32")),
    "argmax_channel": (M, (), {}, lambda x: x.argmax(-1).astype("float32")),
    "argmin": (X, (), {"axis": 2}, lambda x: x.argmin(2).astype("float32")),
    "clip": (X, (0.3, 0.6), {}, lambda x: onp.clip(x, 0.3, 0.6)),
    "abs": (X - 0.5, (), {}, onp.abs),
    "sign": (X - 0.5, (), {}, onp.sign),
    "flatten": (X, (), {}, lambda x: x.reshape(2, -1)),
    "shape_array": (X, (), {}, lambda x: onp.array(x.shape, "int64")),
    "size_array": (X, (), {}, lambda x: onp.array([x.size], "int64")),
    "expand_dims": (X, (1,), {}, lambda x: x[:, None]),
    "tile": (X, (), {"reps": (1, 2, 1)}, lambda x: onp.tile(x, (1, 2, 1))),
    "flip": (X, (), {"axis": 1}, lambda x: x[:, ::-1]),
    "depth_to_space": (IMG, (2,), {}, lambda x: _depth_to_space(x, 2)),
    "space_to_depth": (_depth_to_space(IMG, 2), (2,), {}, lambda x: _space_to_depth(x, 2)),
    "diag": (M, (), {"k": 1}, lambda x: onp.diag(x, 1)),
    "sum": (X, (), {"axis": 1}, lambda x: x.sum(1)),
    "nansum": (X, (), {"axis": 0}, lambda x: onp.nansum(x, 0)),
    "prod": (X, (), {"axis": 2}, lambda x: x.prod(2)),
    "nanprod": (X, (), {"axis": 1}, lambda x: onp.nanprod(x, 1)),
    "mean": (X, (), {"axis": (0, 2)}, lambda x: x.mean((0, 2))),
    "max": (X, (), {"axis": 1, "keepdims": True}, lambda x: x.max(1, keepdims=True)),
    "min": (X, (), {"axis": 0}, lambda x: x.min(0)),
    "norm": (X, (), {}, lambda x: onp.sqrt((x.astype("float64") ** 2).sum()).reshape(1)),
    "round": (X * 10 - 5, (), {}, lambda x: onp.sign(x) * onp.floor(onp.abs(x) + 0.5)),
    "rint": (X * 10 - 5, (), {}, onp.rint),
    "fix": (X * 10 - 5, (), {}, onp.fix),
    "floor": (X * 10 - 5, (), {}, onp.floor),
    "ceil": (X * 10 - 5, (), {}, onp.ceil),
    "trunc": (X * 10 - 5, (), {}, onp.trunc),
    **{name: (X, (), {}, getattr(onp, name)) for name in (
        "sin", "cos", "tan", "arcsin", "arccos", "arctan", "degrees", "radians", "sinh", "cosh", "tanh",
        "arcsinh", "arctanh", "exp", "expm1", "log", "log10", "log2", "log1p", "sqrt", "cbrt", "square",
        "reciprocal")},
    "arccosh": (X + 1, (), {}, onp.arccosh),
    "log_sigmoid": (X - 0.5, (), {}, lambda x: onp.log(_sig(x))),
    "rsqrt": (X, (), {}, lambda x: 1 / onp.sqrt(x)),
    "rcbrt": (X, (), {}, lambda x: 1 / onp.cbrt(x)),
    "relu": (X - 0.5, (), {}, lambda x: onp.maximum(x, 0)),
    "sigmoid": (X, (), {}, _sig),
    "softmax": (X, (), {"axis": 1}, lambda x: _softmax(x, 1)),
    "log_softmax": (X, (), {}, lambda x: onp.log(_softmax(x))),
    "softmin": (X, (), {}, lambda x: _softmax(-x)),
    "mish": (X - 0.5, (), {}, lambda x: x * onp.tanh(onp.log1p(onp.exp(x)))),
    "squeeze": (ROW, (), {"axis": 0}, lambda x: x[0]),
    "broadcast_to": (ROW, (), {"shape": (2, 3, 4)}, lambda x: onp.broadcast_to(x, (2, 3, 4))),
    "reshape": (X, ((4, 6),), {}, lambda x: x.reshape(4, 6)),
    "transpose": (X, (), {"axes": (2, 0, 1)}, lambda x: x.transpose(2, 0, 1)),
    "astype": (X * 10, ("int32",), {}, lambda x: x.astype("int32")),
    "split": (X, (), {"num_outputs": 2, "axis": 2}, lambda x: onp.split(x, 2, axis=2)),
}
# methods taking a second symbol: (input, other, kwargs, oracle(x, other))
PAIRED = {
    "slice_like": (X, X[:1, :2, :3].copy(), {"axes": (1, 2)}, lambda x, o: x[:, :2, :3]),
    "reshape_like": (X, onp.zeros((4, 6), "float32"), {}, lambda x, o: x.reshape(o.shape)),
    "broadcast_like": (ROW, X, {}, lambda x, o: onp.broadcast_to(x, o.shape)),
    "take": (X, onp.array([1, 0, 1], "float32"), {}, lambda x, o: x[o.astype(int)]),
    "pick": (M, IDX, {"axis": 1}, lambda x, o: x[onp.arange(3), o.astype(int)]),
}
ONE_HOT = (IDX, {"depth": 4}, lambda i: onp.eye(4, dtype="float32")[i.astype(int)])
# MXNet 2.0.0b1's fluent methods of Symbol
MXNET_FLUENT = sorted([*CASES, *PAIRED, "one_hot"])


def _build(fn):
    with mx.name.NameManager():
        return fn()


def _evaluate(sym, **arrays):
    outs = sym.eval(**{k: mx.nd.array(v, dtype=v.dtype) for k, v in arrays.items()})
    return [o.asnumpy() for o in outs]


def _check(got, want):
    want = want if isinstance(want, list) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == onp.shape(w), (g.shape, onp.shape(w))
        onp.testing.assert_allclose(g.astype("float64"), onp.asarray(w, "float64"), rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("method", sorted(CASES))
def test_method_matches_function_and_numpy(method):
    x, args, kwargs, oracle = CASES[method]
    a = mx.sym.var("a")
    fluent = _build(lambda: getattr(a, method)(*args, **kwargs))
    function = _build(lambda: getattr(mx.sym, "cast" if method == "astype" else method)(a, *args, **kwargs))
    assert fluent.tojson() == function.tojson()
    _check(_evaluate(fluent, a=x), oracle(x.astype("float64") if x.dtype.kind == "f" and method in
                                           ("norm",) else x))


@pytest.mark.parametrize("method", sorted(PAIRED))
def test_method_with_second_symbol(method):
    x, other, kwargs, oracle = PAIRED[method]
    a, b = mx.sym.var("a"), mx.sym.var("b")
    fluent = _build(lambda: getattr(a, method)(b, **kwargs))
    function = _build(lambda: getattr(mx.sym, method)(a, b, **kwargs))
    assert fluent.tojson() == function.tojson()
    _check(_evaluate(fluent, a=x, b=other), oracle(x, other))


def test_one_hot():
    indices, kwargs, oracle = ONE_HOT
    a = mx.sym.var("a")
    assert _build(lambda: a.one_hot(**kwargs)).tojson() == _build(lambda: mx.sym.one_hot(a, **kwargs)).tojson()
    _check(_evaluate(a.one_hot(**kwargs), a=indices), oracle(indices))


def test_astype_dtype():
    a = mx.sym.var("a")
    out = a.astype("int32").eval(a=mx.nd.array(X * 10))[0]
    assert out.dtype == onp.int32


def test_every_mxnet_fluent_method_exists():
    missing = [m for m in MXNET_FLUENT if not callable(getattr(mx.sym.Symbol, m, None))]
    assert not missing


def test_inplace_flag_accepted():
    a = mx.sym.var("a")
    _check(_evaluate(a.flatten(inplace=True), a=X), X.reshape(2, -1))
    _check(_evaluate(a.expand_dims(axis=0, inplace=True), a=X), X[None])


@pytest.mark.parametrize("method", ["asnumpy", "asscalar", "wait_to_read", "backward", "detach", "as_in_context",
                                    "copy"])
def test_value_methods_raise(method):
    with pytest.raises(NotImplementedForSymbol, match=method):
        getattr(mx.sym.var("a"), method)()
    assert issubclass(NotImplementedForSymbol, mx.base.MXNetError)


def test_bad_fluent_arguments_raise():
    with pytest.raises((TypeError, mx.base.MXNetError), match="bogus"):
        mx.sym.var("a").sum(bogus=3)
    with pytest.raises(mx.base.MXNetError):
        mx.sym.var("a").reshape((5, 5)).eval(a=mx.nd.array(X))
