"""MXNet's ``mx.symbol`` module layout: import paths, and the registry-generated namespaces
(``contrib``, ``linalg``, ``numpy_extension``, ``op``) building the right nodes and evaluating like NumPy."""
import importlib
import json
import math

import numpy as onp
import pytest

import mxjax as mx
from mxjax.operator.naming import op_for_json_name

RNG = onp.random.default_rng(3)
X = RNG.uniform(0.1, 0.9, (2, 3, 4)).astype("float32")
A = RNG.uniform(-1, 1, (2, 3, 3)).astype("float32")
SPD = (A @ A.transpose(0, 2, 1) + 3 * onp.eye(3)).astype("float32")
LOW = onp.tril(A) + 2 * onp.eye(3, dtype="float32")
B = RNG.uniform(-1, 1, (2, 3, 4)).astype("float32")


def _evaluate(sym, **arrays):
    outs = sym.eval(**{k: mx.nd.array(v, dtype=v.dtype) for k, v in arrays.items()})
    return [o.asnumpy() for o in outs]


def _check(sym, want, **arrays):
    got = _evaluate(sym, **arrays)
    want = want if isinstance(want, (list, tuple)) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == onp.shape(w), (g.shape, onp.shape(w))
        onp.testing.assert_allclose(g.astype("float64"), onp.asarray(w, "float64"), rtol=1e-4, atol=1e-5)


def _softmax(x, axis=-1):
    e = onp.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("path", ["mxjax.symbol.numpy", "mxjax.symbol.numpy_extension", "mxjax.symbol.contrib",
                                  "mxjax.symbol.linalg", "mxjax.symbol.op", "mxjax.symbol.symbol"])
def test_module_paths_import(path):
    assert importlib.import_module(path) is not None


def test_names_under_mxnet_paths():
    from mxjax.symbol import Group, Symbol, Variable, fromjson, load, load_json, var  # noqa: F401
    assert mx.sym.np is mx.symbol.numpy and mx.sym.npx is mx.symbol.numpy_extension
    assert mx.sym.Variable is mx.sym.var and isinstance(var("x"), Symbol)
    assert mx.symbol.symbol.Symbol is Symbol


# ---------------------------------------------------------------------------- linalg
def _sym(*names):
    return [mx.sym.var(n) for n in names]


LINALG = {
    "gemm": (lambda a, b, c: mx.sym.linalg.gemm(a, b, c, alpha=2.0, beta=0.5), (A, B, B),
             lambda a, b, c: 2 * a @ b + 0.5 * c),
    "gemm2": (lambda a, b: mx.sym.linalg.gemm2(a, b, transpose_a=True), (A, B),
              lambda a, b: a.transpose(0, 2, 1) @ b),
    "potrf": (lambda a: mx.sym.linalg.potrf(a), (SPD,), onp.linalg.cholesky),
    "potri": (lambda a: mx.sym.linalg.potri(a), (LOW,),
              lambda a: onp.linalg.inv(onp.tril(a) @ onp.tril(a).transpose(0, 2, 1))),
    "trsm": (lambda a, b: mx.sym.linalg.trsm(a, b, alpha=1.5), (LOW, B),
             lambda a, b: 1.5 * onp.linalg.solve(onp.tril(a), b)),
    "trmm": (lambda a, b: mx.sym.linalg.trmm(a, b), (LOW, B), lambda a, b: onp.tril(a) @ b),
    "syrk": (lambda a: mx.sym.linalg.syrk(a), (A,), lambda a: a @ a.transpose(0, 2, 1)),
    "sumlogdiag": (lambda a: mx.sym.linalg.sumlogdiag(a), (SPD,),
                   lambda a: onp.log(onp.diagonal(a, axis1=1, axis2=2)).sum(-1)),
    "inverse": (lambda a: mx.sym.linalg.inverse(a), (SPD,), onp.linalg.inv),
    "det": (lambda a: mx.sym.linalg.det(a), (SPD,), onp.linalg.det),
    "slogdet": (lambda a: mx.sym.linalg.slogdet(a), (A,), lambda a: list(onp.linalg.slogdet(a))),
    "extractdiag": (lambda a: mx.sym.linalg.extractdiag(a), (A,), lambda a: onp.diagonal(a, axis1=1, axis2=2)),
    "makediag": (lambda a: mx.sym.linalg.makediag(a), (B,), lambda b: b[..., None] * onp.eye(4)),
}


