"""``mx.io``: data iterators (``DataIter`` and friends) and their batch descriptions."""
from . import io
from .io import *  # noqa: F401,F403
from .io import __all__
