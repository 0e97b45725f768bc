"""mx.sym.npx's legacy-op names, mx.sym.sparse, mx.sym.register and the gen_* module names:
graphs built with them evaluate like NumPy."""
import numpy as onp
import pytest

import mxjax as mx

RNG = onp.random.default_rng(3)
X = RNG.uniform(-1, 1, (2, 3, 4)).astype("float32")
Y = RNG.uniform(-1, 1, (2, 3, 4)).astype("float32")
npx = mx.sym.npx


def _eval(sym, **values):
    outs = sym.eval(**{k: mx.nd.array(v) for k, v in values.items()})
    return [o.asnumpy() for o in outs]


a, b = mx.sym.var("a"), mx.sym.var("b")
# npx name: (symbol, NumPy oracle of (X, Y))
NPX = {
    "cast": (lambda: npx.cast(a, dtype="float16"), lambda x, y: x.astype("float16")),
    "batch_flatten": (lambda: npx.batch_flatten(a), lambda x, y: x.reshape(2, 12)),
    "add_n": (lambda: npx.add_n(a, b, a), lambda x, y: 2 * x + y),
    "broadcast_greater": (lambda: npx.broadcast_greater(a, b), lambda x, y: (x > y).astype("float32")),
    "slice": (lambda: npx.slice(a, begin=(0, 1), end=(1, 3)), lambda x, y: x[0:1, 1:3]),
    "slice_like": (lambda: npx.slice_like(a, mx.sym.var("b")), lambda x, y: x),
    "reshape_like": (lambda: npx.reshape_like(a, b), lambda x, y: x.reshape(y.shape)),
    "norm": (lambda: npx.norm(a, ord=2, axis=1), lambda x, y: onp.sqrt((x ** 2).sum(axis=1))),
    "pad": (lambda: npx.pad(a.reshape((1, 2, 3, 4)), mode="constant", pad_width=(0, 0, 0, 0, 1, 1, 1, 1)),
            lambda x, y: onp.pad(x.reshape(1, 2, 3, 4), ((0, 0), (0, 0), (1, 1), (1, 1)))),
}


@pytest.mark.parametrize("name", sorted(NPX))
def test_npx_legacy_names_evaluate_like_numpy(name):
    build, oracle = NPX[name]
    sym = build()
    inputs = {k: v for k, v in (("a", X), ("b", Y)) if k in sym.list_arguments()}
    (got,) = _eval(sym, **inputs)
    want = oracle(X, Y)
    assert got.dtype == want.dtype
    onp.testing.assert_allclose(got, want, rtol=1e-3 if want.dtype == onp.float16 else 1e-5, atol=1e-6)
    assert name in dir(npx)


def test_npx_slice_channel_has_one_output_per_part():
    sym = npx.slice_channel(a, num_outputs=2, axis=0, name="sc")
    assert sym.list_outputs() == ["sc_output0", "sc_output1"]
    first, second = _eval(sym, a=X)
    onp.testing.assert_array_equal(first, X[:1])
    onp.testing.assert_array_equal(second, X[1:])


def test_npx_names_follow_mxnet_and_unknown_names_raise():
    assert {"cast", "rnn"} <= set(npx.LEGACY_OPS)
    with pytest.raises(AttributeError, match="no attribute 'no_such_op'"):
        npx.no_such_op


def test_sparse_module_builds_the_dense_ops():
    assert "dot" in dir(mx.sym.sparse) and "elemwise_add" in dir(mx.sym.sparse)
    m = RNG.uniform(size=(3, 2)).astype("float32")
    (got,) = _eval(mx.sym.sparse.dot(a, b), a=m.T, b=m)
    onp.testing.assert_allclose(got, m.T @ m, rtol=1e-5)
    (got,) = _eval(mx.sym.sparse.elemwise_add(a, b), a=m, b=m)
    onp.testing.assert_allclose(got, 2 * m)
    with pytest.raises(AttributeError):
        mx.sym.sparse.Convolution  # not a sparse op in MXNet


def test_generated_module_names_hold_the_same_functions():
    assert mx.sym.gen_op.FullyConnected.op is mx.sym.FullyConnected.op
    assert mx.sym.gen_contrib is mx.sym.contrib and mx.sym.gen_linalg is mx.sym.linalg
    assert mx.sym.gen_sparse is mx.sym.sparse


def test_register_makes_symbol_functions_of_registered_ops():
    relu = mx.sym.register._make_symbol_function("relu", "relu", "my_relu")
    sym = relu(a, name="r")
    assert sym.name == "r" and relu.__name__ == "my_relu"
    (got,) = _eval(sym, a=X)
    onp.testing.assert_array_equal(got, onp.maximum(X, 0))
    with pytest.raises(mx.base.MXNetValueError, match="no registered op 'no_such_op'"):
        mx.sym.register._make_symbol_function("no_such_op", "no_such_op", "f")


def test_variadic_nodes_write_their_input_count():
    assert mx.sym.concat(a, b, dim=0).attr("num_args") == "2"
    (got,) = _eval(mx.sym.add_n(a, b), a=X, b=Y)
    onp.testing.assert_allclose(got, X + Y, rtol=1e-6)