@pytest.mark.parametrize("name", sorted(LINALG))
def test_linalg(name):
    build, arrays, oracle = LINALG[name]
    names = [f"x{i}" for i in range(len(arrays))]
    with mx.name.NameManager():
        sym = build(*_sym(*names))
    node = json.loads(sym.tojson())["nodes"][-1]
    assert (node["op"], node["name"]) == (f"_linalg_{name}", f"{name}0")
    _check(sym, oracle(*[a.astype("float64") for a in arrays]), **dict(zip(names, arrays)))


def _eval64(sym, **arrays):
    return [o.asnumpy().astype("float64") for o in sym.eval(**{k: mx.nd.array(v) for k, v in arrays.items()})]


def test_linalg_triangle_packing():
    rows, cols = onp.tril_indices(3)
    (packed,) = _eval64(mx.sym.linalg.extracttrian(mx.sym.var("a")), a=A)
    onp.testing.assert_allclose(packed, A[:, rows, cols], rtol=1e-6)
    (back,) = _eval64(mx.sym.linalg.maketrian(mx.sym.var("p")), p=packed.astype("float32"))
    onp.testing.assert_allclose(back, onp.tril(A), rtol=1e-6)


def test_linalg_factorizations_reconstruct():
    q, lower = _eval64(mx.sym.linalg.gelqf(mx.sym.var("a")), a=B)  # B = L Q, Q with orthonormal rows
    onp.testing.assert_allclose(lower @ q, B, rtol=1e-4, atol=1e-5)
    onp.testing.assert_allclose(q @ q.transpose(0, 2, 1), onp.broadcast_to(onp.eye(3), (2, 3, 3)), atol=1e-5)
    assert onp.allclose(lower, onp.tril(lower))
    u, lam = _eval64(mx.sym.linalg.syevd(mx.sym.var("a")), a=SPD)  # SPD = U^T diag(lam) U
    onp.testing.assert_allclose(u.transpose(0, 2, 1) @ (lam[..., None] * u), SPD, rtol=1e-4, atol=1e-4)
    onp.testing.assert_allclose(lam, onp.linalg.eigvalsh(SPD.astype("float64")), rtol=1e-4)


def test_linalg_covers_registry():
    assert set(LINALG) | {"extracttrian", "maketrian", "gelqf", "syevd"} == set(dir(mx.sym.linalg))


# ---------------------------------------------------------------------------- contrib
BOXES = onp.array([[0, 0, 2, 2], [1, 1, 3, 3], [0, 0, 1, 1]], "float32")


def _iou(a, b):
    lt = onp.maximum(a[:, None, :2], b[None, :, :2])
    rb = onp.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = onp.prod(onp.clip(rb - lt, 0, None), -1)
    area = lambda x: (x[:, 2] - x[:, 0]) * (x[:, 3] - x[:, 1])  # noqa: E731
    return inter / (area(a)[:, None] + area(b)[None] - inter)


CONTRIB = {
    "box_iou": (lambda a, b: mx.sym.contrib.box_iou(a, b), (BOXES, BOXES), _iou),
    "quadratic": (lambda x: mx.sym.contrib.quadratic(x, a=2.0, b=-1.0, c=0.5), (X,),
                  lambda x: 2 * x ** 2 - x + 0.5),
    "div_sqrt_dim": (lambda x: mx.sym.contrib.div_sqrt_dim(x), (X,), lambda x: x / 2.0),
    "round_ste": (lambda x: mx.sym.contrib.round_ste(x), (X * 4,), lambda x: onp.round(x)),
    "sign_ste": (lambda x: mx.sym.contrib.sign_ste(x), (X - 0.5,), onp.sign),
    "gradientmultiplier": (lambda x: mx.sym.contrib.gradientmultiplier(x, scalar=3.0), (X,), lambda x: x),
    "arange_like": (lambda x: mx.sym.contrib.arange_like(x, axis=1), (X,), lambda x: onp.arange(3.0)),
    "allclose": (lambda a, b: mx.sym.contrib.allclose(a, b), (X, X + 1e-9), lambda a, b: onp.array(1.0)),
    "index_copy": (lambda a, i, b: mx.sym.contrib.index_copy(a, i, b), (X[0], onp.array([2, 0], "int64"), B[0, :2]),
                   lambda a, i, b: onp.stack([b[1], a[1], b[0]])),
}


