"""``mx.gluon.probability.distributions.constraint``: MXNet 2.0's public path for constraints.

The classes live in ``probability._constraint`` so that ``transformation.domain_map`` can
use them without importing the ``distributions`` package (which itself imports
``transformation``).  This module only re-exports them, as the same objects.
"""
from .._constraint import *  # noqa: F401,F403
from .._constraint import __all__  # noqa: F401
from .._constraint import _Dependent, _DependentProperty, dependent_property, is_dependent  # noqa: F401
from .._utils import constraint_check  # noqa: F401  (MXNet's constraint module carries it too)
