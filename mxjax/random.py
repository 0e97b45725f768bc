"""``mx.random``: MXNet 2.0 binds it to ``mx.nd.random``'s samplers (legacy ``NDArray``
results, ``multinomial(n, p)`` counts, ``categorical(data)`` class indices) plus ``seed``,
which restarts the stream every mxjax sampler (``mx.np.random`` included) draws from."""
from __future__ import annotations

from ._util_wrappers import wrap_ctx_to_device_func
from .base import check_call, integer_types
from .device import Device
from .ndarray.random import (binomial, categorical, exponential, gamma, generalized_negative_binomial,
                             multinomial, negative_binomial, normal, poisson, randint, randn, seed, shuffle,
                             uniform)

__all__ = ["seed", "uniform", "normal", "randn", "randint", "poisson", "exponential", "gamma",
           "negative_binomial", "generalized_negative_binomial", "binomial", "multinomial", "categorical",
           "shuffle", "Device", "check_call", "integer_types", "wrap_ctx_to_device_func"]
