"""``mx.nd.RNN``: MXNet's fused ``RNN`` op; reads the train-mode flag (dropout between layers)."""
from __future__ import annotations

from typing import Any

from .._config import is_training
from ._maker import nd_function

__all__ = ["RNN"]

_RNN = nd_function("RNN")


def RNN(*args: Any, **kwargs: Any) -> Any:  # noqa: N802  (MXNet's name)
    """Fused recurrent layers (``rnn_relu``, ``rnn_tanh``, ``lstm``, ``gru``) over TNC ``data`` with one flat
    ``parameters`` vector; ``p`` drops out between layers in training (``autograd.record()``)."""
    kwargs["_train"] = bool(kwargs.get("p")) and is_training()  # one compiled program when no dropout
    return _RNN(*args, **kwargs)


RNN.op = _RNN.op  # type: ignore[attr-defined]
RNN.__module__ = "mxjax.ndarray"
RNN.__doc__ = f"{RNN.__doc__}\n\n{_RNN.op.doc}"
