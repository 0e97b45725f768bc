"""``mx.gluon.probability``: distributions, transformations and stochastic blocks (MXNet 2.0)."""
from . import distributions  # noqa: F401
from . import block, transformation  # noqa: F401
from .block import *  # noqa: F401,F403
from .distributions import *  # noqa: F401,F403
from .transformation import *  # noqa: F401,F403
