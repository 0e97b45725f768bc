"""``mx.npx.rnn``: MXNet's fused ``RNN`` op; reads the train-mode flag (dropout between layers)."""
from __future__ import annotations

from typing import Any

from .._config import is_training
from .._frontend import make_function
from ..numpy.multiarray import ndarray

__all__ = ["rnn"]

_RNN = make_function("RNN", name="rnn", out_cls=ndarray, module="mxjax.numpy_extension", legacy=True)


def rnn(*args: Any, **kwargs: Any) -> Any:
    """Fused recurrent layers (``rnn_relu``, ``rnn_tanh``, ``lstm``, ``gru``) over TNC ``data`` with one flat
    ``parameters`` vector; ``p`` drops out between layers in training (``autograd.record()``)."""
    kwargs["_train"] = bool(kwargs.get("p")) and is_training()  # one compiled program when no dropout
    return _RNN(*args, **kwargs)


rnn.op = _RNN.op  # type: ignore[attr-defined]
rnn.__doc__ = f"{rnn.__doc__}\n\n{_RNN.op.doc}"