@pytest.mark.parametrize("name", sorted(CONTRIB))
def test_contrib(name):
    build, arrays, oracle = CONTRIB[name]
    names = [f"x{i}" for i in range(len(arrays))]
    with mx.name.NameManager():
        sym = build(*_sym(*names))
    node = json.loads(sym.tojson())["nodes"][-1]
    # the written name is one MXNet reads as this op (arange_like is written _npx_arange_like, an alias)
    assert op_for_json_name(node["op"]) is mx.operator.OPS[f"_contrib_{name}"] and node["name"] == f"{name}0"
    _check(sym, oracle(*arrays), **dict(zip(names, arrays)))


@pytest.mark.parametrize("module, prefix", [("contrib", "_contrib_"), ("numpy_extension", "_npx_"),
                                            ("linalg", "_linalg_")])
def test_every_generated_name_binds_its_op(module, prefix):
    """Each name a namespace lists builds one node of the op registered under ``prefix + name``."""
    namespace = getattr(mx.symbol, module)
    registry = mx.operator.OPS
    names = [n for n in dir(namespace) if registry.get(prefix + n) is not None]
    assert names
    for name in names:
        function = getattr(namespace, name)
        assert function.__name__ == name and function.op is registry[prefix + name]


def test_unknown_names_raise_attribute_error():
    for module in (mx.sym.contrib, mx.sym.linalg, mx.sym.npx, mx.sym.op, mx.sym):
        with pytest.raises(AttributeError, match="no_such_op"):
            getattr(module, "no_such_op")


# ---------------------------------------------------------------------------- numpy_extension
_erf = onp.vectorize(math.erf)
NPX = {
    "relu": (lambda x: mx.sym.npx.relu(x), (X - 0.5,), lambda x: onp.maximum(x, 0)),
    "sigmoid": (lambda x: mx.sym.npx.sigmoid(x), (X,), lambda x: 1 / (1 + onp.exp(-x))),
    "softmax": (lambda x: mx.sym.npx.softmax(x, axis=1), (X,), lambda x: _softmax(x, 1)),
    "log_softmax": (lambda x: mx.sym.npx.log_softmax(x), (X,), lambda x: onp.log(_softmax(x))),
    "activation": (lambda x: mx.sym.npx.activation(x, act_type="tanh"), (X,), onp.tanh),
    "erf": (lambda x: mx.sym.npx.erf(x), (X,), _erf),
    "gammaln": (lambda x: mx.sym.npx.gammaln(x), (X,), onp.vectorize(math.lgamma)),
    "batch_dot": (lambda a, b: mx.sym.npx.batch_dot(a, b), (A, B), lambda a, b: a @ b),
    "one_hot": (lambda x: mx.sym.npx.one_hot(x, depth=3), (onp.array([2, 0], "int32"),),
                lambda i: onp.eye(3)[i]),
    "pick": (lambda x, i: mx.sym.npx.pick(x, i, axis=-1), (A[0], onp.array([1, 0, 2], "int32")),
             lambda x, i: x[onp.arange(3), i]),
    "fully_connected": (lambda x, w, b: mx.sym.npx.fully_connected(x, w, b, num_hidden=4, no_bias=False),
                        (A[0], B[0].T.copy(), X[0, 0]), lambda x, w, b: x @ w.T + b),
    "stop_gradient": (lambda x: mx.sym.npx.stop_gradient(x), (X,), lambda x: x),
    "smooth_l1": (lambda x: mx.sym.npx.smooth_l1(x, scalar=1.0), (A,),
                  lambda x: onp.where(onp.abs(x) < 1, 0.5 * x ** 2, onp.abs(x) - 0.5)),
    "softsign": (lambda x: mx.sym.npx.softsign(x), (A,), lambda x: x / (1 + onp.abs(x))),
    "sequence_mask": (lambda x, n: mx.sym.npx.sequence_mask(x, n, use_sequence_length=True, value=-1.0),
                      (B, onp.array([1, 2, 3], "float32")[:3]),
                      lambda x, n: onp.where(onp.arange(2)[:, None, None] < n[None, :, None], x, -1.0)[:, :, :]),
}


