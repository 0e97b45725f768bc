"""``mx.gluon.probability.block``: stochastic blocks."""
from .stochastic_block import *  # noqa: F401,F403
from .stochastic_block import __all__  # noqa: F401
