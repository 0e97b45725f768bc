"""``mx.gluon.probability.distributions.utils``: MXNet 2.0's public path for the shared helpers.

The helpers live in ``probability._utils`` so that ``transformation`` can use them without
importing the ``distributions`` package (which itself imports ``transformation``).  This
module only re-exports them; every name here is the very object defined there.
"""
from .._utils import *  # noqa: F401,F403
from .._utils import __all__  # noqa: F401
# Module-level names MXNet's utils also carries, plus the scalar-aware helpers the
# distribution modules share (kept reachable under their historical path).
from .._utils import (_CachedProperty, _clip_float_eps, _clip_prob, absolute, arctan, as_tuple,  # noqa: F401
                      batch_shape, exp, expm1, log, log1p, sample_n_shape, shape_of, sign, sqrt,
                      sum_right_most, tan)
