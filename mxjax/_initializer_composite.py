"""``mx.init.Load`` and ``mx.init.Mixed``: initializers that delegate to saved arrays or to others.

They are plain callables (not ``Initializer`` subclasses, as in MXNet) choosing the
source of each parameter by its name, so they sit apart from the registered initializers.
"""
from __future__ import annotations

import logging
import re
from typing import Any

import numpy as onp

from .base import MXNetTypeError, MXNetValueError
from ._ndarray import NDArray
from .ndarray._io import load
from ._initializer_fill import _fill


# -- composite initializers ------------------------------------------------------------------------
class Load:
    """Initialize from saved parameters (a ``.params`` file name or a dict of name → array), dropping
    ``arg:``/``aux:`` prefixes; names not found go to ``default_init``."""

    def __init__(self, param: Any, default_init: Any = None, verbose: bool = False):
        if isinstance(param, str):
            param = load(param)
        if not isinstance(param, dict):
            raise MXNetTypeError(f"Load: expected a file name or a dict of name -> array, got {type(param).__name__}")
        self.param = {name[4:] if name.startswith(("arg:", "aux:")) else name: arr for name, arr in param.items()}
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name: str, arr: NDArray) -> None:
        if name in self.param:
            source = self.param[name]
            shape = tuple(source.shape) if isinstance(source, NDArray) else onp.shape(source)
            if tuple(arr.shape) != shape:
                raise MXNetValueError(f"Parameter {name} cannot be initialized from loading. Shape mismatch, "
                                      f"target {tuple(arr.shape)} vs loaded {shape}")
            _fill(arr, source if isinstance(source, NDArray) else onp.asarray(source), "Load")
            if self.verbose:
                logging.info("Initialized %s by loading", name)
        else:
            if self.default_init is None:
                raise MXNetValueError(f"Cannot initialize {name}: not found in the loaded parameters "
                                      "and no default initializer is provided")
            self.default_init(name, arr)
            if self.verbose:
                logging.info("Initialized %s by default", name)


class Mixed:
    """Initialize with the first initializer whose regular expression matches the parameter name
    (``re.match``: anchored at the start)."""

    def __init__(self, patterns: list, initializers: list):
        if len(patterns) != len(initializers):
            raise MXNetValueError(f"Mixed: got {len(patterns)} patterns but {len(initializers)} initializers")
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name: str, arr: NDArray) -> None:
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        raise MXNetValueError(f"Parameter name {name} did not match any pattern. Consider adding a \".*\" "
                              "pattern at the end with a default Initializer.")

