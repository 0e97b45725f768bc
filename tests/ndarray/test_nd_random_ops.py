"""mx.nd's 1.x random ops (random_*, *_like) and mx.nd.random's additions: shapes, dtypes, seeding
and sample moments within statistical tolerance (sample_* and the densities: test_nd_sample_ops.py)."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax import nd

N = 20000
# name -> (nd function, kwargs, mean, variance)
MOMENTS = {
    "uniform": (nd.random_uniform, dict(low=-1.0, high=3.0), 1.0, 16 / 12),
    "normal": (nd.random_normal, dict(loc=2.0, scale=0.5), 2.0, 0.25),
    "gamma": (nd.random_gamma, dict(alpha=3.0, beta=2.0), 6.0, 12.0),
    "exponential": (nd.random_exponential, dict(lam=4.0), 0.25, 1 / 16),
    "poisson": (nd.random_poisson, dict(lam=3.0), 3.0, 3.0),
    "negative_binomial": (nd.random_negative_binomial, dict(k=3, p=0.4), 3 * 0.6 / 0.4, 3 * 0.6 / 0.16),
    "generalized_negative_binomial": (nd.random_generalized_negative_binomial, dict(mu=2.0, alpha=0.5), 2.0,
                                      2.0 + 0.5 * 4.0),
    "binomial": (nd.random_binomial, dict(n=10, p=0.3), 3.0, 2.1),
}


@pytest.mark.parametrize("name", list(MOMENTS))
def test_random_ops_moments_dtype_and_seed(name):
    function, kwargs, mean, var = MOMENTS[name]
    mx.random.seed(11)
    draws = function(shape=(N,), **kwargs)
    mx.random.seed(11)
    again = function(shape=(N,), **kwargs)
    assert type(draws) is nd.NDArray and draws.dtype == onp.float32 and draws.shape == (N,)
    onp.testing.assert_array_equal(draws.asnumpy(), again.asnumpy())
    values = draws.asnumpy().astype(onp.float64)
    assert abs(values.mean() - mean) < 5 * onp.sqrt(var / N)
    assert abs(values.var() - var) < 0.1 * var


def test_random_aliases_randint_and_errors():
    assert nd.random_uniform(shape=(2, 3), dtype="float64").dtype == onp.float64
    assert nd.uniform(shape=(3,)).shape == (3,) and nd.normal(loc=1, scale=2, shape=(2, 2)).shape == (2, 2)
    ints = nd.random_randint(low=-2, high=3, shape=(1000,))
    assert ints.dtype == onp.int32 and ints.asnumpy().min() == -2 and ints.asnumpy().max() == 2
    with pytest.raises(mx.base.MXNetError, match="shape is required"):
        nd.random_uniform(low=0, high=1)
    with pytest.raises(mx.base.MXNetError, match="dtype must be a floating-point type"):
        nd.random_normal(shape=(2,), dtype="int32")


def test_nd_random_namespace_additions():
    # the parameters and shapes of the moments test: the compiled samplers are reused
    assert nd.random.binomial(n=10, p=0.3, shape=(N,)).shape == (N,)
    assert nd.random.generalized_negative_binomial(mu=2.0, alpha=0.5, shape=(N,)).dtype == onp.float32
    counts = nd.random.multinomial(n=nd.array([3.0, 4.0]), p=nd.array([[0.2, 0.8], [0.5, 0.5]]), shape=3)
    assert counts.shape == (2, 3, 2)
    with pytest.raises(TypeError, match="argument n must be an NDArray"):
        nd.random.multinomial(n=[3], p=nd.array([[1.0]]))
    idx, logp = nd.random.categorical(nd.array([[0.0, 1.0]]), get_prob=True)
    assert idx.asnumpy().tolist() == [1] and abs(float(logp.asnumpy()[0])) < 1e-6
    like = nd.random.normal_like(nd.ones((300, 20), dtype="float64"), loc=5, scale=0.1)
    assert like.shape == (300, 20) and like.dtype == onp.float64 and abs(like.asnumpy().mean() - 5) < 0.01
    likes = {"_random_uniform_like": nd.random.uniform_like, "_random_normal_like": nd.random.normal_like,
             "_random_gamma_like": nd.random.gamma_like, "_random_exponential_like": nd.random.exponential_like,
             "_random_poisson_like": nd.random.poisson_like,
             "_random_negative_binomial_like": nd.random.negative_binomial_like,
             "_random_generalized_negative_binomial_like": nd.random.generalized_negative_binomial_like}
    for op_name, like in likes.items():
        out = like(nd.zeros((2, 3)))
        assert like.op.name == op_name and out.shape == (2, 3) and out.dtype == onp.float32


def test_random_op_in_hybridized_block_is_seeded():
    class Noise(mx.gluon.HybridBlock):
        def forward(self, x):
            return x + mx.nd.random_normal(shape=(3,)).as_np_ndarray()

    net = Noise()
    net.hybridize()
    x = mx.np.zeros((3,))
    net(x)  # builds the cached graph
    mx.random.seed(5)
    first, second = net(x).asnumpy(), net(x).asnumpy()
    mx.random.seed(5)
    onp.testing.assert_array_equal(net(x).asnumpy(), first)
    assert not onp.array_equal(first, second)


def test_multinomial_in_mxnet1_form_draws_class_indices():
    """MXNet 1.x's ``nd.random.multinomial(data, shape, get_prob, dtype)`` (one array of probability rows,
    no ``p``) draws class indices, as 1.9.1 does (checked there); MXNet 2's two-array form draws counts."""
    p = nd.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    draws = nd.random.multinomial(p)
    assert draws.dtype == onp.int32 and draws.asnumpy().tolist() == [1, 0]
    idx, logp = nd.random.multinomial(data=p, shape=(4,), get_prob=True)
    assert idx.shape == logp.shape == (2, 4) and idx.asnumpy().tolist() == [[1] * 4, [0] * 4]
    onp.testing.assert_allclose(logp.asnumpy(), 0.0, atol=1e-6)
    many = nd.random.multinomial(nd.array([0.2, 0.5, 0.3]), shape=20000).asnumpy()
    freq = onp.bincount(many, minlength=3) / many.size
    onp.testing.assert_allclose(freq, [0.2, 0.5, 0.3], atol=0.02)  # ~5 standard errors
