"""Random ops: shapes and dtypes, the seeded stream, sample statistics, in-place shuffle, bad input.

Every test seeds the stream first, so the statistical checks are deterministic and cannot flake.
"""
import math

import numpy as onp
import pytest

import mxjax as mx
import mxjax.random as mxr
from mxjax._frontend import make_function
from mxjax._ndarray import NDArray

rnd = mx.np.random
N = 20000
EULER = 0.5772156649015329


# function, args, kwargs, expected dtype, mean, variance (of N samples)
STATS = [
    (rnd.uniform, (2.0, 5.0), {}, "float32", 3.5, 0.75),
    (rnd.normal, (1.0, 2.0), {}, "float32", 1.0, 4.0),
    (rnd.standard_normal, (), {}, "float32", 0.0, 1.0),
    (rnd.lognormal, (0.0, 0.5), {}, "float32", math.exp(0.125), (math.exp(0.25) - 1) * math.exp(0.25)),
    (rnd.laplace, (1.0, 2.0), {}, "float32", 1.0, 8.0),
    (rnd.gumbel, (0.0, 1.0), {}, "float32", EULER, math.pi ** 2 / 6),
    (rnd.logistic, (0.0, 1.0), {}, "float32", 0.0, math.pi ** 2 / 3),
    (rnd.gamma, (2.0, 3.0), {}, "float32", 6.0, 18.0),
    (rnd.standard_gamma, (3.0,), {}, "float32", 3.0, 3.0),
    (rnd.beta, (2.0, 3.0), {}, "float32", 0.4, 0.04),
    (rnd.chisquare, (3.0,), {}, "float32", 3.0, 6.0),
    (rnd.exponential, (2.0,), {}, "float32", 2.0, 4.0),
    (rnd.standard_exponential, (), {}, "float32", 1.0, 1.0),
    (rnd.rayleigh, (2.0,), {}, "float32", 2.0 * math.sqrt(math.pi / 2), (4 - math.pi) / 2 * 4.0),
    (rnd.weibull, (2.0,), {}, "float32", math.gamma(1.5), 1.0 - math.gamma(1.5) ** 2),
    (rnd.pareto, (6.0,), {}, "float32", 0.2, 6.0 / (25 * 4)),
    (rnd.power, (3.0,), {}, "float32", 0.75, 3.0 / (16 * 5)),
    (rnd.random, (), {}, "float32", 0.5, 1 / 12),
    (rnd.normal, (0.0, 1.0), {"dtype": "float64"}, "float64", 0.0, 1.0),
    (rnd.uniform, (-1.0, 1.0), {"dtype": "float16"}, "float16", 0.0, 1 / 3),
    (rnd.randint, (0, 10), {}, "int64", 4.5, 99 / 12),
    (rnd.randint, (-3, 3), {"dtype": "int32"}, "int32", -0.5, 35 / 12),
    (rnd.poisson, (4.0,), {}, "int64", 4.0, 4.0),
    (rnd.binomial, (10, 0.3), {}, "int64", 3.0, 2.1),
    (rnd.negative_binomial, (5, 0.5), {}, "int64", 5.0, 10.0),
    # F(3, 20): mean d2/(d2-2), variance 2 d2^2 (d1+d2-2) / (d1 (d2-2)^2 (d2-4))
    (rnd.f, (3.0, 20.0), {}, "float32", 20 / 18, 2 * 400 * 21 / (3 * 324 * 16)),
]


@pytest.mark.parametrize("fn,args,kwargs,dtype,mean,var", STATS,
                         ids=[f"{s[0].__name__}-{i}" for i, s in enumerate(STATS)])
def test_sample_statistics(fn, args, kwargs, dtype, mean, var):
    rnd.seed(1234)
    x = fn(*args, size=N, **kwargs)
    assert isinstance(x, mx.np.ndarray)
    assert x.shape == (N,) and x.dtype == onp.dtype(dtype)
    v = x.asnumpy().astype(onp.float64)
    assert abs(v.mean() - mean) < 5 * math.sqrt(var / N), (v.mean(), mean)
    assert abs(v.var() - var) < 0.1 * var, (v.var(), var)


