"""mx.gluon.probability against MXNet 2.0 fixtures, scipy.stats, sample moments and autograd."""
from __future__ import annotations

import json
import math
import pathlib

import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd, np
from mxjax.gluon import probability as mgp

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "probability"
CASES = sorted(p.stem for p in FIXTURES.glob("*.npz") if not p.stem.startswith("kl_"))
KL_CASES = sorted(p.stem for p in FIXTURES.glob("kl_*.npz"))
# Where mxjax deliberately differs from MXNet 2.0.0b1 (see the module docstrings):
DIFFERS = {("negative_binomial", "mean"), ("negative_binomial", "variance"),  # MXNet's are of nbinom(n, 1-p)
           ("kl_mvn", "kl")}  # MXNet halves the log-det term and negates the Mahalanobis term


def _args(data, prefix, scalars):
    args = {k[len(prefix):]: np.array(data[k]) for k in data.files if k.startswith(prefix)}
    args.update(scalars)
    return args


@pytest.mark.parametrize("case", CASES)
def test_matches_mxnet(case):
    data = onp.load(FIXTURES / f"{case}.npz")
    spec = json.loads(str(data["spec"]))
    dist = getattr(mgp, spec["cls"])(**_args(data, "arg_", spec["scalars"]))
    calls = {"log_prob": lambda: dist.log_prob(np.array(data["value"])),
             "cdf": lambda: dist.cdf(np.array(data["value"])),
             "icdf": lambda: dist.icdf(np.array(data["icdf_in"])),
             "mean": lambda: dist.mean, "variance": lambda: dist.variance, "entropy": dist.entropy}
    checked = 0
    for key, call in calls.items():
        if key not in data.files or (case, key) in DIFFERS:
            continue
        got = call()
        got = got.asnumpy() if hasattr(got, "asnumpy") else onp.asarray(got)
        onp.testing.assert_allclose(onp.broadcast_to(got, data[key].shape), data[key], rtol=2e-4, atol=2e-5,
                                    err_msg=f"{case}.{key}")
        checked += 1
    assert checked


@pytest.mark.parametrize("case", KL_CASES)
def test_kl_matches_mxnet(case):
    data = onp.load(FIXTURES / f"{case}.npz")
    spec = json.loads(str(data["spec"]))
    p = getattr(mgp, spec["p"])(**_args(data, "p_", spec["p_scalars"]))
    q = getattr(mgp, spec["q"])(**_args(data, "q_", spec["q_scalars"]))
    got = mgp.kl_divergence(p, q).asnumpy()
    if (case, "kl") in DIFFERS:  # check against the closed form instead
        cov_p, cov_q = data["p_cov"].astype("float64"), data["q_cov"].astype("float64")
        diff = (data["q_loc"] - data["p_loc"]).astype("float64")
        prec_q = onp.linalg.inv(cov_q)
        want = 0.5 * (onp.log(onp.linalg.det(cov_q) / onp.linalg.det(cov_p))
                      + onp.trace(prec_q @ cov_p, axis1=-2, axis2=-1)
                      + onp.einsum("bi,bij,bj->b", diff, prec_q, diff) - 3)
        onp.testing.assert_allclose(got, want, rtol=1e-4)
        # and against the Monte Carlo estimate, which needs no formula
        mc = mgp.empirical_kl(p, q, 40000).asnumpy()
        onp.testing.assert_allclose(mc, want, rtol=0.1, atol=0.05)
        return
    onp.testing.assert_allclose(got, data["kl"], rtol=2e-4, atol=1e-5)


