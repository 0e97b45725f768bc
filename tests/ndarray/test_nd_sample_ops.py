"""mx.nd's per-row samplers (sample_*) and densities (random_pdf_*): shapes, dtypes, per-row
parameters, sample means within statistical tolerance, densities and gradients against SciPy."""
import numpy as onp
import pytest
from scipy import stats

import mxjax as mx
from mxjax import nd


def test_sample_ops_shapes_and_per_row_parameters():
    mu = nd.array([[0.0, 10.0], [-10.0, 100.0]])
    sigma = nd.array([[1.0, 1.0], [1.0, 2.0]])
    draws = nd.sample_normal(mu, sigma, shape=(4000,))
    assert draws.shape == (2, 2, 4000) and draws.dtype == onp.float32
    onp.testing.assert_allclose(draws.asnumpy().mean(axis=-1), mu.asnumpy(), atol=0.15)
    assert nd.sample_normal(mu, sigma).shape == (2, 2)
    rates = nd.sample_poisson(nd.array([1.0, 30.0]), shape=(3000,))
    onp.testing.assert_allclose(rates.asnumpy().mean(axis=1), [1.0, 30.0], rtol=0.05)
    gam = nd.sample_gamma(nd.array([2.0]), nd.array([3.0]), shape=(2, 5), dtype="float64")
    assert gam.shape == (1, 2, 5) and gam.dtype == onp.float64
    for sampler, params in ((nd.sample_exponential, [nd.array([2.0])]),
                            (nd.sample_negative_binomial, [nd.array([3.0]), nd.array([0.5])]),
                            (nd.sample_generalized_negative_binomial, [nd.array([2.0]), nd.array([0.5])]),
                            (nd.sample_uniform, [nd.array([0.0]), nd.array([2.0])])):
        assert sampler(*params, shape=(4,)).shape == (1, 4)
    bino = nd.sample_binomial(nd.array([5.0, 10.0]), nd.array([0.5, 0.1]), shape=3)
    assert bino.shape == (2, 3) and (bino.asnumpy() <= onp.array([[5], [10]])).all()
    with pytest.raises(mx.base.MXNetError, match="must have one shape"):
        nd.sample_uniform(nd.zeros((2,)), nd.ones((3,)))


def test_sample_multinomial_and_categorical():
    p = nd.array([[0.2, 0.8], [1.0, 0.0]])
    counts = nd.sample_multinomial(nd.array([3.0, 4.0]), p, shape=(5,))
    assert counts.shape == (2, 5, 2) and counts.dtype == onp.float32
    onp.testing.assert_array_equal(counts.asnumpy().sum(axis=-1), [[3] * 5, [4] * 5])
    onp.testing.assert_array_equal(counts.asnumpy()[1, :, 1], 0)
    idx, logp = nd.sample_categorical(p, shape=(6,), get_prob=True)
    assert idx.shape == (2, 6) and idx.dtype == onp.int32 and logp.dtype == onp.float32
    onp.testing.assert_array_equal(idx.asnumpy()[1], 0)
    onp.testing.assert_allclose(logp.asnumpy(), onp.log(p.asnumpy()[[[0], [1]], idx.asnumpy()]), rtol=1e-6)
    assert nd.sample_categorical(p).shape == (2,)


DENSITIES = [
    (nd.random_pdf_normal, [nd.array([0.0, 1.0]), nd.array([1.0, 2.0])], lambda x, m, s: stats.norm.pdf(x, m, s)),
    (nd.random_pdf_uniform, [nd.array([0.0, -1.0]), nd.array([2.0, 3.0])],
     lambda x, a, b: stats.uniform.pdf(x, a, b - a)),
    (nd.random_pdf_gamma, [nd.array([2.0, 3.0]), nd.array([1.5, 0.5])], lambda x, a, b: stats.gamma.pdf(x, a, scale=b)),
    (nd.random_pdf_exponential, [nd.array([1.0, 3.0])], lambda x, lam: stats.expon.pdf(x, scale=1 / lam)),
]


@pytest.mark.parametrize("density,params,reference", DENSITIES, ids=[d[0].__name__ for d in DENSITIES])
def test_continuous_densities_match_scipy(density, params, reference):
    sample = onp.array([[0.3, 0.7, 1.9], [0.2, 1.5, 2.5]], onp.float32)
    got = density(nd.array(sample), *params)
    want = reference(sample, *(p.asnumpy()[:, None] for p in params))
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-6)
    logs = density(nd.array(sample), *params, is_log=True)
    onp.testing.assert_allclose(onp.exp(logs.asnumpy()), want, rtol=1e-4, atol=1e-6)


def test_discrete_and_dirichlet_densities_match_scipy():
    x = onp.array([[0.0, 1.0, 4.0]], onp.float32)
    onp.testing.assert_allclose(nd.random_pdf_poisson(nd.array(x), nd.array([2.0])).asnumpy(),
                                stats.poisson.pmf(x, 2.0), rtol=1e-5)
    onp.testing.assert_allclose(nd.random_pdf_negative_binomial(nd.array(x), nd.array([3.0]),
                                                                nd.array([0.4])).asnumpy(),
                                stats.nbinom.pmf(x, 3, 0.4), rtol=1e-5)
    mu, alpha = 2.0, 0.5
    onp.testing.assert_allclose(
        nd.random_pdf_generalized_negative_binomial(nd.array(x), nd.array([mu]), nd.array([alpha])).asnumpy(),
        stats.nbinom.pmf(x, 1 / alpha, 1 / (1 + alpha * mu)), rtol=1e-5)
    sample = onp.array([[[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]], onp.float32)
    got = nd.random_pdf_dirichlet(nd.array(sample), nd.array([[1.0, 2.0, 3.0]]))
    want = [[stats.dirichlet.pdf(s, [1.0, 2.0, 3.0]) for s in sample[0]]]
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4)


def test_density_gradient_matches_finite_differences():
    x, mu, sigma = onp.array([[0.3, 1.2]]), onp.array([0.5]), onp.array([1.5])
    args = [nd.array(v, dtype="float64") for v in (x, mu, sigma)]
    for a in args:
        a.attach_grad()
    with mx.autograd.record():
        out = nd.random_pdf_normal(*args, is_log=True).sum()
    out.backward()
    eps = 1e-6
    f = lambda x, m, s: stats.norm.logpdf(x, m[:, None], s[:, None]).sum()  # noqa: E731
    for i, value in enumerate((x, mu, sigma)):
        for j in range(value.size):
            hi, lo = [v.copy() for v in (x, mu, sigma)], [v.copy() for v in (x, mu, sigma)]
            hi[i].flat[j] += eps
            lo[i].flat[j] -= eps
            numeric = (f(*hi) - f(*lo)) / (2 * eps)
            assert abs(args[i].grad.asnumpy().flat[j] - numeric) < 1e-5
