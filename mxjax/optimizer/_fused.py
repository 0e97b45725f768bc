"""The fused update every optimizer runs: one compiled call that applies the optimizer's optax
rule to all parameters (and, for gluon's Trainer, to the output of the backward that made the
gradients), donating the old weight and state buffers."""
from __future__ import annotations

from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as onp

from .. import _config
from ..base import MXNetValueError
from ..device import made_on
from .._ndarray import NDArray
from ..graph import bulk as _bulk

__all__ = ["FusedUpdate"]


def _is_nd(x: Any) -> bool:
    return isinstance(x, NDArray)


def _as_input(x: Any) -> Any:
    """A host step input as the program takes it: floats as float32 (as MXNet's kernels take them).
    It stays a NumPy array: the compiled call transfers it, far cheaper than ``jnp.asarray``."""
    if isinstance(x, onp.ndarray) and x.dtype.kind == "f" and x.dtype != onp.float32:
        return x.astype(onp.float32)
    return x


def state_leaves(state: Any) -> list:
    """The arrays of one parameter's optimizer state, in ``jax.tree.leaves`` order.  On the training
    path a state is None, an array or a flat tuple of arrays (``_pack_state``): read here without
    a pytree walk, which costs microseconds per parameter per step; other pytrees go by the walk."""
    if state is None:
        return []
    if type(state) is tuple:
        for x in state:
            if x is None or type(x) is tuple or type(x) is list or type(x) is dict:
                return jax.tree.leaves(state, is_leaf=_is_nd)
        return list(state)
    if isinstance(state, (NDArray, jax.Array)):
        return [state]
    return jax.tree.leaves(state, is_leaf=_is_nd)


def state_values(state: Any) -> Any:
    """A state of NDArrays as the same structure of ``jax.Array``s (see ``state_leaves``)."""
    if state is None:
        return None
    if isinstance(state, NDArray):
        return state.to_jax()
    if type(state) is tuple:
        try:
            return tuple([x.to_jax() for x in state])
        except AttributeError:  # (not a flat tuple of NDArrays)
            pass
    return jax.tree.map(NDArray.to_jax, state, is_leaf=_is_nd)


