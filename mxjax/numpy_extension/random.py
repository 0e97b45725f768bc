"""``mx.npx.random``: MXNet 2's random samplers that NumPy does not have."""
from __future__ import annotations

from .._frontend import make_function
from .._invoke import np_class

__all__ = ["bernoulli", "uniform_n", "normal_n", "seed"]

from .._rng import seed  # noqa: E402  (the same stream as mx.random.seed)

bernoulli = make_function("_npi_bernoulli", name="bernoulli", out_cls=np_class, module="mxjax.npx.random",
                          positional=("prob", "logit", "size", "dtype"))
# MXNet's batch_shape is the leading shape added to the parameters' shape: NumPy's size here
uniform_n = make_function("_npi_uniform_n", name="uniform_n", out_cls=np_class, module="mxjax.npx.random",
                          positional=("low", "high", "size", "dtype"), keywords={"batch_shape": "size"})
normal_n = make_function("_npi_normal_n", name="normal_n", out_cls=np_class, module="mxjax.npx.random",
                         positional=("loc", "scale", "size", "dtype"), keywords={"batch_shape": "size"})
