"""Multivariate normal distribution."""
from __future__ import annotations

import math

import numpy as onp

from .... import numpy as np
from .constraint import LowerCholesky, PositiveDefinite, Real
from .distribution import Distribution
from .utils import as_tuple, cached_property, shape_of

__all__ = ['MultivariateNormal']


def _matvec(mat, vec):
    """Batched ``mat @ vec`` over the last two / last axis."""
    return np.einsum('...jk,...k->...j', mat, vec)


class MultivariateNormal(Distribution):
    r"""Multivariate normal distribution with mean ``loc`` (last axis: the event) and exactly one of
    ``cov``, ``precision`` or ``scale_tril`` (the lower Cholesky factor of ``cov``)."""
    has_grad = True
    support = Real()
    arg_constraints = {'loc': Real(), 'cov': PositiveDefinite(), 'precision': PositiveDefinite(),
                       'scale_tril': LowerCholesky()}

    def __init__(self, loc, cov=None, precision=None, scale_tril=None, validate_args=None):
        if (cov is not None) + (precision is not None) + (scale_tril is not None) != 1:
            raise ValueError("Exactly one onf `cov` or `precision` or `scale_tril` may be specified")
        self.loc = loc
        if cov is not None:
            self.cov = cov
        elif precision is not None:
            self.precision = precision
        else:
            self.scale_tril = scale_tril
        super().__init__(event_dim=1, validate_args=validate_args)

    @staticmethod
    def _precision_to_scale_tril(P):
        """``L`` with ``L L^T = inv(P)``: ``flip(inv(L^T)) = cholesky(flip(P))``."""
        l_flip_inv_t = np.linalg.cholesky(np.flip(P, (-1, -2)))
        return np.linalg.inv(np.flip(l_flip_inv_t, (-1, -2)).mT)

    @cached_property
    def scale_tril(self):  # pylint: disable=method-hidden
        if 'cov' in self.__dict__:
            return np.linalg.cholesky(self.cov)
        return self._precision_to_scale_tril(self.precision)

    @cached_property
    def cov(self):  # pylint: disable=method-hidden
        if 'scale_tril' in self.__dict__:
            return np.matmul(self.scale_tril, self.scale_tril.mT)
        return np.linalg.inv(self.precision)

    @cached_property
    def precision(self):  # pylint: disable=method-hidden
        if 'cov' in self.__dict__:
            return np.linalg.inv(self.cov)
        scale_tril_inv = np.linalg.inv(self.scale_tril)
        return np.matmul(scale_tril_inv.mT, scale_tril_inv)

    @property
    def mean(self):
        return self.loc

    @property
    def variance(self):
        return (self.scale_tril ** 2).sum(-1)

    def _event_batch_shape(self):
        return tuple(onp.broadcast_shapes(shape_of(self.loc), shape_of(self.scale_tril)[:-1]))

    def _draw(self, shape):
        # loc + L z (MXNet 2.0 computes loc + L^T z, whose covariance is L^T L, not cov)
        noise = np.random.normal(0, 1, size=shape, dtype=self.scale_tril.dtype)
        return self.loc + _matvec(self.scale_tril, noise)

    def sample(self, size=None):
        shape = self._event_batch_shape()
        if size is not None:
            shape = as_tuple(size) + shape[-1:]
        return self._draw(shape)

    def sample_n(self, size=None):
        if size is None:
            return self.sample()
        return self._draw(as_tuple(size) + self._event_batch_shape())

    def broadcast_to(self, batch_shape):
        d = self._event_batch_shape()[-1]
        new = self._broadcast_new(batch_shape, ('loc',), (d,))
        for name in ('cov', 'precision', 'scale_tril'):
            if name in self.__dict__:
                setattr(new, name, np.broadcast_to(self.__dict__[name], tuple(batch_shape) + (d, d)))
        return new

    def log_prob(self, value):
        if self._validate_args:
            self._validate_samples(value)
        diff = value - self.loc
        maha = np.einsum('...i,...i->...', diff, _matvec(self.precision, diff)) * -0.5
        half_log_det = np.log(np.diagonal(math.sqrt(2 * math.pi) * self.scale_tril, axis1=-2, axis2=-1)).sum(-1)
        return maha - half_log_det

    def entropy(self):
        return np.log(np.diagonal(math.sqrt(2 * math.pi * math.e) * self.scale_tril,
                                  axis1=-2, axis2=-1)).sum(-1)
