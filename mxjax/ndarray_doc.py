"""``mx.ndarray_doc``: extra documentation attached to generated NDArray functions.

As in MXNet, a subclass of :class:`NDArrayDoc` named ``<op>Doc`` adds its docstring to the
documentation :func:`_build_doc` writes for ``op``.
"""
from __future__ import annotations

import re as _re
from typing import Sequence

from .base import build_param_doc as _build_param_doc

__all__ = ["NDArrayDoc"]


class NDArrayDoc:
    """The base class of extra NDArray function documents."""


def _build_doc(func_name: str, desc: str, arg_names: Sequence[str], arg_types: Sequence[str],
               arg_desc: Sequence[str], key_var_num_args: str | None = None, ret_type: str | None = None) -> str:
    """The docstring of the imperative function ``func_name`` (MXNet's layout)."""
    param_str = _build_param_doc(arg_names, arg_types, arg_desc)
    doc_str = (f"{desc}\n\n{param_str}\nout : NDArray, optional\n    The output NDArray to hold the result.\n\n"
               "Returns\n-------\nout : NDArray or list of NDArrays\n    The output of this function.")
    extra = "\n" + "\n".join(x.__doc__ or "" for x in NDArrayDoc.__subclasses__() if x.__name__ == f"{func_name}Doc")
    doc_str += _re.sub("    ", "", extra)
    return _re.sub("NDArray-or-Symbol", "NDArray", doc_str)
