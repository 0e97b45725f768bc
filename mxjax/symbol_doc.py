"""``mx.symbol_doc``: extra documentation attached to generated Symbol functions.

As in MXNet, a subclass of :class:`SymbolDoc` named ``<op>Doc`` adds its docstring (Python-specific
examples) to the documentation :func:`_build_doc` writes for ``op``.
"""
from __future__ import annotations

import re as _re
from typing import Any, Sequence

from .base import build_param_doc as _build_param_doc

__all__ = ["SymbolDoc"]


class SymbolDoc:
    """The base class for attaching doc to operators."""

    @staticmethod
    def get_output_shape(sym: Any, **input_shapes: Any) -> dict:
        """``{output name: shape}`` of ``sym`` for the given input shapes."""
        _, s_outputs, _ = sym.infer_shape(**input_shapes)
        return dict(zip(sym.list_outputs(), s_outputs))


def _build_doc(func_name: str, desc: str, arg_names: Sequence[str], arg_types: Sequence[str],
               arg_desc: Sequence[str], key_var_num_args: str | None = None, ret_type: str | None = None) -> str:
    """The docstring of the symbolic function ``func_name`` (MXNet's layout)."""
    param_str = _build_param_doc(arg_names, arg_types, arg_desc)
    if key_var_num_args:
        desc += "\nThis function support variable length of positional input."
    doc_str = (f"{desc}\n\n{param_str}\nname : string, optional.\n    Name of the resulting symbol.\n\n"
               "Returns\n-------\nSymbol\n    The result symbol.")
    extra = "\n" + "\n".join(x.__doc__ or "" for x in SymbolDoc.__subclasses__() if x.__name__ == f"{func_name}Doc")
    doc_str += _re.sub("    ", "", extra)
    return _re.sub("NDArray-or-Symbol", "Symbol", doc_str)
