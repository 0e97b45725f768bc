"""Ready-made image classifiers (``vision``) and the store of their published weights (``model_store``)."""

from . import model_store
from . import vision