scipy_stats = pytest.importorskip("scipy.stats")
V = onp.array([0.3, 1.2, 2.5], "float32")
K = onp.array([0.0, 1.0, 3.0], "float32")
SCIPY = [
    (lambda: mgp.Normal(0.5, 2.0), scipy_stats.norm(0.5, 2.0).logpdf, V),
    (lambda: mgp.Laplace(0.5, 2.0), scipy_stats.laplace(0.5, 2.0).logpdf, V),
    (lambda: mgp.Cauchy(0.5, 2.0), scipy_stats.cauchy(0.5, 2.0).logpdf, V),
    (lambda: mgp.Gumbel(0.5, 2.0), scipy_stats.gumbel_r(0.5, 2.0).logpdf, V),
    (lambda: mgp.Uniform(0.0, 3.0), scipy_stats.uniform(0.0, 3.0).logpdf, V),
    (lambda: mgp.StudentT(4.0, 0.5, 2.0), scipy_stats.t(4.0, 0.5, 2.0).logpdf, V),
    (lambda: mgp.Exponential(2.0), scipy_stats.expon(scale=2.0).logpdf, V),
    (lambda: mgp.Gamma(2.5, 1.5), scipy_stats.gamma(2.5, scale=1.5).logpdf, V),
    (lambda: mgp.Chi2(3.0), scipy_stats.chi2(3.0).logpdf, V),
    (lambda: mgp.Beta(2.0, 3.0), scipy_stats.beta(2.0, 3.0).logpdf, V / 3),
    (lambda: mgp.FisherSnedecor(3.0, 5.0), scipy_stats.f(3.0, 5.0).logpdf, V),
    (lambda: mgp.HalfNormal(2.0), scipy_stats.halfnorm(scale=2.0).logpdf, V),
    (lambda: mgp.HalfCauchy(2.0), scipy_stats.halfcauchy(scale=2.0).logpdf, V),
    (lambda: mgp.Pareto(3.0, 0.2), scipy_stats.pareto(3.0, scale=0.2).logpdf, V),
    (lambda: mgp.Weibull(1.5, 2.0), scipy_stats.weibull_min(1.5, scale=2.0).logpdf, V),
    (lambda: mgp.Bernoulli(prob=0.3), scipy_stats.bernoulli(0.3).logpmf, onp.array([0.0, 1.0], "float32")),
    (lambda: mgp.Binomial(4, prob=0.3), scipy_stats.binom(4, 0.3).logpmf, K),
    (lambda: mgp.Geometric(prob=0.3), lambda k: scipy_stats.geom(0.3).logpmf(k + 1), K),
    (lambda: mgp.NegativeBinomial(3.0, prob=0.4), scipy_stats.nbinom(3.0, 0.4).logpmf, K),
    (lambda: mgp.Poisson(2.0), scipy_stats.poisson(2.0).logpmf, K),
]


@pytest.mark.parametrize("make,ref,value", SCIPY, ids=[str(i) for i in range(len(SCIPY))])
def test_log_prob_matches_scipy(make, ref, value):
    dist = make()
    onp.testing.assert_allclose(dist.log_prob(np.array(value)).asnumpy(), ref(value.astype("float64")),
                                rtol=1e-4, atol=1e-5)


def test_multivariate_log_prob_matches_scipy():
    cov = onp.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.5]], "float32")
    loc = onp.array([0.1, -0.2, 0.3], "float32")
    x = onp.array([[0.5, 0.1, -1.0], [1.0, 1.0, 1.0]], "float32")
    for kw in ({"cov": cov}, {"precision": onp.linalg.inv(cov)}, {"scale_tril": onp.linalg.cholesky(cov)}):
        dist = mgp.MultivariateNormal(np.array(loc), **{k: np.array(v) for k, v in kw.items()})
        onp.testing.assert_allclose(dist.log_prob(np.array(x)).asnumpy(),
                                    scipy_stats.multivariate_normal(loc, cov).logpdf(x), rtol=1e-4)
    alpha = onp.array([1.5, 2.0, 0.7], "float32")
    p = onp.array([0.2, 0.5, 0.3], "float32")
    onp.testing.assert_allclose(mgp.Dirichlet(np.array(alpha)).log_prob(np.array(p)).asnumpy(),
                                scipy_stats.dirichlet(alpha).logpdf(p), rtol=1e-4)


