"""``mx.contrib.text``: token counting (``utils``), indexing (``vocab``) and word embeddings (``embedding``)."""
from . import utils
from . import vocab
from . import embedding

__all__ = ["utils", "vocab", "embedding"]