def test_bounds():
    rnd.seed(0)
    # the sizes and parameter kinds of STATS: these reuse its compiled samplers
    u = rnd.uniform(2.0, 3.0, size=N).asnumpy()
    assert u.min() >= 2.0 and u.max() < 3.0
    r = rnd.randint(5, size=N).asnumpy()
    assert set(r.tolist()) == set(range(5))
    p = rnd.power(0.5, size=N).asnumpy()
    assert p.min() >= 0 and p.max() <= 1
    assert rnd.pareto(3.0, size=N).asnumpy().min() >= 0


@pytest.mark.parametrize("fn,args,kwargs,shape", [
    (rnd.normal, (), {}, ()),
    (rnd.normal, (onp.zeros((2, 1)), onp.ones(3)), {}, (2, 3)),
    (rnd.normal, ([0.0, 10.0], 1.0), {"size": (4, 2)}, (4, 2)),
    (rnd.uniform, (0.0, 1.0), {"size": 5}, (5,)),
    (rnd.uniform, (mx.np.array([0.0, 10.0]), mx.np.array([1.0, 11.0])), {}, (2,)),
    (rnd.laplace, (onp.array([1.0, 2.0, 3.0]),), {"size": (2, 3)}, (2, 3)),
    (rnd.rand, (2, 3), {}, (2, 3)),
    (rnd.randn, (4,), {}, (4,)),
    (rnd.random_sample, ((2, 2),), {}, (2, 2)),
    (rnd.randint, (0, [5, 10, 20]), {}, (3,)),
    (rnd.multivariate_normal, ([0.0, 1.0], [[1.0, 0.0], [0.0, 1.0]]), {"size": (5, 2)}, (5, 2, 2)),
    (rnd.choice, (5,), {}, ()),
    (rnd.choice, (5, (2, 3)), {}, (2, 3)),
])
def test_shapes(fn, args, kwargs, shape):
    assert fn(*args, **kwargs).shape == shape


def test_array_parameters_broadcast():
    rnd.seed(3)
    loc = mx.np.array([[0.0], [100.0]])
    x = rnd.normal(loc, 0.01, size=(2, 1000)).asnumpy()
    onp.testing.assert_allclose(x.mean(axis=1), [0.0, 100.0], atol=0.01)
    assert x.dtype == onp.float32


def test_seed_reproducibility_and_shared_stream():
    def draws():
        return [rnd.uniform(size=3).asnumpy(), rnd.normal(size=(2, 2)).asnumpy(),
                rnd.randint(0, 100, size=4).asnumpy(), mxr.uniform(shape=(3,)).asnumpy()]
    mxr.seed(42)
    first = draws()
    rnd.seed(42)  # np.random.seed and mx.random.seed restart the same stream
    second = draws()
    for a, b in zip(first, second):
        onp.testing.assert_array_equal(a, b)
    third = draws()  # no reseed: new numbers
    assert not onp.array_equal(first[0], third[0]) and not onp.array_equal(first[1], third[1])
    mxr.seed(43)
    assert not onp.array_equal(draws()[0], first[0])


def test_choice():
    rnd.seed(5)
    picks = rnd.choice(10, size=10, replace=False).asnumpy()
    assert sorted(picks.tolist()) == list(range(10)) and picks.dtype == onp.int64
    weighted = rnd.choice(4, size=50, p=[0.0, 0.0, 1.0, 0.0]).asnumpy()
    assert set(weighted.tolist()) == {2}
    without = rnd.choice(5, size=3, replace=False, p=[0.1, 0.2, 0.3, 0.2, 0.2]).asnumpy()
    assert len(set(without.tolist())) == 3
    population = mx.np.array([10.0, 20.0, 30.0])
    drawn = rnd.choice(population, size=(200,))
    assert drawn.dtype == onp.float32 and set(drawn.asnumpy().tolist()) == {10.0, 20.0, 30.0}
    assert set(rnd.choice([7, 8], size=20).asnumpy().tolist()) == {7, 8}
    counts = onp.bincount(rnd.choice(3, size=N, p=[0.2, 0.3, 0.5]).asnumpy(), minlength=3) / N
    onp.testing.assert_allclose(counts, [0.2, 0.3, 0.5], atol=0.02)