MOMENTS = [
    lambda: mgp.Normal(np.array([0.5, -1.0]), 2.0),
    lambda: mgp.Gamma(np.array([0.5, 2.0]), 1.5),
    lambda: mgp.Beta(np.array([0.5, 2.0]), 1.5),
    lambda: mgp.HalfNormal(np.array([0.5, 2.0])),
    lambda: mgp.Weibull(np.array([1.5, 3.0]), 2.0),
    lambda: mgp.Bernoulli(prob=np.array([0.2, 0.7])),
    lambda: mgp.Binomial(5, prob=np.array([0.2, 0.7])),
    lambda: mgp.Geometric(prob=np.array([0.3, 0.7])),
    lambda: mgp.NegativeBinomial(np.array([2.0, 5.0]), prob=0.4),
    lambda: mgp.Poisson(np.array([0.5, 4.0])),
    lambda: mgp.Categorical(3, prob=np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])),
    lambda: mgp.OneHotCategorical(3, prob=np.array([0.2, 0.3, 0.5])),
    lambda: mgp.Multinomial(3, prob=np.array([0.2, 0.3, 0.5]), total_count=4),
    lambda: mgp.Dirichlet(np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 2.0]])),
    lambda: mgp.MultivariateNormal(np.array([1.0, -1.0]), cov=np.array([[2.0, 0.8], [0.8, 1.0]])),
    lambda: mgp.Independent(mgp.Normal(np.zeros((2, 3)), 2.0), 1),
]


@pytest.mark.parametrize("make", MOMENTS, ids=[str(i) for i in range(len(MOMENTS))])
def test_sample_moments_and_shapes(make):
    mx.random.seed(3)
    dist = make()
    n = 10000
    samples = dist.sample_n(n)
    batch = onp.broadcast_shapes(onp.shape(dist.mean), onp.shape(dist.variance))
    assert samples.shape == (n,) + batch  # one shape per distribution: each new shape compiles
    assert samples.dtype == onp.float32 or dist.__class__.__name__ == "Categorical"
    x = samples.asnumpy().astype("float64")
    mean = onp.broadcast_to(onp.asarray(dist.mean.asnumpy() if hasattr(dist.mean, "asnumpy") else dist.mean), batch)
    var = onp.broadcast_to(onp.asarray(dist.variance.asnumpy() if hasattr(dist.variance, "asnumpy")
                                       else dist.variance), batch)
    onp.testing.assert_allclose(x.mean(0), mean, rtol=0.06, atol=0.06 * onp.sqrt(var).max())
    onp.testing.assert_allclose(x.var(0), var, rtol=0.12, atol=0.02)


def test_mvn_sample_covariance():
    cov = onp.array([[2.0, 0.8, 0.1], [0.8, 1.0, -0.3], [0.1, -0.3, 0.5]])
    mx.random.seed(4)
    x = mgp.MultivariateNormal(np.zeros(3), cov=np.array(cov, dtype="float32")).sample_n(40000).asnumpy()
    onp.testing.assert_allclose(onp.cov(x.T), cov, atol=0.06)


def test_sample_shapes_match_mxnet():
    # shapes MXNet 2.0 gives for the same calls (the ones its own sampler does not reject)
    assert mgp.Normal(np.zeros((2, 3)), 1.0).sample_n((4, 5)).shape == (4, 5, 2, 3)
    assert mgp.Normal(0.0, 1.0).sample_n(4).shape == (4,)
    assert mgp.Normal(0.0, 1.0).sample((2,)).shape == (2,)
    assert mgp.Normal(0.0, 1.0).sample().shape == ()
    assert mgp.Normal(np.zeros((2, 3)), 1.0).sample((4, 2, 3)).shape == (4, 2, 3)
    assert mgp.Bernoulli(logit=np.zeros((3,))).sample((2, 3)).shape == (2, 3)
    p = np.array([[0.2, 0.3, 0.5]] * 2)
    assert mgp.OneHotCategorical(3, prob=p).sample_n(4).shape == (4, 2, 3)
    assert mgp.Categorical(3, prob=p).sample((5, 2)).shape == (5, 2)
    assert mgp.Independent(mgp.Normal(np.zeros((2, 3)), 1.0), 1).log_prob(np.zeros((2, 3))).shape == (2,)
    assert mgp.Categorical(3, prob=p).log_prob(np.array([[1, 2], [0, 0], [2, 2]])).shape == (3, 2)
    onp.testing.assert_array_equal(mgp.Categorical(3, prob=p).enumerate_support().asnumpy(),
                                   [[0, 0], [1, 1], [2, 2]])
    assert mgp.Normal(0.0, 1.0).broadcast_to((2, 3)).loc.shape == (2, 3)
    assert mgp.Categorical(3, prob=np.array([0.2, 0.3, 0.5])).broadcast_to((2,)).prob.shape == (2, 3)
    assert mgp.Independent(mgp.Normal(np.zeros((3,)), 1.0), 1).broadcast_to((2,)).sample().shape == (2, 3)
    assert mgp.RelaxedOneHotCategorical(0.5, 3, prob=p).sample_n(4).shape == (4, 2, 3)


