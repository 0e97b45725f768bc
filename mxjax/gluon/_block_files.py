"""A Gluon block's parameter files: ``save_parameters``/``load_parameters``/``load_dict`` (MXNet's
``.params`` format, by structural name) and ``save``/``load`` (structure and parameters).

:class:`ParameterFiles` is a base class of ``Block``; it reads the block through
``collect_params`` and ``_collect`` only.
"""
from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as onp

from .. import _config
from .._invoke import np_class
from .._ndarray import NDArray
from ..base import MXNetError, MXNetTypeError, MXNetValueError
from ..device import Device, current_device
from ..ndarray._io import load, save
from ..serialization import file_label, reading
from ._model_io import load_model, save_model
from .parameter import _ValuesMismatch

__all__ = ["ParameterFiles"]


def _load_device(caller: str, name: str, param: Any, device: Any) -> Device | None:
    """Where a loaded value goes, as MXNet's ``Parameter._load_init``: a parameter not initialized yet
    is made on ``device`` (else where its deferred initialization was to put it, else the current
    device; MXNet 2.0 refuses a deferred one loaded without a device); an initialized one keeps its
    device, and naming another one is an error (AssertionError in MXNet too)."""
    device = device[0] if isinstance(device, (list, tuple)) else device
    if param._data is not None:
        if device is not None and device.jax_device != param._data._where():
            raise _ValuesMismatch(f"{caller}: failed to load parameter {name!r} on {device} because it was "
                                  f"previously initialized on {param._data.device}")
        return None
    if device is None and param._deferred is not None:
        return param.list_device()[0]  # (the current device where the deferred one named none)
    return device if device is not None else current_device()


class ParameterFiles:
    """Saving and loading a block's parameters (a base class of ``Block``)."""

    def save_parameters(self, filename: str, deduplicate: bool = False) -> None:
        """Save by structural name (``0.weight``) in MXNet's ``.params`` format (NumPy-mode v3 records)."""
        arrays = {}
        seen: set[int] = set()
        for name, param in self._collect():
            if deduplicate and id(param) in seen:
                continue
            seen.add(id(param))
            arrays[name] = param.data()
        save(filename, arrays)

    def load_parameters(self, filename: str, device: Device | None = None, allow_missing: bool = False,
                        ignore_extra: bool = False, cast_dtype: bool = False, dtype_source: str = "current",
                        ctx: Device | None = None) -> None:
        """Load a ``save_parameters`` (or ``export``: ``arg:``/``aux:``) file into this block's parameters.

        A saved dtype that differs from a parameter's is an error unless ``cast_dtype``; then
        ``dtype_source='current'`` converts the values to the parameter's dtype and ``'saved'``
        gives the parameter the file's dtype.  A corrupt file raises MXNetValueError naming it.
        """
        try:
            with reading(filename, "parameter file"):
                loaded = load(filename)
        except MXNetError as err:  # MXNet 2.0 raises ValueError for a file it cannot read
            raise MXNetValueError(f"load_parameters: {err}") from None
        if not isinstance(loaded, dict):
            raise MXNetValueError(f"load_parameters: {file_label(filename)} holds an unnamed "
                                  f"{type(loaded).__name__} of arrays, not parameters by name")
        self._load("load_parameters", loaded, file_label(filename), allow_missing, ignore_extra, cast_dtype,
                   dtype_source, device if device is not None else ctx)

    def load_dict(self, param_dict: dict, device: Device | None = None, allow_missing: bool = False,
                  ignore_extra: bool = False, cast_dtype: bool = False, dtype_source: str = "current") -> None:
        """Load parameters from a dict of arrays keyed by structural name (``arg:``/``aux:`` allowed)."""
        if not isinstance(param_dict, dict):
            raise MXNetTypeError(f"{type(self).__name__}.load_dict: expected a dict of arrays by parameter "
                                 f"name, got {type(param_dict).__name__}")
        self._load("load_dict", param_dict, "param_dict", allow_missing, ignore_extra, cast_dtype, dtype_source,
                   device)

    @_config.with_x64  # float64/int64 values load as they are
    def _load(self, caller: str, loaded: dict, source: str, allow_missing: bool, ignore_extra: bool,
              cast_dtype: bool, dtype_source: str, device: Any = None) -> None:
        if cast_dtype and dtype_source not in ("current", "saved"):
            raise MXNetValueError(f"{caller}: dtype_source must be 'current' or 'saved', got {dtype_source!r}")
        loaded = {k.split(":", 1)[1] if k.startswith(("arg:", "aux:")) else k: v for k, v in loaded.items()}
        params = self.collect_params()
        missing = [n for n in params if n not in loaded]
        if missing and not allow_missing:
            raise _ValuesMismatch(f"{caller}: {source} has no values for parameters {missing} of "
                                  f"{type(self).__name__}; pass allow_missing=True to keep their current values")
        extra = [n for n in loaded if n not in params]
        if extra and not ignore_extra:
            raise MXNetValueError(f"{caller}: {source} has values for {extra}, which "
                                  f"{type(self).__name__} does not have; pass ignore_extra=True to skip them")
        updates = []  # every value checked before any parameter changes: a refused file loads nothing
        for name, param in params.items():
            if name not in loaded:
                continue
            value = loaded[name]
            saved = onp.dtype(value.dtype)  # before any conversion (jnp.asarray would narrow float64)
            value = value if isinstance(value, NDArray) else np_class()._wrap(jnp.asarray(value, saved))
            if param.shape is not None and all(d > 0 for d in param.shape) and tuple(param.shape) != value.shape:
                raise _ValuesMismatch(f"{caller}: parameter {name!r} of {type(self).__name__} has shape "
                                      f"{param.shape}, {source} has {value.shape}")
            if saved != onp.dtype(param.dtype) and not cast_dtype:  # MXNet 2.0 refuses too (AssertionError)
                raise _ValuesMismatch(f"{caller}: parameter {name!r} of {type(self).__name__} is "
                                      f"{onp.dtype(param.dtype).name}, {source} holds {saved.name}; pass "
                                      "cast_dtype=True to convert it (dtype_source='current' keeps the "
                                      "parameter's dtype, 'saved' takes the file's)")
            updates.append((param, value, saved, _load_device(caller, name, param, device)))
        for param, value, saved, target in updates:
            if saved != onp.dtype(param.dtype):
                if dtype_source == "current":
                    value = value.astype(param.dtype)
                else:
                    param.cast(saved)
            if target is not None and value._where() != target.jax_device:
                value = value.to_device(target)
            param.set_data(value)

    def save(self, prefix: str) -> None:
        """Save the structure (``prefix-model.json``) and the parameters (``prefix-model.params``)."""
        save_model(self, prefix)

    def load(self, prefix: str) -> None:
        """Load what ``save(prefix)`` wrote into this block, built the same way as the saved one."""
        load_model(self, prefix)

    # -- calling ----------------------------------------------------------------------------
