"""``mx.image.image``: image decoding, resizing and cropping functions, the augmenters and
``ImageIter`` (the pieces live in ``_functions``, ``_rotate``, ``_augmenters`` and ``_iter``)."""
from __future__ import annotations

from ._augmenters import *  # noqa: F401,F403
from ._augmenters import __all__ as _augmenters_all
from ._functions import *  # noqa: F401,F403
from ._functions import __all__ as _functions_all
from ._iter import *  # noqa: F401,F403
from ._iter import __all__ as _iter_all
from ._rotate import *  # noqa: F401,F403
from ._rotate import __all__ as _rotate_all

__all__ = [*_functions_all, *_rotate_all, *_augmenters_all, *_iter_all]