def test_scalar_parameters_give_python_numbers():
    assert mgp.Gamma(2.0, 3.0).mean == 6.0
    assert isinstance(mgp.Normal(0.0, 1.0).entropy(), float)
    assert mgp.Normal(np.zeros(2), 1.0).log_prob(np.ones(2)).dtype == onp.float32


def test_validate_args_errors():
    with pytest.raises(ValueError, match="Constraint violated: -1.0 should be greater than 0"):
        mgp.Normal(0.0, -1.0, validate_args=True)
    with pytest.raises(ValueError, match="should be greater than 0"):
        mgp.Normal(0.0, np.array([-1.0]), validate_args=True)
    with pytest.raises(ValueError, match=r"should be >= .* and <= "):
        mgp.Uniform(np.zeros(1), np.ones(1), validate_args=True).log_prob(np.array([2.0]))
    with pytest.raises(ValueError, match="should be integer"):
        mgp.Poisson(2.0, validate_args=True).log_prob(np.array([1.5]))
    with pytest.raises(ValueError, match="rightmost dimension should sum up to 1"):
        mgp.Categorical(2, prob=np.array([0.5, 0.6]), validate_args=True)
    with pytest.raises(ValueError, match="Either `prob` or `logit` must be specified, but not both"):
        mgp.Bernoulli(prob=0.3, logit=0.1)
    with pytest.raises(ValueError, match="Expect `n` to be non-negative integer, received n=-1"):
        mgp.Binomial(-1, prob=0.3)
    with pytest.raises(ValueError, match="`num_events` should be greater than zero"):
        mgp.Categorical(0, prob=np.ones(1))
    with pytest.raises(NotImplementedError, match="KL divergence between Normal and Gamma is not implemented"):
        mgp.kl_divergence(mgp.Normal(0.0, 1.0), mgp.Gamma(1.0, 1.0))
    mgp.Chi2(np.array([3.0]), validate_args=True)  # read-only ``df`` is checked, not assigned
    with pytest.raises(ValueError):
        mgp.Distribution.set_default_validate_args(3)


def test_register_kl_and_dispatch():
    class MyNormal(mgp.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), mgp.Normal(1.0, 2.0)
    base = float(mgp.kl_divergence(p, q))  # falls back to Normal/Normal

    @mgp.register_kl(MyNormal, mgp.Normal)
    def _kl(a, b):
        return base + 1

    assert float(mgp.kl_divergence(p, q)) == base + 1
    with pytest.raises(TypeError, match="exactly two arguments"):
        mgp.register_kl(MyNormal, MyNormal)(lambda a: a)


