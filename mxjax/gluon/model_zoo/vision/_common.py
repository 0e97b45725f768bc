"""Pieces every ``vision`` model shares."""
from ...block import HybridBlock
from ....util import use_np
from ..model_store import _DEFAULT_ROOT as MODELS_DIR, load_pretrained  # noqa: F401 (re-exported)


@use_np
class Classifier(HybridBlock):
    """A network made of ``features`` (set by the subclass) followed by an ``output`` head."""

    def forward(self, x):
        return self.output(self.features(x))
