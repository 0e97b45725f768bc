"""Symbol functions generated from the op registry, cached per namespace.

``mx.sym``, ``mx.sym.op``, ``mx.sym.contrib``, ``mx.sym.linalg`` and ``mx.sym.npx``
bind registered ops by name on first use rather than listing one function per op.
A prefixed namespace (``contrib`` -> ``_contrib_``) finds the op by the prefixed
name among op names and aliases, writes the op name MXNet writes for it, and names
nodes after the short name (``contrib.box_iou`` -> ``_contrib_box_iou`` node ``box_iou0``).
"""
from __future__ import annotations

from typing import Any, Callable

from .._frontend import make_function
from ..operator import OPS, OpDef
from ..operator.legacy import legacy_op_name
from ..operator.naming import json_name
from .symbol import Symbol, auto_name, symbol_function


def legacy_function(name: str, module: str, cache: dict[str, Any]) -> Callable[..., Any]:
    """``mx.sym.<name>``: the symbol function of a registered op (1.x names and semantics)."""
    function = cache.get(name)
    if function is None:
        op = OPS.get(legacy_op_name(name))
        if op is None or name.startswith("__"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        front = make_function(op, name=name, out_cls=Symbol, legacy=True, sequence_input=False, module=module)
        function = cache[name] = symbol_function(front, legacy=True)
        function.__module__ = module
    return function


def prefixed_names(prefix: str) -> dict[str, OpDef]:
    """Short name -> op for every registered op named or aliased ``<prefix><short>``."""
    found: dict[str, OpDef] = {}
    for op in OPS.values():
        for spelled in (op.name, *op.aliases):
            if spelled.startswith(prefix) and len(spelled) > len(prefix):
                found.setdefault(spelled[len(prefix):], op)
    return found


class PrefixedNamespace:
    """The functions of a module whose names are registered op names less ``prefix``."""

    def __init__(self, prefix: str, module: str, keywords: dict[str, str] | None = None,
                 fronts: dict[str, Callable[..., Any]] | None = None, legacy: bool = True,
                 legacy_ops: dict[str, str] | None = None, variables: bool = True) -> None:
        """prefix: '' for a namespace of ``fronts`` only.  fronts: imperative front ends (made by
        ``make_function``) whose signatures this namespace shares, by short name; they take precedence
        over binding the op afresh.  legacy: 1.x semantics for Python scalars (``_mul_scalar``) rather
        than NumPy's (``_npi_multiply_scalar``).  legacy_ops: short name -> the op name written for it,
        for ops filed here under another name (``npx.cast`` writes ``Cast``); present once registered.
        variables: make variables for op inputs a call leaves out (see ``symbol_function``)."""
        self.prefix, self.module, self.keywords, self.legacy = prefix, module, keywords, legacy
        self.variables = variables
        self._fronts = dict(fronts or {})
        self._written = dict(legacy_ops or {})
        self._cache: dict[str, Any] = {}
        self._names: dict[str, OpDef] | None = None

    def names(self) -> dict[str, OpDef]:
        if self._names is None:  # the registry is complete once mxjax is imported
            by_prefix = prefixed_names(self.prefix) if self.prefix else {}
            written = {k: OPS[legacy_op_name(v)] for k, v in self._written.items() if legacy_op_name(v) in OPS}
            self._names = {**written, **by_prefix, **{k: f.op for k, f in self._fronts.items()}}
        return self._names

    def get(self, name: str) -> Callable[..., Any]:
        function = self._cache.get(name)
        if function is None:
            op = self.names().get(name)
            if op is None:
                raise AttributeError(f"module {self.module!r} has no attribute {name!r}")
            function = self._cache[name] = self._bind(op, name)
        return function

    def _bind(self, op: OpDef, short: str) -> Callable[..., Any]:
        # the front end is named by the op's written name, so the graph records it (_contrib_box_iou);
        # nodes are auto-named after the short name (box_iou0), as MXNet names them
        written = self._written.get(short)
        front = self._fronts.get(short) or make_function(
            op, name=written or json_name(op), out_cls=Symbol, legacy=True, sequence_input=False,
            module=self.module, keywords=self.keywords)
        build = symbol_function(front, legacy=self.legacy, write_as=written, variables=self.variables)

        def function(*args: Any, name: str | None = None, **kwargs: Any) -> Any:
            return build(*args, name=name or auto_name(short), **kwargs)
        function.__name__ = function.__qualname__ = short
        function.__doc__ = build.__doc__
        function.__module__ = self.module
        function.op = op  # type: ignore[attr-defined]
        return function

    def dir(self) -> list[str]:
        """The module's public names: the short names of its ops."""
        return sorted(self.names())
