"""The Optimizer base class: MXNet 2's bookkeeping (learning rates, multipliers, update counts)
around optax transformations, and one fused, jitted update of all parameters."""
from __future__ import annotations

import os
import warnings
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as onp
import optax

from .. import _config
from ..autograd import pending_backward
from ..base import MXNetTypeError, MXNetValueError
from .._ndarray import NDArray
from . import _donation, _rules as R
from ._fused import FusedUpdate, state_leaves, state_values

__all__ = ["Optimizer", "Test", "create", "register"]


def aggregation_size() -> int:
    """MXNet's ``MXNET_OPTIMIZER_AGGREGATION_SIZE`` (default 4, clipped to 1..50): the
    ``aggregate_num`` AdamW and AdaBelief report (all updates are fused here anyway)."""
    try:
        size = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))
    except ValueError:
        size = 4
    return max(1, min(50, size))


class Optimizer(FusedUpdate):
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
    ``update`` calls ``fused_step`` when ``use_fused_step`` else ``step`` (MXNet 2's dispatch, so a
    subclass that defines only ``create_state``/``step`` works); for the optimizers here both run
    the same compiled update of all parameters, so ``aggregate_num`` changes nothing.

    States have MXNet's structure: None, one array, or a flat tuple of arrays in MXNet's order
    (Adam: ``(mean, var)``); the update count ``t`` a rule needs is the optimizer's per-index
    count (as in MXNet), passed to the compiled update as a runtime input.
    """

    opt_registry: dict[str, type] = {}
    _hyper: tuple[str, ...] = ()  # static hyper-parameter names: changing one recompiles
    _uses_step = False  # whether the rule reads the per-index update count (``_step_inputs``)

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
        self.use_fused_step = False if use_fused_step is None else use_fused_step
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
               config: Any, step: Any = None) -> optax.GradientTransformation:
        """This optimizer's update for one parameter as an optax transformation giving the delta
        to add to the weight; ``config`` is ``_param_config(index)``; ``step`` this parameter's row
        of ``_step_inputs`` (traced; None when only the state's structure is wanted)."""
        raise NotImplementedError(f"{type(self).__name__} does not define an update rule")

    def _has_rule(self) -> bool:
        return type(self)._build is not Optimizer._build

    def _step_inputs(self, indices: Sequence) -> Any:
        """Per-parameter runtime inputs of the rule, computed on the host after the counts were
        advanced (leading axis: the parameters): by default each index's update count ``t``."""
        counts = self._index_update_count
        return onp.asarray([counts.get(i, self.num_update) for i in indices], onp.float64)

    def _pack_state(self, leaves: list) -> Any:
        """The state in MXNet's structure from the rule's state leaves: None, the one array, or a tuple."""
        if not leaves:
            return None
        return leaves[0] if len(leaves) == 1 else tuple(leaves)

    def transformation(self, lr_mult: float = 1.0, wd_mult: float = 1.0, index: Any = None
                       ) -> optax.GradientTransformation:
        """The optax transformation of ONE parameter group with the given multipliers.

        Its updates are the deltas of MXNet's rule (``optax.apply_updates`` gives MXNet's new
        weight).  The learning rate, weight decay and ``rescale_grad`` are injected
        hyper-parameters (``state.hyperparams[...]``), so a training loop can change them.
        """
        config = self._param_config(index)
        begin = self.begin_num_update

        def factory(learning_rate: Any, weight_decay: Any, rescale_grad: Any) -> optax.GradientTransformation:
            if not self._uses_step:
                return self._build(learning_rate, weight_decay, rescale_grad, config)
            # standalone, the transformation counts its own steps (from begin_num_update)
            def init_fn(params: Any) -> Any:
                inner = self._build(learning_rate, weight_decay, rescale_grad, config).init(params)
                return inner, jnp.asarray(begin, jnp.int32)

            def update_fn(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
                inner, count = state
                count = count + 1
                step = self._standalone_step(count)
                tx = self._build(learning_rate, weight_decay, rescale_grad, config, step)
                updates, inner = tx.update(updates, inner, params)
                return updates, (inner, count)

            return optax.GradientTransformation(init_fn, update_fn)

        return optax.inject_hyperparams(factory)(
            learning_rate=self.learning_rate * lr_mult, weight_decay=self.wd * wd_mult,
            rescale_grad=self.rescale_grad)

    def _standalone_step(self, count: Any) -> Any:
        """``step`` for a standalone transformation at update ``count`` (traced)."""
        return count.astype(jnp.float32)

    # -- states ------------------------------------------------------------------------------
    def create_state(self, index: Any, weight: NDArray) -> Any:
        """The auxiliary state of ``weight`` in MXNet's structure (None, one NDArray or a tuple of
        NDArrays), on the weight's device; None for a subclass without an update rule of its own."""
        if not self._has_rule():
            return None
        data = weight.to_jax()
        with _config.x64():  # a float64 weight gets float64 states
            init = self._build(0.0, 0.0, 1.0, self._param_config(index)).init(data)
        state = self._pack_state(jax.tree.leaves(init))
        devices = data.devices()
        cls = type(weight)

        def wrap(x: Any) -> NDArray:
            x = jnp.asarray(x)
            if x.devices() != devices:
                x = jax.device_put(x, next(iter(devices)))
            return cls._wrap(x)

        with _config.x64():
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

    def update(self, indices: Any, weights: Any, grads: Any, states: Any) -> None:
        """Update ``weights`` (and ``states``) in place from ``grads``: ``fused_step`` when
        ``use_fused_step``, else ``step``.  MXNet 2 takes lists; a single index/array (MXNet 1.x
        style) works too."""
        lists = self._as_lists(indices, weights, grads, states)
        method = type(self).fused_step if self.use_fused_step else type(self).step
        if method is Optimizer.fused_step or method is Optimizer.step:
            self._apply(*lists)  # (validated once on the training hot path)
        else:
            method(self, *lists)

    def step(self, indices: Any, weights: Any, grads: Any, states: Any) -> None:
        """One optimization step of the listed parameters, in place (counts one update of each)."""
        self._apply(*self._as_lists(indices, weights, grads, states))

    def fused_step(self, indices: Any, weights: Any, grads: Any, states: Any) -> None:
        """``step`` through the fused update: here both are one compiled call for all parameters."""
        self._apply(*self._as_lists(indices, weights, grads, states))

    def _as_lists(self, indices: Any, weights: Any, grads: Any, states: Any) -> tuple:
        if not isinstance(indices, (list, tuple)):
            indices, weights, grads, states = [indices], [weights], [grads], [states]
        name = type(self).__name__
        if not (len(indices) == len(weights) == len(grads) == len(states)):
            raise MXNetValueError(f"{name}.update: indices, weights, grads and states must have the same "
                                  f"length, got {len(indices)}, {len(weights)}, {len(grads)}, {len(states)}")
        for i, (w, g) in enumerate(zip(weights, grads)):
            if not (isinstance(w, NDArray) and isinstance(g, NDArray)):
                raise MXNetTypeError(f"{name}.update: weights and grads must be NDArrays, got "
                                     f"{type(w).__name__} and {type(g).__name__} at position {i}")
        return list(indices), list(weights), list(grads), list(states)

    @_config.with_x64
    def _apply(self, indices: list, weights: list, grads: list, states: list) -> None:
        if not self._has_rule():
            raise NotImplementedError(f"{type(self).__name__} defines no update rule: override step "
                                      "(and fused_step when use_fused_step)")
        lrs, wds = self.prepare_update(indices)
        steps = self._step_inputs(indices) if self._uses_step else None
        pending = pending_backward(grads)
        # the old weights are donated only if no other thread may be reading them; the check, the
        # dispatch and the swap to the new buffers exclude a thread's first read (see _donation)
        with _donation.LOCK:
            donate = not _donation.shared(weights)
            jax_weights = [w.to_jax() for w in weights]
            jax_states = [state_values(s) for s in states]
            new_weights, new_states = self.update_all(
                jax_weights, grads if pending else [g.to_jax() for g in grads], jax_states, lrs, wds,
                indices=indices, donate=donate, pending=pending, steps=steps)
            arrays, values = list(weights), list(new_weights)
            for s, ns in zip(states, new_states):
                if s is not None:
                    arrays += state_leaves(s)
                    values += state_leaves(ns)
            NDArray._set_datas(arrays, values)

    def update_multi_precision(self, indices: Any, weights: Any, grads: Any, states: Any) -> None:
        """``update`` for states from ``create_state_multi_precision``: float16 weights are updated
        through their float32 master copies when ``multi_precision`` (inside the compiled update;
        for a subclass with its own ``step``, MXNet's way: update the masters, cast them back)."""
        if self._has_rule():
            self.update(indices, weights, grads, states)
            return
        indices, weights, grads, states = self._as_lists(indices, weights, grads, states)
        mp = [self.multi_precision and w.dtype == onp.float16 for w in weights]
        masters = [s[0] if m else w for w, s, m in zip(weights, states, mp)]
        self.update(indices, masters, [g.astype(onp.float32) if m else g for g, m in zip(grads, mp)],
                    [s[1] if m else s for s, m in zip(states, mp)])
        for w, master, m in zip(weights, masters, mp):
            if m:
                w[:] = master.astype(w.dtype)

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


@Optimizer.register
class Test(Optimizer):
    """The Test optimizer: ``weight -= lr * (rescale_grad * grad + wd * weight)`` (no clipping);
    its state is an unused float32 array of zeros."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)

    def _build(self, learning_rate: Any, weight_decay: Any, rescale_grad: Any, config: Any,
               step: Any = None) -> Any:
        return R.plain_step(learning_rate, weight_decay, rescale_grad)


register = Optimizer.register
create = Optimizer.create_optimizer