def test_shuffle_in_place_and_permutation():
    rnd.seed(6)
    x = mx.np.array(onp.arange(20.0).reshape(10, 2))
    holder = x
    assert rnd.shuffle(x) is None
    got = x.asnumpy()
    assert holder is x and x.shape == (10, 2)
    assert not onp.array_equal(got, onp.arange(20.0).reshape(10, 2))
    onp.testing.assert_array_equal(onp.sort(got[:, 0]), onp.arange(0, 20, 2))
    onp.testing.assert_array_equal(got[:, 1] - got[:, 0], 1.0)  # rows move whole
    perm = rnd.permutation(8).asnumpy()
    assert sorted(perm.tolist()) == list(range(8)) and perm.dtype == onp.int64
    src = mx.np.array([1.0, 2.0, 3.0, 4.0])
    shuffled = rnd.permutation(src)
    onp.testing.assert_array_equal(src.asnumpy(), [1.0, 2.0, 3.0, 4.0])
    assert sorted(shuffled.asnumpy().tolist()) == [1.0, 2.0, 3.0, 4.0]


def test_multinomial_and_multivariate_normal():
    rnd.seed(7)
    counts = rnd.multinomial(20, [0.1, 0.2, 0.7], size=2000).asnumpy()
    assert counts.shape == (2000, 3) and counts.dtype == onp.int64 and (counts.sum(axis=1) == 20).all()
    onp.testing.assert_allclose(counts.mean(axis=0), [2.0, 4.0, 14.0], rtol=0.05)
    pvals = mx.np.array(onp.array([0.1, 0.2, 0.7]))  # pvals as a device array: an op input as well
    assert rnd.multinomial(20, pvals, size=2000).shape == (2000, 3)
    cov = onp.array([[2.0, 0.6], [0.6, 1.0]])
    x = rnd.multivariate_normal([1.0, -1.0], cov, size=N).asnumpy()
    assert x.shape == (N, 2) and x.dtype == onp.float32
    onp.testing.assert_allclose(x.mean(axis=0), [1.0, -1.0], atol=0.05)
    onp.testing.assert_allclose(onp.cov(x.T), cov, atol=0.08)


def test_out_and_device():
    out = mx.np.array(onp.zeros((3, 2), onp.float32))
    assert rnd.uniform(out=out) is out and (out.asnumpy() > 0).any()
    assert rnd.normal(size=(2,), device=mx.cpu()).device == mx.cpu()


BAD = [
    (lambda: rnd.normal(0.0, -1.0), ValueError, "normal: scale must be >= 0"),
    (lambda: rnd.exponential([1.0, -2.0]), ValueError, "exponential: scale must be >= 0"),
    (lambda: rnd.beta(0.0, 1.0), ValueError, "beta: a must be > 0"),
    (lambda: rnd.gamma(-1.0), ValueError, "gamma: shape must be >= 0"),
    (lambda: rnd.binomial(5, 1.5), ValueError, r"binomial: p must be in \[0, 1\]"),
    (lambda: rnd.poisson(-1.0), ValueError, "poisson: lam must be >= 0"),
    (lambda: rnd.randint(3, 3), ValueError, "randint: low >= high"),
    (lambda: rnd.normal(onp.zeros(3), 1.0, size=(2,)), ValueError,
     r"normal: size \(2,\) does not fit the parameters' broadcast shape \(3,\)"),
    (lambda: rnd.uniform(onp.zeros(2), onp.ones(3)), ValueError, "uniform: the distribution parameters"),
    (lambda: rnd.uniform(size=(2, -1)), ValueError, "negative dimensions"),
    (lambda: rnd.uniform(dtype="int32"), TypeError, "uniform: dtype must be a floating-point type"),
    (lambda: rnd.choice(3, size=5, replace=False), ValueError, "choice: cannot take a larger sample"),
    (lambda: rnd.choice(3, p=[0.5, 0.6, 0.1]), ValueError, "choice: probabilities do not sum to 1"),
    (lambda: rnd.choice(3, p=mx.np.array([0.5, 0.5])), ValueError, r"choice: p must have shape \(3,\)"),
    (lambda: rnd.choice(mx.np.array(onp.ones((2, 2)))), ValueError, "choice: a must be 1-dimensional"),
    (lambda: rnd.multinomial(3, [0.7, 0.7, 0.1]), ValueError, "multinomial: pvals must be probabilities"),
    (lambda: rnd.multivariate_normal([0.0], [[1.0, 0.0], [0.0, 1.0]]), ValueError,
     "multivariate_normal: expected mean of shape"),
    (lambda: rnd.multivariate_normal([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]], check_valid="raise"), ValueError,
     "not symmetric positive-semidefinite"),
    (lambda: rnd.shuffle(onp.arange(3)), TypeError, "shuffle: x must be an mx.np.ndarray"),
    (lambda: rnd.permutation(mx.np.array(3.0)), IndexError, "permutation: x must be an integer"),
    (lambda: mxr.normal(0, -1, shape=(2,)), ValueError, "normal: scale must be >= 0"),
    (lambda: mxr.randint(5, 2), ValueError, "randint: low >= high"),
]


