"""``mx.error``: MXNet's error classes and ``register`` (an alias of ``base.register_error``).

Registered names map error texts (``"ValueError: ..."``) to classes in ``base.get_last_ffi_error``.
"""
from __future__ import annotations

from .base import MXNetError, register_error

__all__ = ["MXNetError", "InternalError", "register", "register_error"]

register = register_error

_HINT = ("\nMXNet hint: You hit an internal error. Please open an issue in the mxjax repository "
         "to report it.")


@register_error
class InternalError(MXNetError):
    """An error inside mxjax itself rather than in the caller's input; the message gets a hint to report it."""

    def __init__(self, msg: str) -> None:
        if "MXNet hint:" not in msg:
            msg += _HINT
        super().__init__(msg)
