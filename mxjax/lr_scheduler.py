"""``mx.lr_scheduler``: MXNet 2's learning-rate schedules, callables ``sched(num_update) -> lr``.

The formulas, the warm-up and the statefulness are MXNet's: ``FactorScheduler`` and
``MultiFactorScheduler`` decay ``base_lr`` in place as ``num_update`` passes their steps
(they do not go back for a smaller ``num_update``); ``PolyScheduler`` and
``CosineScheduler`` decay from the ``base_lr`` given at construction (``base_lr_orig``),
so an optimizer's ``learning_rate`` that overwrites ``base_lr`` later does not change
them, and the linear warm-up always ends at the constructor's ``base_lr``.
"""
from __future__ import annotations

import logging
from math import cos, pi

from .base import MXNetValueError

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler", "PolyScheduler", "CosineScheduler"]


class LRScheduler:
    """Base class: ``base_lr`` and an optional warm-up over the first ``warmup_steps`` updates,
    'linear' (from ``warmup_begin_lr`` towards ``base_lr``) or 'constant' (``warmup_begin_lr``)."""

    def __init__(self, base_lr: float = 0.01, warmup_steps: int = 0, warmup_begin_lr: float = 0,
                 warmup_mode: str = "linear"):
        self.base_lr = base_lr
        if not isinstance(warmup_steps, int):
            raise MXNetValueError(f"{type(self).__name__}: warmup_steps must be an int, got {warmup_steps!r}")
        self.warmup_steps = warmup_steps
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = warmup_begin_lr
        if self.warmup_begin_lr > self.warmup_final_lr:
            raise MXNetValueError(f"{type(self).__name__}: Base lr has to be higher than warmup_begin_lr "
                                  f"(base_lr={base_lr}, warmup_begin_lr={warmup_begin_lr})")
        if self.warmup_steps < 0:
            raise MXNetValueError(f"{type(self).__name__}: Warmup steps has to be positive or 0, got {warmup_steps}")
        if warmup_mode not in ("linear", "constant"):
            raise MXNetValueError(f"{type(self).__name__}: Supports only linear and constant modes of warmup, "
                                  f"got {warmup_mode!r}")
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update: int) -> float:
        """The warm-up learning rate at ``num_update < warmup_steps``."""
        assert num_update < self.warmup_steps
        if self.warmup_mode == "linear":
            increase = (self.warmup_final_lr - self.warmup_begin_lr) * float(num_update) / float(self.warmup_steps)
            return self.warmup_begin_lr + increase
        return self.warmup_begin_lr

    def __call__(self, num_update: int) -> float:
        """The learning rate after ``num_update`` updates (the largest count over the weights)."""
        raise NotImplementedError(f"{type(self).__name__} must define __call__")


class FactorScheduler(LRScheduler):
    """Multiply the learning rate by ``factor`` every ``step`` updates, not below ``stop_factor_lr``:
    ``base_lr * factor ** ((num_update - 1) // step)`` after the warm-up."""

    def __init__(self, step: int, factor: float = 1, stop_factor_lr: float = 1e-8, base_lr: float = 0.01,
                 warmup_steps: int = 0, warmup_begin_lr: float = 0, warmup_mode: str = "linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise MXNetValueError(f"FactorScheduler: Schedule step must be greater or equal than 1 round, got {step}")
        if factor > 1.0:
            raise MXNetValueError(f"FactorScheduler: Factor must be no more than 1 to make lr reduce, got {factor}")
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        # a loop, not a formula: resuming at a large num_update applies every missed decay
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
                logging.info("Update[%d]: now learning rate arrived at %0.5e, will not change in the future",
                             num_update, self.base_lr)
            else:
                logging.info("Update[%d]: Change learning rate to %0.5e", num_update, self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiply the learning rate by ``factor`` once ``num_update`` passes each of the increasing
    ``step`` values: ``base_lr * factor ** (number of steps < num_update)``."""

    def __init__(self, step: list, factor: float = 1, base_lr: float = 0.01, warmup_steps: int = 0,
                 warmup_begin_lr: float = 0, warmup_mode: str = "linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(step, list) or len(step) < 1:
            raise MXNetValueError(f"MultiFactorScheduler: step must be a non-empty list of ints, got {step!r}")
        for i, s in enumerate(step):
            if i != 0 and step[i] <= step[i - 1]:
                raise MXNetValueError(f"MultiFactorScheduler: Schedule step must be an increasing integer list, "
                                      f"got {step}")
            if s < 1:
                raise MXNetValueError(f"MultiFactorScheduler: Schedule step must be greater or equal than 1 round, "
                                      f"got {step}")
        if factor > 1.0:
            raise MXNetValueError(f"MultiFactorScheduler: Factor must be no more than 1 to make lr reduce, "
                                  f"got {factor}")
        self.step = step
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind <= len(self.step) - 1:
            if num_update > self.step[self.cur_step_ind]:
                self.count = self.step[self.cur_step_ind]
                self.cur_step_ind += 1
                self.base_lr *= self.factor
                logging.info("Update[%d]: Change learning rate to %0.5e", num_update, self.base_lr)
            else:
                return self.base_lr
        return self.base_lr


class _DecayToFinal(LRScheduler):
    """Warm-up, then a decay from ``base_lr`` to ``final_lr`` over ``max_update - warmup_steps`` updates;
    subclasses give the curve as ``_fraction(progress in [0, 1])``."""

    def __init__(self, max_update: int, base_lr: float, final_lr: float, warmup_steps: int,
                 warmup_begin_lr: float, warmup_mode: str):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        name = type(self).__name__
        if not isinstance(max_update, int):
            raise MXNetValueError(f"{name}: max_update must be an int, got {max_update!r}")
        if max_update < 1:
            raise MXNetValueError(f"{name}: maximum number of updates must be strictly positive, got {max_update}")
        # MXNet quirk, kept: the decay starts from the base_lr given here, even if an optimizer
        # later overwrites base_lr
        self.base_lr_orig = self.base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = self.max_update - self.warmup_steps

    def _fraction(self, progress: float) -> float:
        raise MXNetValueError(f"{type(self).__name__} does not define its decay curve")

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            progress = float(num_update - self.warmup_steps) / float(self.max_steps)
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * self._fraction(progress)
        return self.base_lr


class PolyScheduler(_DecayToFinal):
    """Polynomial decay after the warm-up, reaching ``final_lr`` at ``max_update``::

        final_lr + (base_lr - final_lr) * (1 - (num_update - warmup_steps) / (max_update - warmup_steps)) ** pwr
    """

    def __init__(self, max_update: int, base_lr: float = 0.01, pwr: float = 2, final_lr: float = 0,
                 warmup_steps: int = 0, warmup_begin_lr: float = 0, warmup_mode: str = "linear"):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self.power = pwr

    def _fraction(self, progress: float) -> float:
        return pow(1 - progress, self.power)


class CosineScheduler(_DecayToFinal):
    """Cosine decay after the warm-up, reaching ``final_lr`` at ``max_update``::

        final_lr + (base_lr - final_lr) * (1 + cos(pi * (num_update - warmup_steps) / (max_update - warmup_steps))) / 2
    """

    def __init__(self, max_update: int, base_lr: float = 0.01, final_lr: float = 0,
                 warmup_steps: int = 0, warmup_begin_lr: float = 0, warmup_mode: str = "linear"):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr, warmup_mode)

    def _fraction(self, progress: float) -> float:
        return (1 + cos(pi * progress)) / 2
