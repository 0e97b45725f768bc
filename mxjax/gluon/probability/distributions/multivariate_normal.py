"""The multivariate normal (Gaussian) distribution over the last axis."""
from __future__ import annotations

import math

import numpy as onp

from .._constraint import LowerCholesky, PositiveDefinite, Real
from .._utils import as_tuple, cached_property, shape_of
from .... import numpy as np
from .distribution import Distribution

__all__ = ['MultivariateNormal']

_MATRIX_PARAMS = ('cov', 'precision', 'scale_tril')
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _mv(a, x):
    """Batched matrix-vector product ``a @ x``."""
    return (a * np.expand_dims(x, -2)).sum(-1)


def _diag_log_sum(tril):
    """``sum(log(diag(L)))`` over the trailing matrix axes, i.e. ``log|det L|`` for triangular ``L``."""
    return np.log(np.diagonal(tril, axis1=-2, axis2=-1)).sum(-1)


class MultivariateNormal(Distribution):
    r"""Gaussian with mean ``loc`` (event on the last axis), parametrised by exactly one of
    ``cov``, ``precision`` (its inverse) or ``scale_tril`` (``cov``'s lower Cholesky factor)."""
    has_grad = True
    support = Real()
    arg_constraints = dict(loc=Real(), cov=PositiveDefinite(), precision=PositiveDefinite(),
                           scale_tril=LowerCholesky())

    def __init__(self, loc, cov=None, precision=None, scale_tril=None, validate_args=None):
        given = {k: v for k, v in zip(_MATRIX_PARAMS, (cov, precision, scale_tril)) if v is not None}
        if len(given) != 1:
            raise ValueError("Exactly one onf `cov` or `precision` or `scale_tril` may be specified")
        self.loc = loc
        self.__dict__.update(given)  # the other two are derived lazily below
        super().__init__(event_dim=1, validate_args=validate_args)

    def _given(self, name):
        return name in self.__dict__

    @cached_property
    def scale_tril(self):  # pylint: disable=method-hidden
        source = self.cov if self._given('cov') else np.linalg.inv(self.precision)
        return np.linalg.cholesky(source)

    @cached_property
    def cov(self):  # pylint: disable=method-hidden
        if not self._given('scale_tril'):
            return np.linalg.inv(self.precision)
        L = self.scale_tril
        return np.matmul(L, np.swapaxes(L, -1, -2))

    @cached_property
    def precision(self):  # pylint: disable=method-hidden
        if self._given('cov'):
            return np.linalg.inv(self.cov)
        inv_l = np.linalg.inv(self.scale_tril)  # cov^-1 = L^-T L^-1
        return np.matmul(np.swapaxes(inv_l, -1, -2), inv_l)

    @property
    def mean(self):
        return self.loc

    @property
    def variance(self):
        # diag(L L^T) is the row-wise squared norm of L
        return np.square(self.scale_tril).sum(-1)

    def _shape(self):
        """Batch shape plus the event axis."""
        return tuple(onp.broadcast_shapes(shape_of(self.loc), shape_of(self.scale_tril)[:-1]))

    def _draw(self, shape):
        # x = loc + L z with z standard normal (cov(x) = L L^T)
        z = np.random.normal(0, 1, size=shape, dtype=self.scale_tril.dtype)
        return _mv(self.scale_tril, z) + self.loc

    def sample(self, size=None):
        full = self._shape()
        return self._draw(full if size is None else as_tuple(size) + full[-1:])

    def sample_n(self, size=None):
        return self.sample() if size is None else self._draw(as_tuple(size) + self._shape())

    def broadcast_to(self, batch_shape):
        dim = self._shape()[-1]
        batch = tuple(batch_shape)
        twin = self._broadcast_new(batch, ('loc',), (dim,))
        for key in _MATRIX_PARAMS:
            if self._given(key):
                setattr(twin, key, np.broadcast_to(self.__dict__[key], batch + (dim, dim)))
        return twin

    def log_prob(self, value):
        if self._validate_args:
            self._validate_samples(value)
        d = value - self.loc
        quad = (d * _mv(self.precision, d)).sum(-1)
        dim = self.scale_tril.shape[-1]
        return -0.5 * quad - _diag_log_sum(self.scale_tril) - dim * _HALF_LOG_2PI

    def entropy(self):
        dim = self.scale_tril.shape[-1]
        return _diag_log_sum(self.scale_tril) + dim * (_HALF_LOG_2PI + 0.5)
