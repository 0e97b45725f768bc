"""``mx.npx.random``: MXNet 2's random samplers that NumPy does not have."""
from __future__ import annotations

from typing import Any

from .. import _rng
from .._frontend import make_function
from .._invoke import np_class

__all__ = ["bernoulli", "uniform_n", "normal_n", "seed"]


def seed(seed: Any, device: Any = "all") -> None:  # noqa: A002  (MXNet 2.0's argument name)
    """Restart the random stream, the one ``mx.random.seed`` and ``mx.np.random.seed`` restart."""
    _rng.seed(seed, device)

bernoulli = make_function("_npi_bernoulli", name="bernoulli", out_cls=np_class, module="mxjax.npx.random",
                          positional=("prob", "logit", "size", "dtype"))
# MXNet's batch_shape is the leading shape added to the parameters' shape: NumPy's size here
uniform_n = make_function("_npi_uniform_n", name="uniform_n", out_cls=np_class, module="mxjax.npx.random",
                          positional=("low", "high", "size", "dtype"), keywords={"batch_shape": "size"})
normal_n = make_function("_npi_normal_n", name="normal_n", out_cls=np_class, module="mxjax.npx.random",
                         positional=("loc", "scale", "size", "dtype"), keywords={"batch_shape": "size"})
