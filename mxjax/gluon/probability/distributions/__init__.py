"""``mx.gluon.probability.distributions``: distribution classes, constraints and KL divergences."""
from . import constraint, utils  # noqa: F401  (public re-export modules of ._constraint, ._utils)
from .distribution import *  # noqa: F401,F403
from .location_scale import *  # noqa: F401,F403
from .positive import *  # noqa: F401,F403
from .discrete import *  # noqa: F401,F403
from .multivariate_normal import *  # noqa: F401,F403
from .transformed import *  # noqa: F401,F403
from .divergence import *  # noqa: F401,F403
from .utils import *  # noqa: F401,F403
from . import (discrete, distribution, divergence, location_scale, multivariate_normal,  # noqa: F401
               positive, transformed)

__all__ = [name for module in (distribution, location_scale, positive, discrete, multivariate_normal,
                               transformed, divergence, utils) for name in module.__all__]
