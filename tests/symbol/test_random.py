"""mx.sym.random: samplers as graph nodes that run through the executor and SymbolBlock, seeded by
mx.random.seed; moments within statistical tolerance of the distributions' (NumPy formulas)."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax.base import MXNetTypeError, MXNetValueError

R = mx.sym.random
N = 20000


def _run(sym, **inputs):
    return [o.asnumpy() for o in sym.eval(**{k: mx.nd.array(v) for k, v in inputs.items()})]


# name: (symbol builder, NumPy mean, NumPy variance)
SCALAR = {
    "uniform": (lambda: R.uniform(-1, 3, shape=(N,)), 1.0, 16 / 12),
    "normal": (lambda: R.normal(2, 0.5, shape=(N,)), 2.0, 0.25),
    "randn": (lambda: R.randn(N, loc=-1, scale=2), -1.0, 4.0),
    "poisson": (lambda: R.poisson(3.0, shape=(N,)), 3.0, 3.0),
    "exponential": (lambda: R.exponential(2.0, shape=(N,)), 2.0, 4.0),  # scale 2: mean 2
    "binomial": (lambda: R.binomial(10, 0.3, shape=(N,)), 3.0, 2.1),
    "negative_binomial": (lambda: R.negative_binomial(3, 0.4, shape=(N,)), 4.5, 11.25),
}


@pytest.mark.parametrize("name", sorted(SCALAR))
def test_scalar_parameter_samplers_moments(name):
    build, mean, var = SCALAR[name]
    mx.random.seed(5)
    (x,) = _run(build())
    assert x.shape == (N,) and x.dtype == onp.float32
    assert abs(x.mean() - mean) < 5 * onp.sqrt(var / N)
    assert abs(x.var() - var) < 0.08 * var


def test_randint_range_dtype_and_shape():
    mx.random.seed(0)
    (x,) = _run(R.randint(2, 7, shape=(4, 500)))
    assert x.shape == (4, 500) and x.dtype == onp.int32
    assert set(onp.unique(x)) == {2, 3, 4, 5, 6}


def test_dtype_parameter():
    (x,) = _run(R.normal(0, 1, shape=(3,), dtype="float64"))
    assert x.dtype == onp.float64


def test_symbol_parameters_draw_per_element():
    low, high = onp.array([0.0, 10.0], "float32"), onp.array([1.0, 20.0], "float32")
    mx.random.seed(1)
    (x,) = _run(R.uniform(mx.sym.var("low"), mx.sym.var("high"), shape=(3000,)), low=low, high=high)
    assert x.shape == (2, 3000)
    assert (x[0] >= 0).all() and (x[0] < 1).all() and (x[1] >= 10).all() and (x[1] < 20).all()
    assert abs(x[1].mean() - 15) < 0.3
    lam = onp.array([1.0, 4.0], "float32")  # exponential(scale) samples with rate 1 / scale
    (e,) = _run(R.exponential(mx.sym.var("scale"), shape=(N,)), scale=lam)
    onp.testing.assert_allclose(e.mean(axis=1), lam, rtol=0.05)


def test_seed_reproduces_through_bind_and_symbol_block():
    data = mx.sym.var("data")
    out = data + R.normal(0, 1, shape=(4,)) * R.uniform(1, 2, shape=(4,))
    x = onp.arange(4, dtype="float32")
    mx.random.seed(42)
    first = out.bind(mx.cpu(), {"data": mx.nd.array(x)}).forward()[0].asnumpy()
    mx.random.seed(42)
    again = _run(out, data=x)[0]
    onp.testing.assert_array_equal(first, again)
    block = mx.gluon.SymbolBlock(out, [data])
    mx.random.seed(42)
    onp.testing.assert_array_equal(block(mx.nd.array(x)).asnumpy(), first)
    mx.random.seed(43)
    assert not onp.array_equal(_run(out, data=x)[0], first)


def test_like_samplers_take_the_data_shape():
    mx.random.seed(2)
    (x,) = _run(R.uniform_like(mx.sym.var("a"), low=5, high=6), a=onp.zeros((3, 4), "float32"))
    assert x.shape == (3, 4) and (x >= 5).all() and (x < 6).all()
    assert "normal_like" in dir(R) and callable(R.gamma_like)


def test_categorical_outputs_and_probabilities():
    probs = onp.array([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]], "float32")
    sym = R.categorical(mx.sym.var("p"), shape=(50,))
    assert len(sym.list_outputs()) == 2
    mx.random.seed(3)
    idx, logp = _run(sym, p=probs)
    assert idx.shape == (2, 50) and idx.dtype == onp.int32
    assert (idx[0] == 1).all() and set(onp.unique(idx[1])) <= {0, 2}
    onp.testing.assert_allclose(logp[1], onp.log(0.5), rtol=1e-5)
    assert len(R.categorical(mx.sym.var("p"), get_prob=False).list_outputs()) == 1


def test_shuffle_is_a_permutation_of_rows():
    x = onp.arange(12, dtype="float32").reshape(6, 2)
    mx.random.seed(4)
    (y,) = _run(R.shuffle(mx.sym.var("x")), x=x)
    onp.testing.assert_array_equal(onp.sort(y[:, 0]), x[:, 0])
    onp.testing.assert_array_equal(y[:, 1], y[:, 0] + 1)


def test_top_level_aliases():
    mx.random.seed(6)
    (u,) = _run(mx.sym.uniform(low=2, high=3, shape=(100,)))
    (n,) = _run(mx.sym.normal(loc=0, scale=1, shape=(100,)))
    assert (u >= 2).all() and (u < 3).all() and n.shape == (100,)


def test_bad_parameters():
    with pytest.raises(MXNetTypeError, match="all be Symbols or all numbers"):
        R.uniform(mx.sym.var("a"), 1.0)
    with pytest.raises(MXNetValueError, match="either Symbol or numbers"):
        R.normal("zero", "one")
    with pytest.raises(MXNetTypeError, match="low and high must be numbers"):
        R.randint(mx.sym.var("a"), 4)
    with pytest.raises(MXNetTypeError, match="argument p must be a Symbol"):
        R.multinomial(mx.sym.var("n"), [[0.5, 0.5]])