def test_transformations():
    x = np.array([-1.0, 0.5, 2.0])
    for t in (mgp.ExpTransform(), mgp.AffineTransform(1.0, -2.0), mgp.SigmoidTransform(),
              mgp.ComposeTransform([mgp.AffineTransform(0.5, 3.0), mgp.ExpTransform()])):
        y = t(x)
        onp.testing.assert_allclose(t.inv(y).asnumpy(), x.asnumpy(), rtol=1e-4, atol=1e-5)
        # log|dy/dx| against autograd
        xg = x.copy()
        xg.attach_grad()
        with autograd.record():
            out = t(xg).sum()
        out.backward()
        onp.testing.assert_allclose(t.log_det_jacobian(x, y).asnumpy(), onp.log(onp.abs(xg.grad.asnumpy())),
                                    rtol=1e-4, atol=1e-5)
        onp.testing.assert_allclose(t.inv.log_det_jacobian(y, x).asnumpy(),
                                    -t.log_det_jacobian(x, y).asnumpy(), rtol=1e-5)
    power = mgp.PowerTransform(2.0)
    onp.testing.assert_allclose(power.inv(power(np.array([1.5]))).asnumpy(), [1.5], rtol=1e-6)
    assert mgp.SoftmaxTransform()(x).sum().item() == pytest.approx(1.0)
    assert mgp.AbsTransform()(x).min().item() == 0.5
    assert isinstance(mgp.biject_to(mgp.distributions.constraint.Positive()), mgp.ExpTransform)
    to_interval = mgp.transform_to(mgp.distributions.constraint.Interval(-1.0, 3.0))
    assert ((to_interval(x) > -1) & (to_interval(x) < 3)).all()
    with pytest.raises(NotImplementedError, match="Cannot transform Real constraints"):
        mgp.biject_to(mgp.distributions.constraint.Real())


def test_transformed_distribution_is_lognormal():
    lognormal = mgp.TransformedDistribution(mgp.Normal(0.3, 0.8), [mgp.ExpTransform()])
    v = onp.array([0.5, 1.0, 3.0], "float32")
    onp.testing.assert_allclose(lognormal.log_prob(np.array(v)).asnumpy(),
                                scipy_stats.lognorm(0.8, scale=math.exp(0.3)).logpdf(v), rtol=1e-4)
    onp.testing.assert_allclose(lognormal.cdf(np.array(v)).asnumpy(),
                                scipy_stats.lognorm(0.8, scale=math.exp(0.3)).cdf(v), rtol=1e-4)
    onp.testing.assert_allclose(lognormal.icdf(lognormal.cdf(np.array(v))).asnumpy(), v, rtol=1e-4)


