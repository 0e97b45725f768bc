"""``mx.test_utils`` helpers that run a whole workload: an executor's speed (``check_speed``) and two
optimizers' updates side by side (``compare_optimizer``), with MXNet's signatures and defaults."""
from __future__ import annotations

import time
from typing import Any

import numpy as onp

from . import device as _device
from . import random as _random
from ._ndarray import waitall
from ._test_utils_checks import compare_ndarray_tuple
from .base import MXNetValueError

__all__ = ["check_speed", "compare_optimizer", "compare_optimizer_noise_seeded"]


def check_speed(sym: Any, location: dict | None = None, ctx: Any = None, N: int = 20,  # noqa: N803
                grad_req: Any = None, typ: str = "whole", **kwargs: Any) -> float:
    """Seconds per run of ``sym`` bound on ``ctx``: forward and backward (``typ='whole'``) or forward
    only (``'forward'``), averaged over ``N`` runs after one warm-up (which also compiles).

    location: input values by name; without it, ``kwargs`` give the input shapes and the values are
    standard-normal."""
    if typ not in ("whole", "forward"):
        raise MXNetValueError(f'check_speed: typ can only be "whole" or "forward", got {typ!r}')
    ctx = ctx or _device.current_device()
    grad_req = grad_req or "write"
    if location is None:
        exe = sym.simple_bind(ctx=ctx, grad_req=grad_req, **kwargs)
        location = {k: onp.random.normal(size=arr.shape, scale=1.0) for k, arr in exe.arg_dict.items()}
    else:
        if not isinstance(location, dict):
            raise MXNetValueError(f"check_speed: location must be a dict of name -> array, got {location!r}")
        exe = sym.simple_bind(ctx=ctx, grad_req=grad_req, **{k: v.shape for k, v in location.items()})
    for name, value in location.items():
        exe.arg_dict[name][:] = onp.asarray(value).astype(exe.arg_dict[name].dtype)
    train = typ == "whole"

    def run() -> None:
        exe.forward(is_train=train)
        if train:
            exe.backward(out_grads=exe.outputs)

    run()
    waitall()
    tic = time.time()
    for _ in range(N):
        run()
    waitall()
    return (time.time() - tic) / N


def _random_pairs(opt1: Any, opt2: Any, shapes: Any, dtype: Any, w_stype: str, g_stype: str,
                  compare_states: bool) -> tuple:
    """Equal weights and gradients for the two optimizers, and their fresh states."""
    for stype in (w_stype, g_stype):
        if stype != "default":
            raise MXNetValueError(f"compare_optimizer: storage type {stype!r} is not supported; mxjax arrays "
                                  "are dense only (stype='default')")
    device = _device.current_device()
    sides: tuple = ([], [], []), ([], [], [])
    for i, shape in enumerate(shapes):
        w2 = _random.uniform(shape=shape, ctx=device, dtype=dtype)
        g2 = _random.uniform(shape=shape, ctx=device, dtype=dtype)
        w1, g1 = w2.copyto(device), g2.copyto(device)
        s1, s2 = opt1.create_state_multi_precision(i, w1), opt2.create_state_multi_precision(i, w2)
        if compare_states:
            compare_ndarray_tuple(s1, s2)
        for side, (w, g, s) in zip(sides, ((w1, g1, s1), (w2, g2, s2))):
            side[0].append(w)
            side[1].append(g)
            side[2].append(s)
    return sides


def _compare(opt1: Any, opt2: Any, shapes: Any, dtype: Any, w_stype: str, g_stype: str, rtol: float,
             atol: float, compare_states: bool, noise_seed: int | None) -> None:
    (w1, g1, s1), (w2, g2, s2) = _random_pairs(opt1, opt2, shapes, dtype, w_stype, g_stype, compare_states)
    indices = list(range(len(shapes)))
    for opt, w, g, s in ((opt1, w1, g1, s1), (opt2, w2, g2, s2)):
        if noise_seed is not None:  # the same noise for both (SGLD)
            _random.seed(noise_seed)
        opt.update_multi_precision(indices, w, g, s)
    if compare_states:
        compare_ndarray_tuple(tuple(s1), tuple(s2), rtol=rtol, atol=atol)
    compare_ndarray_tuple(tuple(w1), tuple(w2), rtol=rtol, atol=atol)


def compare_optimizer(opt1: Any, opt2: Any, shapes: Any, dtype: Any, w_stype: str = "default",
                      g_stype: str = "default", rtol: float = 1e-4, atol: float = 1e-5,
                      compare_states: bool = True) -> None:
    """Assert that ``opt1`` and ``opt2`` create equal states and make equal updates from the same
    random weights and gradients of ``shapes`` (one update of all of them)."""
    _compare(opt1, opt2, shapes, dtype, w_stype, g_stype, rtol, atol, compare_states, None)


def compare_optimizer_noise_seeded(opt1: Any, opt2: Any, shapes: Any, dtype: Any, noise_seed: int,
                                   w_stype: str = "default", g_stype: str = "default", rtol: float = 1e-4,
                                   atol: float = 1e-5, compare_states: bool = True) -> None:
    """``compare_optimizer`` with the random stream reseeded to ``noise_seed`` before each update, so
    noisy optimizers (SGLD) draw the same noise."""
    _compare(opt1, opt2, shapes, dtype, w_stype, g_stype, rtol, atol, compare_states, noise_seed)