@pytest.mark.parametrize("call,error,message", BAD, ids=[b[2][:30] for b in BAD])
def test_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_multivariate_normal_warns_for_non_psd():
    with pytest.warns(RuntimeWarning, match="positive-semidefinite"):
        rnd.multivariate_normal([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]], size=2)


# -- mx.random: MXNet's legacy-compatible namespace over the same ops ----------------------------
def test_mx_random_shapes_and_dtypes():
    mxr.seed(11)
    assert mxr.uniform().shape == (1,)  # scalar parameters, no shape: one sample, as MXNet
    x = mxr.uniform(-1, 1, shape=(2, 3), ctx=mx.cpu())
    assert x.shape == (2, 3) and x.dtype == onp.float32 and isinstance(x, NDArray)
    assert mxr.normal(0, 1, (4,), dtype="float64").dtype == onp.float64
    assert mxr.randn(2, 5).shape == (2, 5)
    r = mxr.randint(0, 5, shape=(100,))
    assert r.dtype == onp.int32 and 0 <= r.asnumpy().min() and r.asnumpy().max() < 5
    p = mxr.poisson(3.0, shape=(N,))
    assert p.dtype == onp.float32 and abs(p.asnumpy().mean() - 3) < 5 * math.sqrt(3 / N)
    e = mxr.exponential(2.0, shape=(N,)).asnumpy()
    assert abs(e.mean() - 2) < 5 * math.sqrt(4 / N)
    g = mxr.gamma(2.0, 3.0, shape=(N,)).asnumpy()
    assert abs(g.mean() - 6) < 5 * math.sqrt(18 / N)
    nb = mxr.negative_binomial(5, 0.5, shape=(N,))
    assert nb.dtype == onp.float32 and abs(nb.asnumpy().mean() - 5) < 5 * math.sqrt(10 / N)


def test_mx_random_is_nd_random_legacy_arrays_in_every_mode():
    # MXNet 2.0.0b1: mx.random.uniform is mx.nd.random.uniform, an NDArray even under set_np
    assert mxr.uniform is mx.nd.random.uniform and mxr.multinomial is mx.nd.random.multinomial
    from mxjax import _config
    with _config.np_array(False):
        assert type(mxr.uniform(shape=(2,))) is NDArray
    assert type(mxr.uniform(shape=(2,))) is NDArray
    previous = _config.set_np_default_dtype(True)  # npx.set_np(dtype=True): float64 default, as 2.0.0b1
    try:
        assert rnd.uniform(size=(2,)).dtype == onp.float64
        assert mxr.normal(shape=(2,)).dtype == onp.float64
    finally:
        _config.set_np_default_dtype(previous)
    assert rnd.uniform(size=(2,)).dtype == onp.float32