@pytest.mark.parametrize("name", sorted(NPX))
def test_numpy_extension(name):
    build, arrays, oracle = NPX[name]
    names = [f"x{i}" for i in range(len(arrays))]
    with mx.name.NameManager():
        sym = build(*_sym(*names))
    node = json.loads(sym.tojson())["nodes"][-1]
    assert node["name"] == f"{name}0"
    _check(sym, oracle(*arrays), **dict(zip(names, arrays)))


# ---------------------------------------------------------------------------- op and top level
def test_op_module_matches_top_level():
    a = mx.sym.var("a")
    with mx.name.NameManager():
        via_op = mx.sym.op.FullyConnected(a, num_hidden=3).tojson()
    with mx.name.NameManager():
        top = mx.sym.FullyConnected(a, num_hidden=3).tojson()
    assert via_op == top


def test_pow_is_power():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    _check(mx.sym.pow(a, b), X ** B[:, :, ::-1], a=X, b=B[:, :, ::-1].copy())
    _check(mx.sym.pow(a, 2.0), X ** 2, a=X)
    _check(mx.sym.pow(2.0, a), 2.0 ** X, a=X)


# ---------------------------------------------------------------------------- graph methods
def _net():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    fc = mx.sym.FullyConnected(a, num_hidden=3, name="fc")
    return mx.sym.relu(fc + b, name="r")


def test_debug_str_layout():
    with mx.name.NameManager():  # fresh counters: auto names (_plus0) must not depend on earlier tests
        text = _net().debug_str()
    assert text.startswith("Symbol Outputs:\n\toutput[0]=r(0)\nVariable:a\nVariable:fc_weight\n")
    assert "Op:FullyConnected, Name=fc\nInputs:\n\targ[0]=a(0) version=0\n" in text
    assert "Attrs:\n\tnum_hidden=3\n" in text
    assert text.endswith("Op:relu, Name=r\nInputs:\n\targ[0]=_plus0(0)\n")


def test_get_inputs_and_dynamic_shape():
    net = _net()
    assert net.get_inputs().list_outputs() == ["a", "fc_weight", "fc_bias", "b"]
    assert not net.has_dynamic_shape_op()
    assert mx.sym.contrib.boolean_mask(mx.sym.var("x"), mx.sym.var("m")).has_dynamic_shape_op()


# ---------------------------------------------------------------------------- numpy.linalg
NP_LINALG = {
    "det": (lambda a: mx.sym.np.linalg.det(a), (SPD,), onp.linalg.det),
    "inv": (lambda a: mx.sym.np.linalg.inv(a), (SPD,), onp.linalg.inv),
    "slogdet": (lambda a: mx.sym.np.linalg.slogdet(a), (A,), lambda a: list(onp.linalg.slogdet(a))),
    "cholesky": (lambda a: mx.sym.np.linalg.cholesky(a), (SPD,), onp.linalg.cholesky),
    "norm": (lambda a: mx.sym.np.linalg.norm(a, axis=-1), (B,), lambda b: onp.linalg.norm(b, axis=-1)),
    "solve": (lambda a, b: mx.sym.np.linalg.solve(a, b), (SPD, B), onp.linalg.solve),
    "eigvalsh": (lambda a: mx.sym.np.linalg.eigvalsh(a), (SPD,), onp.linalg.eigvalsh),
}


@pytest.mark.parametrize("name", sorted(NP_LINALG))
def test_numpy_linalg(name):
    build, arrays, oracle = NP_LINALG[name]
    names = [f"x{i}" for i in range(len(arrays))]
    with mx.name.NameManager():
        sym = build(*_sym(*names))
    node = json.loads(sym.tojson())["nodes"][-1]
    assert node["name"] == f"{name}0" and node["op"].startswith("_npi_")
    _check(sym, oracle(*[a.astype("float64") for a in arrays]), **dict(zip(names, arrays)))


def test_numpy_linalg_import_path():
    import mxjax.symbol.numpy.linalg as linalg
    assert linalg is mx.sym.np.linalg and "det" in dir(linalg)
