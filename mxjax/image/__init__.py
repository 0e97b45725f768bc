"""``mx.image``: decode, resize, crop, rotate and augment images, and iterate over image
datasets (``ImageIter``; ``ImageDetIter`` and the box-aware augmenters are in
``mx.image.detection``, also exported here as in MXNet)."""
from __future__ import annotations

from . import detection, image
from . import detection as det
from .detection import *  # noqa: F401,F403
from .detection import __all__ as _detection_all
from .image import *  # noqa: F401,F403
from .image import __all__ as _image_all

__all__ = [*_image_all, *_detection_all, "image", "detection", "det"]