def test_mx_random_array_parameters_add_sample_axes():
    mxr.seed(12)
    low, high = mx.np.array([0.0, 10.0]), mx.np.array([1.0, 11.0])
    x = mxr.uniform(low, high, shape=(500,)).asnumpy()  # MXNet's _sample_uniform: param.shape + shape
    assert x.shape == (2, 500)
    assert x[0].min() >= 0 and x[0].max() < 1 and x[1].min() >= 10 and x[1].max() < 11
    y = mxr.normal(mx.np.array([0.0, 5.0, 10.0]), mx.np.array([1.0, 1.0, 1.0])).asnumpy()
    assert y.shape == (3,)


def test_mx_random_multinomial_counts_categorical_indices_and_shuffle():
    mxr.seed(13)
    # MXNet 2.0's mx.random.multinomial(n, p): counts of n draws per row, shape n.shape + shape + (k,)
    counts = mxr.multinomial(mx.nd.array([5, 7]), mx.nd.array([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]]), shape=4)
    c = counts.asnumpy()
    assert c.shape == (2, 4, 3) and counts.dtype == onp.float32
    onp.testing.assert_array_equal(c[0], [[0, 5, 0]] * 4)
    onp.testing.assert_array_equal(c.sum(-1), [[5] * 4, [7] * 4])
    assert (c[1, :, 1] == 0).all()
    with pytest.raises(TypeError, match="multinomial: argument n must be an NDArray"):
        mxr.multinomial(5, mx.nd.array([[1.0]]))
    probs = mx.nd.array([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]])
    idx = mxr.categorical(probs)
    assert idx.shape == (2,) and idx.dtype == onp.int32 and int(idx.asnumpy()[0]) == 1
    idx, logp = mxr.categorical(probs, shape=(1000,), get_prob=True)
    assert idx.shape == logp.shape == (2, 1000)
    assert set(idx.asnumpy()[1].tolist()) == {0, 2}
    onp.testing.assert_allclose(logp.asnumpy()[1], math.log(0.5), rtol=1e-6)
    data = mx.nd.array(onp.arange(6.0))
    shuffled = mxr.shuffle(data)
    onp.testing.assert_array_equal(data.asnumpy(), onp.arange(6.0))  # mx.random.shuffle copies
    assert sorted(shuffled.asnumpy().tolist()) == list(range(6))


# -- ops with no binding in the namespaces above (npx.random) -------------------------------------
def _npx(op):
    return make_function(op, name=op, out_cls=mx.np.ndarray)


def test_bernoulli_and_batched_samplers():
    mxr.seed(14)
    bern = _npx("_npi_bernoulli")
    b = bern(prob=0.3, size=(N,)).asnumpy()
    assert b.dtype == onp.float32 and set(onp.unique(b).tolist()) == {0.0, 1.0}
    assert abs(b.mean() - 0.3) < 5 * math.sqrt(0.21 / N)
    by_logit = bern(logit=onp.array([-50.0, 50.0])).asnumpy()
    onp.testing.assert_array_equal(by_logit, [0.0, 1.0])
    with pytest.raises(ValueError, match="bernoulli: give exactly one of prob and logit"):
        bern(size=(2,))
    idx, logp = _npx("_npi_categorical")(onp.array([[0.0, 1.0], [0.5, 0.5]]), shape=(200,))
    assert idx.shape == logp.shape == (2, 200) and (idx.asnumpy()[0] == 1).all()
    onp.testing.assert_allclose(logp.asnumpy()[1], math.log(0.5), rtol=1e-6)
    un = _npx("_npi_uniform_n")(onp.zeros(3), onp.ones(3), size=(4,))
    assert un.shape == (4, 3)
    nn = _npx("_npi_normal_n")(onp.zeros((2, 1)), 1.0, size=(5,))
    assert nn.shape == (5, 2, 1)


def test_reparameterized_gradient():
    import jax
    op = mx.operator.get_op("_npi_normal")
    key = jax.random.PRNGKey(0)
    grad = jax.jit(jax.grad(lambda loc, scale: op.compute(key, loc, scale, size=(100,)).sum(), argnums=(0, 1)))
    dloc, dscale = grad(1.0, 2.0)
    eps = op.compute(key, 0.0, 1.0, size=(100,))
    onp.testing.assert_allclose(float(dloc), 100.0)
    onp.testing.assert_allclose(float(dscale), float(eps.sum()), rtol=1e-5)
