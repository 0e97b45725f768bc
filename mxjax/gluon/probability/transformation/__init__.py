"""``mx.gluon.probability.transformation``: transformations and constraint-to-transform maps."""
from .domain_map import *  # noqa: F401,F403
from .domain_map import __all__ as _domain_all
from .transformation import *  # noqa: F401,F403
from .transformation import __all__ as _transformation_all

__all__ = list(_transformation_all) + list(_domain_all)