def test_constraints():
    c = mgp.distributions.constraint
    assert c.Positive().check(2.0) == 2.0
    with pytest.raises(ValueError, match="should be less than or equal to 1"):
        c.LessThanEq(1).check(np.array([2.0]))
    with pytest.raises(ValueError, match="lower triangular"):
        c.LowerCholesky().check(np.array([[1.0, 1.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="positive definite"):
        c.PositiveDefinite().check(np.array([[1.0, 2.0], [2.0, 1.0]]))
    out = c.Cat([c.Positive(), c.Real()], axis=0, lengths=[1, 2]).check(np.array([1.0, -1.0, 2.0]))
    assert out.shape == (3,)
    with pytest.raises(ValueError):
        c.Stack([c.Positive(), c.Positive()], axis=0).check(np.array([[1.0], [-1.0]]))


def test_log_prob_hybridized_matches_imperative():
    class LogLik(mx.gluon.HybridBlock):
        def forward(self, loc, scale, x):
            normal = mgp.Normal(loc, scale)
            gamma = mgp.Gamma(scale, 2.0)
            cat = mgp.Categorical(3, logit=np.stack([loc, scale, loc * scale], -1))
            return normal.log_prob(x) + gamma.log_prob(scale) + cat.log_prob(np.zeros_like(x)) \
                + mgp.kl_divergence(normal, mgp.Normal(0.0, 1.0))

    loc, scale, x = np.array([0.1, -0.5, 1.0]), np.array([0.5, 1.5, 2.0]), np.array([0.3, 0.3, -2.0])
    net = LogLik()
    eager = net(loc, scale, x).asnumpy()
    net.hybridize()
    hybrid = net(loc, scale, x).asnumpy()
    onp.testing.assert_allclose(hybrid, eager, rtol=1e-5)
    onp.testing.assert_allclose(net(loc, scale, x).asnumpy(), eager, rtol=1e-5)


@pytest.mark.parametrize("make,value", [
    (lambda a, b: mgp.Normal(a, b), [0.3, -1.0]),
    (lambda a, b: mgp.Gamma(b, a + 2), [0.7, 2.0]),
    (lambda a, b: mgp.Beta(b, a + 2), [0.2, 0.6]),
], ids=["normal", "gamma", "beta"])
def test_log_prob_gradient_matches_finite_differences(make, value):
    a0, b0 = onp.array([0.2, -0.4]), onp.array([0.8, 1.3])
    v = np.array(value, dtype="float64")

    def f(a, b):
        return make(np.array(a, dtype="float64"), np.array(b, dtype="float64")).log_prob(v).sum().item()

    a, b = np.array(a0, dtype="float64"), np.array(b0, dtype="float64")
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        out = make(a, b).log_prob(v).sum()
    out.backward()
    eps = 1e-6
    for grad, base, which in ((a.grad, a0, 0), (b.grad, b0, 1)):
        fd = []
        for i in range(2):
            hi, lo = base.copy(), base.copy()
            hi[i] += eps
            lo[i] -= eps
            args_hi = (hi, b0) if which == 0 else (a0, hi)
            args_lo = (lo, b0) if which == 0 else (a0, lo)
            fd.append((f(*args_hi) - f(*args_lo)) / (2 * eps))
        onp.testing.assert_allclose(grad.asnumpy(), fd, rtol=1e-4, atol=1e-6)


def test_reparameterized_sample_gradient():
    loc = np.array([0.5, -1.0])
    loc.attach_grad()
    with autograd.record():
        out = mgp.Normal(loc, 2.0).sample_n(10).sum()
    out.backward()
    onp.testing.assert_allclose(loc.grad.asnumpy(), [10.0, 10.0])


def test_stochastic_block_collects_losses():
    class Encoder(mgp.StochasticBlock):
        def __init__(self):
            super().__init__()
            self.dense = mx.gluon.nn.Dense(4)

        @mgp.StochasticBlock.collectLoss
        def forward(self, x):
            h = self.dense(x)
            q = mgp.Normal(h, np.ones_like(h))
            self.add_loss(mgp.kl_divergence(q, mgp.Normal(0.0, 1.0)))
            return q.sample()

    net = mgp.StochasticSequential()
    net.add(Encoder(), mx.gluon.nn.Dense(2))
    net.initialize()
    out = net(np.ones((3, 5)))
    assert out.shape == (3, 2)
    assert len(net.losses) == 1 and net.losses[0][0].shape == (3, 4)
    assert len(net) == 2 and isinstance(net[0], Encoder)
    assert "Encoder" in repr(net)

    class Bad(mgp.StochasticBlock):
        def forward(self, x):
            return x

    with pytest.raises(ValueError, match="collectLoss"):
        Bad()(np.ones(2))


def test_entropy_perplexity_and_repr():
    d = mgp.Normal(np.zeros(2), np.array([1.0, 2.0]))
    onp.testing.assert_allclose(d.perplexity().asnumpy(), onp.exp(d.entropy().asnumpy()), rtol=1e-6)
    onp.testing.assert_allclose(d.stddev.asnumpy(), [1.0, 2.0])
    assert repr(d) == "Normal(loc: size (2,), scale: size (2,), event_dim: 0)"
    onp.testing.assert_allclose(mgp.Bernoulli(prob=np.array([0.3])).enumerate_support().asnumpy(), [[0.0], [1.0]])
    onp.testing.assert_allclose(mgp.HalfNormal(np.array([2.0])).entropy().asnumpy(),
                                scipy_stats.halfnorm(scale=2.0).entropy(), rtol=1e-5)
    onp.testing.assert_allclose(mgp.StudentT(np.array([4.0]), 0.5, 2.0).entropy().asnumpy(),
                                scipy_stats.t(4.0, 0.5, 2.0).entropy(), rtol=1e-5)
