"""Host implementations of NumPy functions that NumPy itself has since removed (the financial
functions, ``alltrue``, ``msort``, ``trapz``, ``in1d``), so that ``mx.np.fallback`` -- and the
``mx.np`` names MXNet 2.0 binds to it -- work on any NumPy.  Plain NumPy in, NumPy out.

The financial functions follow the conventions of NumPy's former ``numpy.lib.financial``:
cash paid out is negative, ``when`` is 'end' (0) or 'begin' (1).
"""
from __future__ import annotations

from typing import Any

import numpy as onp

__all__ = ["npv", "pmt", "ppmt", "pv", "rate", "mirr", "alltrue", "msort", "trapz", "in1d"]

_WHEN = {"end": 0, "begin": 1, 0: 0, 1: 1, "e": 0, "b": 1, "finish": 0, "start": 1}


def _when(when: Any) -> Any:
    if isinstance(when, str) or onp.ndim(when) == 0:
        if when not in _WHEN:
            raise ValueError(f"when must be 'begin'/'end' (or 1/0), got {when!r}")
        return _WHEN[when]
    return onp.vectorize(lambda w: _WHEN[w])(onp.asarray(when, dtype=object))


def _scalar(value: Any) -> Any:
    return value.item() if isinstance(value, onp.ndarray) and value.ndim == 0 else value


def npv(rate: Any, values: Any) -> Any:
    """Net present value of the cash flow ``values`` (the first at time 0) at the discount ``rate``."""
    values = onp.atleast_1d(onp.asarray(values, dtype=float))
    if values.ndim != 1:
        raise ValueError(f"npv: values must be 1-D, got shape {values.shape}")
    return _scalar((values / (1 + onp.asarray(rate, dtype=float)) ** onp.arange(values.size)).sum(axis=-1))


def _annuity(rate: Any, nper: Any, when: Any) -> Any:
    """Present value of paying 1 each period for ``nper`` periods (its limit ``nper`` at rate 0)."""
    rate = onp.asarray(rate, dtype=float)
    with onp.errstate(divide="ignore", invalid="ignore"):
        factor = (1 + rate * when) * (1 - (1 + rate) ** -onp.asarray(nper, dtype=float)) / rate
    return onp.where(rate == 0, nper, factor)


def pmt(rate: Any, nper: Any, pv: Any, fv: Any = 0, when: Any = "end") -> Any:
    """Payment per period that pays off the loan ``pv`` (to the final value ``fv``) in ``nper`` periods."""
    when = _when(when)
    growth = (1 + onp.asarray(rate, dtype=float)) ** onp.asarray(nper, dtype=float)
    out = -(onp.asarray(fv, dtype=float) / growth + pv) / _annuity(rate, nper, when)
    return _scalar(onp.asarray(out))


def pv(rate: Any, nper: Any, pmt: Any, fv: Any = 0, when: Any = "end") -> Any:
    """Present value of ``nper`` payments ``pmt`` and a final value ``fv``."""
    when = _when(when)
    growth = (1 + onp.asarray(rate, dtype=float)) ** onp.asarray(nper, dtype=float)
    out = -(onp.asarray(pmt, dtype=float) * _annuity(rate, nper, when) + onp.asarray(fv, dtype=float) / growth)
    return _scalar(onp.asarray(out))


def _fv(rate: Any, nper: Any, pmt: Any, pv: Any, when: Any) -> Any:
    """Future value after ``nper`` periods (the balance ``ppmt`` needs)."""
    rate = onp.asarray(rate, dtype=float)
    growth = (1 + rate) ** onp.asarray(nper, dtype=float)
    with onp.errstate(divide="ignore", invalid="ignore"):
        flows = pmt * (1 + rate * when) * (growth - 1) / rate
    return -(pv * growth + onp.where(rate == 0, pmt * onp.asarray(nper, dtype=float), flows))


def ppmt(rate: Any, per: Any, nper: Any, pv: Any, fv: Any = 0, when: Any = "end") -> Any:
    """The principal part of payment number ``per`` (1-based) of ``pmt(rate, nper, pv, fv, when)``."""
    when = _when(when)
    total = pmt(rate, nper, pv, fv, when)
    per = onp.asarray(per, dtype=float)
    rate_arr = onp.asarray(rate, dtype=float)
    # interest part of payment `per`: the rate times the (signed) balance after per-1 payments
    interest = _fv(rate_arr, per - 1, total, pv, when) * rate_arr
    if onp.any(when == 1):  # paid at the start: no interest in the first period, one period less after
        interest = onp.where(when == 1, onp.where(per == 1, 0.0, interest / (1 + rate_arr)), interest)
    interest = onp.where(per < 1, onp.nan, interest)
    return _scalar(onp.asarray(total - interest))


def rate(nper: Any, pmt: Any, pv: Any, fv: Any, when: Any = "end", guess: Any = None, tol: Any = None,
         maxiter: int = 100) -> Any:
    """The interest rate per period solving the annuity equation, by Newton's method (nan when it
    does not converge within ``maxiter`` steps)."""
    when = _when(when)
    nper, pmt, pv, fv = (onp.asarray(v, dtype=float) for v in (nper, pmt, pv, fv))
    r = onp.asarray(0.1 if guess is None else guess, dtype=float)
    tol = 1e-6 if tol is None else tol
    for _ in range(maxiter):
        growth = (1 + r) ** nper
        value = fv + pv * growth + pmt * (1 + r * when) / r * (growth - 1)
        d_growth = nper * growth / (1 + r)
        slope = d_growth * pv + pmt * ((1 / r + when) * d_growth - (growth - 1) / r ** 2)
        step = value / slope
        r = r - step
        if onp.all(onp.abs(step) < tol):
            return _scalar(r)
    return _scalar(onp.full_like(r, onp.nan))


def mirr(values: Any, finance_rate: float, reinvest_rate: float) -> float:
    """Modified internal rate of return: outflows discounted at ``finance_rate``, inflows compounded at
    ``reinvest_rate``; nan unless the flow has both signs."""
    values = onp.asarray(values, dtype=float)
    n = values.size
    positive, negative = values > 0, values < 0
    if not (positive.any() and negative.any()):
        return onp.nan
    inflow = npv(reinvest_rate, values * positive)
    outflow = npv(finance_rate, values * negative)
    return (-inflow * (1 + reinvest_rate) ** n / (outflow * (1 + finance_rate))) ** (1 / (n - 1)) - 1


def alltrue(*args: Any, **kwargs: Any) -> Any:
    """NumPy's former ``alltrue``: ``numpy.all``."""
    return onp.all(*args, **kwargs)


def msort(a: Any) -> onp.ndarray:
    """NumPy's former ``msort``: a copy sorted along the first axis."""
    return onp.sort(a, axis=0)


def trapz(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Any:
    """NumPy's former ``trapz``: ``numpy.trapezoid``."""
    return onp.trapezoid(y, x, dx, axis)


def in1d(ar1: Any, ar2: Any, assume_unique: bool = False, invert: bool = False) -> onp.ndarray:
    """NumPy's former ``in1d``: membership of the flattened ``ar1`` in ``ar2``."""
    return onp.isin(onp.ravel(ar1), ar2, assume_unique=assume_unique, invert=invert)
