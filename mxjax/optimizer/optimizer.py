"""The Optimizer base class: MXNet 2's bookkeeping (learning rates, multipliers, update counts)
around optax transformations, and one fused, jitted update of all parameters."""
from __future__ import annotations

import warnings
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as onp
import optax

from .. import _tape
from ..base import MXNetTypeError, MXNetValueError
from .._ndarray import NDArray

__all__ = ["Optimizer", "create", "register"]


def _is_nd(x: Any) -> bool:
    return isinstance(x, NDArray)


class Optimizer:
    """The base class of all optimizers (MXNet 2's ``mx.optimizer.Optimizer``).

    Each optimizer is an optax ``GradientTransformation`` (``transformation()``); ``update``
    applies it to lists of NDArrays in place, through ``update_all``: one compiled call that
    updates every parameter and donates the old weight/state buffers.

    ``learning_rate=None`` takes the scheduler's ``base_lr`` (0.01 without a scheduler);
    a given ``learning_rate`` overwrites the scheduler's ``base_lr`` as in MXNet.
    ``clip_gradient`` clips elementwise to ``[-c, c]`` after ``rescale_grad`` (only when
    ``c > 0``, as MXNet's kernels do).  Per-parameter multipliers come, in this order, from
    ``param_dict[index].lr_mult``/``wd_mult`` (gluon Parameters), ``set_lr_mult``/
    ``set_wd_mult`` by index, then by name through ``param_idx2name`` (or the ``__lr_mult__``/
    ``__wd_mult__`` attributes of ``sym``).  Unlike MXNet 1.x, MXNet 2 gives every parameter
    ``wd_mult`` 1 by default: biases and norm gamma/beta are NOT excluded from weight decay
    by name; set their ``wd_mult`` (or ``Parameter.wd_mult``) to 0 to exclude them.
    ``aggregate_num``/``use_fused_step`` are accepted for compatibility: all updates are fused.
    """

    opt_registry: dict[str, type] = {}
    _hyper: tuple[str, ...] = ()  # static hyper-parameter names: changing one recompiles

    def __init__(self, rescale_grad: float = 1.0, param_idx2name: dict | None = None, wd: float = 0.0,
                 clip_gradient: float | None = None, learning_rate: float | None = None,
                 lr_scheduler: Any = None, sym: Any = None, begin_num_update: int = 0,
                 multi_precision: bool = False, param_dict: dict | None = None,
                 aggregate_num: int | None = None, use_fused_step: bool | None = None, **kwargs: Any):
        if kwargs:
            raise MXNetTypeError(f"{type(self).__name__}: unexpected keyword argument(s) "
                                 f"{', '.join(sorted(kwargs))}")
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if lr_scheduler is not None and learning_rate is not None and lr_scheduler.base_lr != learning_rate:
            warnings.warn("learning rate from ``lr_scheduler`` has been overwritten by "
                          "``learning_rate`` in optimizer.", UserWarning, stacklevel=2)
            lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts: dict[int, dict] = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 1 if aggregate_num is None else aggregate_num
        self.use_fused_step = True if use_fused_step is None else use_fused_step
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise MXNetTypeError("Optimizer: param_idx2name should be a dict of param indexes to names, "
                                 f"got {type(param_idx2name).__name__}")
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self._compiled: dict = {}
        self._hyper_cache: dict = {}
        self.lr_mult: dict = {}
        self.wd_mult: dict = {}
        self.set_lr_mult({})
        self.set_wd_mult({})

    # -- registry --------------------------------------------------------------------
    @staticmethod
    def register(klass: type) -> type:
        """Register an optimizer class under its lower-cased class name (for ``create``)."""
        if not isinstance(klass, type):
            raise MXNetTypeError(f"register: expected an Optimizer class, got {type(klass).__name__}")
        name = klass.__name__.lower()
        old = Optimizer.opt_registry.get(name)
        if old is not None and old is not klass:
            warnings.warn(f"WARNING: New optimizer {klass.__module__}.{klass.__name__} is overriding existing "
                          f"optimizer {old.__module__}.{old.__name__}", stacklevel=2)
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name: str, **kwargs: Any) -> "Optimizer":
        """Instantiate the optimizer registered under ``name`` (case-insensitive)."""
        klass = Optimizer.opt_registry.get(str(name).lower())
        if klass is None:
            raise MXNetValueError(f"Cannot find optimizer {name!r}; registered optimizers: "
                                  f"{', '.join(sorted(Optimizer.opt_registry))}")
        return klass(**kwargs)

    # -- learning rate and multipliers ----------------------------------------------------
    @property
    def learning_rate(self) -> float:
        """The current learning rate: the scheduler's value at ``num_update`` when one is set."""
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr: float) -> None:
        """Set the learning rate; MXNet raises (a UserWarning) when a scheduler owns it."""
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been defined. Note that "
                              "set_learning_rate can mutate the value of the learning rate of the "
                              "optimizer only when the LRScheduler of the optimizer is undefined.")
        self.lr = lr

    def set_lr_mult(self, args_lr_mult: dict) -> None:
        """Per-parameter learning-rate multipliers, keyed by index or name (replaces earlier ones)."""
        self.lr_mult = self._mults_from_sym("__lr_mult__")
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult: dict) -> None:
        """Per-parameter weight-decay multipliers, keyed by index or name (default 1 for all)."""
        self.wd_mult = self._mults_from_sym("__wd_mult__")
        self.wd_mult.update(args_wd_mult)

    def _mults_from_sym(self, key: str) -> dict:
        out = {}
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and key in attr[name]:
                    out[name] = float(attr[name][key])
        return out

    def _set_current_device(self, device_id: int) -> None:
        """Keep separate update counts per device (MXNet's per-device updaters)."""
        self._index_update_count = self._all_index_update_counts.setdefault(device_id, {})

    _set_current_context = _set_current_device

    def _update_count(self, index: Any) -> None:
        """Count one more update of each index; ``num_update`` is the largest count."""
        counts, begin, largest = self._index_update_count, self.begin_num_update, self.num_update
        for idx in index if isinstance(index, (list, tuple)) else [index]:
            count = counts[idx] = counts.get(idx, begin) + 1
            if count > largest:
                largest = count
        self.num_update = largest

    def _mults(self, indices: Sequence, mults: dict, attr: str) -> list[float]:
        """Each index's multiplier: its Parameter's ``attr``, else ``mults`` by index, else by name, else 1."""
        params, names = self.param_dict, self.idx2name
        return [getattr(params[i], attr) if i in params else mults[i] if i in mults
                else mults.get(names[i], 1.0) if i in names else 1.0 for i in indices]

    def _get_lrs(self, indices: Sequence) -> list[float]:
        lr = self.learning_rate
        return [lr * m for m in self._mults(indices, self.lr_mult, "lr_mult")]

    def _get_wds(self, indices: Sequence) -> list[float]:
        wd = self.wd
        return [wd * m for m in self._mults(indices, self.wd_mult, "wd_mult")]

    def _get_lr(self, index: Any) -> float:
        return self._get_lrs([index])[0]

    def _get_wd(self, index: Any) -> float:
        return self._get_wds([index])[0]

    def prepare_update(self, indices: Sequence) -> tuple[list[float], list[float]]:
        """Count one update of ``indices`` and return their (learning rates, weight decays):
        the bookkeeping MXNet does before each step, for callers of ``update_all``."""
        self._update_count(indices if isinstance(indices, (list, tuple)) else list(indices))
        return self._get_lrs(indices), self._get_wds(indices)

    # -- the optax transformation ------------------------------------------------------------
    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any,
               config: Any) -> optax.GradientTransformation:
        """This optimizer's update for one parameter as an optax transformation giving the delta
        to add to the weight; ``config`` is ``_param_config(index)``."""
        raise NotImplementedError(f"{type(self).__name__} does not define an update rule")

    def _param_config(self, index: Any) -> Any:
        """Static per-parameter information the update rule needs (LARS: skip by name)."""
        return None

    def transformation(self, lr_mult: float = 1.0, wd_mult: float = 1.0, index: Any = None
                       ) -> optax.GradientTransformation:
        """The optax transformation of ONE parameter group with the given multipliers.

        Its updates are the deltas of MXNet's rule (``optax.apply_updates`` gives MXNet's new
        weight).  The learning rate, weight decay and ``rescale_grad`` are injected
        hyper-parameters (``state.hyperparams[...]``), so a training loop can change them.
        """
        config = self._param_config(index)

        def factory(learning_rate: Any, weight_decay: Any, rescale_grad: Any) -> optax.GradientTransformation:
            return self._build(learning_rate, weight_decay, rescale_grad, config)

        return optax.inject_hyperparams(factory)(
            learning_rate=self.learning_rate * lr_mult, weight_decay=self.wd * wd_mult,
            rescale_grad=self.rescale_grad)

    # -- states ------------------------------------------------------------------------------
    def create_state(self, index: Any, weight: NDArray) -> Any:
        """The auxiliary state of ``weight``: None, one NDArray or a tuple of NDArrays
        (optax-state named tuples), on the weight's device."""
        data = weight.to_jax()
        state = self._build(0.0, 0.0, 1.0, self._param_config(index)).init(data)
        devices = data.devices()
        cls = type(weight)

        def wrap(x: Any) -> NDArray:
            x = jnp.asarray(x)
            if x.devices() != devices:
                x = jax.device_put(x, next(iter(devices)))
            return cls._wrap(x)

        return jax.tree.map(wrap, state)

    def create_state_multi_precision(self, index: Any, weight: NDArray) -> Any:
        """With ``multi_precision`` and a float16 weight: ``(float32 master copy, state)``."""
        if self.multi_precision and weight.dtype == onp.float16:
            master = weight.astype(onp.float32)
            return (master, self.create_state(index, master))
        if weight.dtype == onp.float16:
            warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or slow "
                          "convergence. Consider using multi_precision=True option of the optimizer",
                          stacklevel=2)
        return self.create_state(index, weight)

    # -- updates -----------------------------------------------------------------------------
    def _static_key(self) -> tuple:
        return (*[getattr(self, n) for n in self._hyper], self.clip_gradient, self.multi_precision)

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

        def fused(weights: list, grads: list, states: list, lrs: Any, wds: Any, rescale: Any) -> tuple:
            new_weights, new_states = [], []
            for i, (w, g, s) in enumerate(zip(weights, grads, states)):
                mp = multi_precision and w.dtype == jnp.float16
                master, inner = (s[0], s[1]) if mp else (w, s)
                dt = master.dtype
                tx = self._build(lrs[i].astype(dt), wds[i].astype(dt), rescale.astype(dt), configs[i])
                delta, inner_new = tx.update(g.astype(dt), inner, master)
                master_new = (master + delta).astype(dt)
                inner_new = jax.tree.map(lambda n, o: n.astype(o.dtype), inner_new, inner)
                if mp:
                    new_weights.append(master_new.astype(w.dtype))
                    new_states.append((master_new, inner_new))
                else:
                    new_weights.append(master_new)
                    new_states.append(inner_new)
            return new_weights, new_states

        return fused

    def update_all(self, weights: Sequence, grads: Sequence, states: Sequence, lrs: Sequence,
                   wds: Sequence, indices: Sequence | None = None, donate: bool = True,
                   pending: Any = None) -> tuple[list, list]:
        """Update all parameters in ONE compiled call: returns ``(new_weights, new_states)``.

        ``weights``/``grads`` are jax arrays, ``states`` the pytrees of jax arrays mirroring
        ``create_state``; ``lrs``/``wds`` are the per-parameter values (``prepare_update``).
        The learning rates, weight decays and ``rescale_grad`` are runtime inputs (no
        recompilation when they change).  With ``donate`` the old weight and state buffers
        are donated to the result: the caller must not read them afterwards.  ``pending``
        (from ``_tape.pending_backward_of``) says the gradients are the lazy results of a
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
        if donate:  # a buffer given twice cannot be donated
            buffers = list(weights)
            for state in states:
                if state is not None:
                    buffers.extend(jax.tree.leaves(state))
            if not pending:
                buffers.extend(grads)
            donate = len(set(map(id, buffers))) == len(buffers)
        hyper = self._hyper_values(lrs, wds)
        if pending is not None and donate:  # the backward that makes the gradients runs in the same program
            run, positions = pending
            key = (self._static_key(), configs)
            raw = self._compiled.get(("raw", key))
            if raw is None:
                raw = self._compiled[("raw", key)] = self._make_fused(configs)
            return run.run(update=(key, raw, positions, list(weights), list(states), hyper))
        if pending is not None:
            grads = [g.to_jax() for g in grads]
        fn = self._fused(configs, donate)
        try:
            return fn(list(weights), list(grads), list(states), *hyper)
        except (ValueError, TypeError) as err:
            self._check_states(weights, states, configs)
            raise err

    def _configs(self, indices: Sequence | None, n: int) -> tuple:
        if indices is None or type(self)._param_config is Optimizer._param_config:
            return (None,) * n
        return tuple(self._param_config(i) for i in indices)

    def _hyper_values(self, lrs: Sequence, wds: Sequence) -> tuple:
        """The learning rates, weight decays and ``rescale_grad`` as float32 device arrays (MXNet's
        kernels take them as float; float64 arguments also cost every dispatch more), kept while they
        repeat (they usually do: a transfer per step is time the hand-written step does not spend)."""
        rescale = self.rescale_grad
        if not isinstance(rescale, (int, float, onp.number)):  # an array: no caching
            rescale = rescale.to_jax() if _is_nd(rescale) else rescale
            return (onp.asarray(lrs, onp.float32), onp.asarray(wds, onp.float32), onp.asarray(rescale, onp.float32))
        key = (tuple(lrs), tuple(wds), rescale)
        cached = self._hyper_cache.get(key)
        if cached is None:
            if len(self._hyper_cache) >= 8:  # a schedule: values change every step
                self._hyper_cache.clear()
            cached = self._hyper_cache[key] = tuple(
                jnp.asarray(onp.asarray(v, onp.float32)) for v in (lrs, wds, rescale))
        return cached

    def _check_states(self, weights: Sequence, states: Sequence, configs: tuple) -> None:
        """Name the parameter whose state does not fit this optimizer (e.g. momentum changed to 0)."""
        for i, (w, s, c) in enumerate(zip(weights, states, configs)):
            if self.multi_precision and w.dtype == jnp.float16:
                continue
            spec = jax.ShapeDtypeStruct(w.shape, w.dtype)
            expected = jax.eval_shape(self._build(0.0, 0.0, 1.0, c).init, spec)
            if jax.tree.structure(expected) != jax.tree.structure(s):
                raise MXNetValueError(
                    f"{type(self).__name__}.update: the state of parameter {i} does not fit this optimizer: "
                    f"expected {jax.tree.structure(expected)}, got {jax.tree.structure(s)} "
                    "(was it created by create_state with the same hyper-parameters?)") from None

    def update(self, indices: Any, weights: Any, grads: Any, states: Any) -> None:
        """Update ``weights`` (and ``states``) in place from ``grads``: MXNet 2 takes lists
        (a single index/array, MXNet 1.x style, works too)."""
        if not isinstance(indices, (list, tuple)):
            indices, weights, grads, states = [indices], [weights], [grads], [states]
        name = type(self).__name__
        if not (len(indices) == len(weights) == len(grads) == len(states)):
            raise MXNetValueError(f"{name}.update: indices, weights, grads and states must have the same "
                                  f"length, got {len(indices)}, {len(weights)}, {len(grads)}, {len(states)}")
        jax_weights = []
        for i, (w, g) in enumerate(zip(weights, grads)):
            if not (isinstance(w, NDArray) and isinstance(g, NDArray)):
                raise MXNetTypeError(f"{name}.update: weights and grads must be NDArrays, got "
                                     f"{type(w).__name__} and {type(g).__name__} at position {i}")
            jax_weights.append(w.to_jax())
        lrs, wds = self.prepare_update(indices)
        jax_states = [None if s is None else jax.tree.map(NDArray.to_jax, s, is_leaf=_is_nd) for s in states]
        pending = _tape.pending_backward_of(grads)
        new_weights, new_states = self.update_all(
            jax_weights, grads if pending else [g.to_jax() for g in grads], jax_states, lrs, wds,
            indices=indices, pending=pending)
        NDArray._set_datas(weights, new_weights)
        for s, ns in zip(states, new_states):
            if s is not None:
                for nd, x in zip(jax.tree.leaves(s, is_leaf=_is_nd), jax.tree.leaves(ns)):
                    nd._set_data(x)

    def update_multi_precision(self, indices: Any, weights: Any, grads: Any, states: Any) -> None:
        """``update`` for states from ``create_state_multi_precision`` (float16 weights are
        updated through their float32 master copies when ``multi_precision``)."""
        self.update(indices, weights, grads, states)

    # -- pickling (Trainer.save_states) --------------------------------------------------------
    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["param_dict"]  # the Trainer sets it again
        state["_compiled"] = {}
        state["_hyper_cache"] = {}
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__ = state
        self.__dict__.setdefault("_hyper_cache", {})
        self.param_dict = {}


register = Optimizer.register
create = Optimizer.create_optimizer