class FusedUpdate:
    """The compiled update of ``Optimizer`` (a mixin: it reads the optimizer's ``_build``,
    ``_pack_state``, ``_step_inputs``, ``_param_config``, hyper-parameters and caches)."""

    def _static_key(self) -> tuple:
        """What the compiled update depends on besides its inputs: the rule (the class: SGD and NAG,
        Adam and Adamax, AdamW and AdaBelief share hyper-parameter names and values; a fused program
        is cached process-wide by this key) and the hyper-parameters the rule reads."""
        return (type(self), *[getattr(self, n) for n in self._hyper], self.clip_gradient, self.multi_precision)

    def _fused(self, configs: tuple, donate: bool) -> Any:
        key = (self._static_key(), configs, donate)
        fn = self._compiled.get(key)
        if fn is None:
            if len(self._compiled) > 64:  # hyper-parameters changed many times: drop stale programs
                self._compiled.clear()
            fn = self._compiled[key] = jax.jit(self._make_fused(configs),
                                               donate_argnums=(0, 2) if donate else ())
        return fn

    def _make_fused(self, configs: tuple) -> Any:
        multi_precision = self.multi_precision

        def fused(weights: list, grads: list, states: list, lrs: Any, wds: Any, rescale: Any,
                  steps: Any = None) -> tuple:
            new_weights, new_states = [], []
            for i, (w, g, s) in enumerate(zip(weights, grads, states)):
                mp = multi_precision and w.dtype == jnp.float16
                master, outer = (s[0], s[1]) if mp else (w, s)
                dt = master.dtype
                step = None if steps is None else jax.tree.map(lambda a: a[i], steps)
                hyper = (lrs[i].astype(dt), wds[i].astype(dt), rescale.astype(dt), configs[i])
                tx = self._build(*hyper, step) if self._uses_step else self._build(*hyper)
                old = jax.tree.leaves(outer)
                # the state's structure from the rule's init, traced here (never computed: nothing
                # reads it); a nested jax.eval_shape per parameter cost more to trace
                inner = jax.tree.unflatten(jax.tree.structure(tx.init(master)), old)
                delta, inner_new = tx.update(g.astype(dt), inner, master)
                master_new = (master + delta).astype(dt)
                inner_new = self._pack_state([n.astype(o.dtype) for n, o in zip(jax.tree.leaves(inner_new), old)])
                if mp:
                    new_weights.append(master_new.astype(w.dtype))
                    new_states.append((master_new, inner_new))
                else:
                    new_weights.append(master_new)
                    new_states.append(inner_new)
            return new_weights, new_states

        return fused

    @_config.with_x64
    def update_all(self, weights: Sequence, grads: Sequence, states: Sequence, lrs: Sequence,
                   wds: Sequence, indices: Sequence | None = None, donate: bool = True,
                   pending: Any = None, steps: Any = None) -> tuple[list, list]:
        """Update all parameters in ONE compiled call: returns ``(new_weights, new_states)``.

        ``weights``/``grads`` are jax arrays, ``states`` the pytrees of jax arrays mirroring
        ``create_state``; ``lrs``/``wds`` are the per-parameter values (``prepare_update``).
        The learning rates, weight decays and ``rescale_grad`` are runtime inputs (no
        recompilation when they change); so are ``steps``, the rule's ``_step_inputs`` (computed
        from ``indices`` when not given, after ``prepare_update``).  With ``donate`` the old weight and state buffers
        are donated to the result: the caller must not read them afterwards.  ``pending``
        (from ``mx.autograd.pending_backward``) says the gradients are the lazy results of a
        backward that has not run: it runs in the same program as the update.
        """
        n = len(weights)
        if not (n == len(grads) == len(states) == len(lrs) == len(wds)) or (indices is not None
                                                                          and len(indices) != n):
            lengths = {"weights": n, "grads": len(grads), "states": len(states), "lrs": len(lrs),
                       "wds": len(wds), **({} if indices is None else {"indices": len(indices)})}
            raise MXNetValueError(f"{type(self).__name__}.update: the lists differ in length: "
                                  + ", ".join(f"{k}={v}" for k, v in lengths.items()))
        for i, (w, g) in enumerate(zip(weights, grads)):
            if w.shape != g.shape:  # jax arrays and NDArrays both have tuple shapes
                raise MXNetValueError(f"{type(self).__name__}.update: weight {i} has shape {tuple(w.shape)} "
                                      f"but its gradient has shape {tuple(g.shape)}")
        if n == 0:
            return [], []
        configs = self._configs(indices, n)
        if donate:  # a buffer given twice cannot be donated; recorded ops not run yet still read them
            buffers = list(weights)
            for state in states:
                if state is not None:
                    buffers.extend(state_leaves(state))
            if not pending:
                buffers.extend(grads)
            _bulk.before_donation(buffers, pending[0] if pending else None)
            donate = len(set(map(id, buffers))) == len(buffers)
        hyper = self._hyper_values(lrs, wds, weights[0])
        if self._uses_step:
            if steps is None:
                steps = self._step_inputs(indices if indices is not None else [None] * n)
            hyper = (*hyper, _as_input(steps) if type(steps) is onp.ndarray else jax.tree.map(_as_input, steps))
        if pending is not None and donate:  # the backward that makes the gradients runs in the same program
            run, positions = pending
            key = (self._static_key(), configs)
            raw = self._compiled.get(("raw", key))
            if raw is None:
                raw = self._compiled[("raw", key)] = self._make_fused(configs)
            with _config.x64():  # float64 weights trace and run as float64
                fused = run.run(update=(key, raw, positions, list(weights), list(states), hyper))
            if fused is not None:
                return fused
            # another thread's read ran the backward first: its gradients are computed, updated below
        if pending is not None:
            grads = [g.to_jax() for g in grads]
        fn = self._fused(configs, donate)
        try:
            with _config.x64():
                return fn(list(weights), list(grads), list(states), *hyper)
        except (ValueError, TypeError) as err:
            self._check_states(weights, states, configs)
            raise err

    def _param_config(self, index: Any) -> Any:
        """Static per-parameter information the update rule needs (LARS: skip by name)."""
        return None

    def _configs(self, indices: Sequence | None, n: int) -> tuple:
        if indices is None or type(self)._param_config is FusedUpdate._param_config:
            return (None,) * n
        return tuple(self._param_config(i) for i in indices)

    def _hyper_values(self, lrs: Sequence, wds: Sequence, weight: Any) -> tuple:
        """The learning rates, weight decays and ``rescale_grad`` as float32 arrays on ``weight``'s
        device (MXNet's kernels take them as float; float64 arguments also cost every dispatch more),
        kept while they repeat (they usually do: a transfer per step is time the hand-written step
        does not spend; made on JAX's default device instead, they would be copied at every step
        where the weights are on another one, a CPU on a GPU machine)."""
        rescale = self.rescale_grad
        if not isinstance(rescale, (int, float, onp.number)):  # an array: no caching
            rescale = rescale.to_jax() if _is_nd(rescale) else rescale
            return (onp.asarray(lrs, onp.float32), onp.asarray(wds, onp.float32), onp.asarray(rescale, onp.float32))
        devices = getattr(weight, "devices", None)
        device = next(iter(devices())) if devices is not None else None
        key = (tuple(lrs), tuple(wds), rescale, device)
        cached = self._hyper_cache.get(key)
        if cached is None:
            if len(self._hyper_cache) >= 8:  # a schedule: values change every step
                self._hyper_cache.clear()
            cached = self._hyper_cache[key] = tuple(made_on(onp.asarray(v, onp.float32), device)
                                                    for v in (lrs, wds, rescale))
        return cached

    def _check_states(self, weights: Sequence, states: Sequence, configs: tuple) -> None:
        """Name the parameter whose state does not fit this optimizer (e.g. momentum changed to 0)."""
        for i, (w, s, c) in enumerate(zip(weights, states, configs)):
            if self.multi_precision and w.dtype == jnp.float16:
                continue
            spec = jax.ShapeDtypeStruct(w.shape, w.dtype)
            with _config.x64():
                expected = jax.eval_shape(self._build(0.0, 0.0, 1.0, c).init, spec)
            expected = self._pack_state(jax.tree.leaves(expected))
            if jax.tree.structure(expected) != jax.tree.structure(s):
                raise MXNetValueError(
                    f"{type(self).__name__}.update: the state of parameter {i} does not fit this optimizer: "
                    f"expected {jax.tree.structure(expected)}, got {jax.tree.structure(s)} "
                    "(was it created by create_state with the same hyper-parameters?)") from None
