"""Keyword checks for Gluon: a misspelled option (``nn.Dense(4, actvation='relu')``,
``hybridize(static_aloc=True)``) is a ``TypeError`` naming it and the closest accepted
names, as MXNet 2.0's blocks raise, never an option dropped in silence."""
from __future__ import annotations

import difflib
import inspect
from typing import Any, Iterable

# what MXNet 1.x blocks took and MXNet 2.0 removed, with what to do instead
_REMOVED = {
    "prefix": "MXNet 2.0 removed block prefixes: parameter names follow the attribute names",
    "params": "MXNet 2.0 removed params=: share parameters with "
              "block.share_parameters(other.collect_params())",
}


# hybridize's options: MXNet 2.0's, and 1.9's backend choice (also set by optimize_for)
HYBRIDIZE_OPTIONS = ("partition_if_dynamic", "static_alloc", "static_shape", "inline_limit",
                     "forward_bulk_size", "backward_bulk_size", "backend", "backend_opts", "clear")


def check_hybridize_options(owner: str, options: dict) -> None:
    """``TypeError`` for a ``hybridize`` keyword that is not one of ``HYBRIDIZE_OPTIONS``."""
    reject_unknown(f"{owner}.hybridize", {k: v for k, v in options.items() if k not in HYBRIDIZE_OPTIONS},
                   HYBRIDIZE_OPTIONS)


def init_keywords(cls: type) -> list[str]:
    """The keyword names the constructors along ``cls``'s MRO accept by name."""
    names: list[str] = []
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        try:
            parameters = inspect.signature(init).parameters.values()
        except (TypeError, ValueError):
            continue
        for p in parameters:
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self" and p.name not in names:
                names.append(p.name)
    return names


def reject_unknown(owner: str, given: dict, accepted: Iterable[str]) -> None:
    """Raise ``TypeError`` for the first name of ``given`` (keywords nobody consumed)."""
    if not given:
        return
    name = next(iter(given))
    accepted = list(accepted)
    if name in _REMOVED:
        hint = f" ({_REMOVED[name]})"
    else:
        close = difflib.get_close_matches(name, accepted, n=3, cutoff=0.6)
        hint = (f"; did you mean {' or '.join(repr(c) for c in close)}?" if close
                else f"; it accepts {', '.join(accepted)}" if accepted else "")
    raise TypeError(f"{owner}() got an unexpected keyword argument {name!r}{hint}")


def has_array(value: Any, array_types: tuple) -> bool:
    """Whether ``value`` (nested lists, tuples and dicts) holds an array."""
    if isinstance(value, array_types):
        return True
    if isinstance(value, (list, tuple)):
        return any(has_array(v, array_types) for v in value)
    if isinstance(value, dict):
        return any(has_array(v, array_types) for v in value.values())
    return False
