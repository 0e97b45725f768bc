"""Tolerances, array comparisons and symbol checks for ``mx.test_utils`` (re-exported there).

Every comparison turns mxjax arrays into NumPy arrays first and judges them with
NumPy's ``isclose`` rule ``|a - b| <= atol + rtol * |b|``.  Default tolerances
depend on the dtypes compared, as in MXNet: the looser of the two operands wins.
A failed comparison raises ``AssertionError`` whose message names the worst
positions (largest error relative to the tolerance), so a test log says where
and by how much two arrays differ.  The symbol checks bind a Symbol through its
public executor (``sym._bind``/``simple_bind``, ``forward``, ``backward``) as MXNet's do.
"""
from __future__ import annotations

import numbers
import os
from typing import Any

import numpy as onp

from . import ndarray as _nd
from .base import MXNetTypeError, MXNetValueError
from .device import current_device
from .symbol import Variable
from ._ndarray import NDArray

__all__ = [
    "default_rtols", "default_atols", "default_numeric_eps", "effective_dtype", "get_tolerance", "get_tols",
    "get_atol", "get_rtol", "get_etol", "same", "checkShapes", "almost_equal", "locationError",
    "assert_almost_equal", "assert_allclose", "assert_almost_equal_with_err", "assert_almost_equal_ignore_nan",
    "assert_exception", "compare_ndarray_tuple", "numeric_grad",
    "check_numeric_gradient", "check_symbolic_forward", "check_symbolic_backward", "check_consistency",
]

_EXACT = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")


def default_rtols() -> dict:
    """Relative tolerance per dtype used when a comparison is given none (integers and bools: exact)."""
    table = {onp.dtype(onp.float16): 1e-2, onp.dtype(onp.float32): 1e-4, onp.dtype(onp.float64): 1e-5}
    table.update({onp.dtype(name): 0 for name in _EXACT})
    return table


def default_atols() -> dict:
    """Absolute tolerance per dtype used when a comparison is given none (integers and bools: exact)."""
    table = {onp.dtype(onp.float16): 1e-1, onp.dtype(onp.float32): 1e-3, onp.dtype(onp.float64): 1e-20}
    table.update({onp.dtype(name): 0 for name in _EXACT})
    return table


def default_numeric_eps() -> dict:
    """Finite-difference step per float dtype: powers of two, so adding them to an input drops no bits."""
    return {onp.dtype(onp.float16): 1.0 / 2 ** 6, onp.dtype(onp.float32): 1.0 / 2 ** 9,
            onp.dtype(onp.float64): 1.0 / 2 ** 14}


def _tf32_device(device: Any) -> bool:
    """Whether float32 matrix products on ``device`` run in TF32 (NVIDIA compute capability 8.0 or later)."""
    if getattr(device, "device_type", None) != "gpu" or os.environ.get("NVIDIA_TF32_OVERRIDE") == "0":
        return False
    try:
        capability = float(getattr(device.jax_device, "compute_capability", 0) or 0)
    except Exception:  # a gpu Device that is not present on this machine
        return False
    return capability >= 8.0


def effective_dtype(dat: Any) -> onp.dtype:
    """The dtype whose tolerances fit ``dat``: float16 for float32 data on TF32 GPUs, else its own dtype."""
    dtype = onp.dtype(dat.dtype) if hasattr(dat, "dtype") else onp.asarray(dat).dtype
    if dtype == onp.float32 and _tf32_device(getattr(dat, "device", None)):
        return onp.dtype(onp.float16)
    return dtype


def get_tolerance(dat: Any, tol: Any, default_tol: dict) -> Any:
    """``tol`` itself when it is a number, else its entry (or ``default_tol``'s) for ``dat``'s dtype."""
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    tol = {} if tol is None else tol
    if dtype in tol:
        return tol[dtype]
    if dtype not in default_tol:
        raise MXNetTypeError(f"get_tolerance: no default tolerance for dtype {dtype.name}; "
                             "pass rtol/atol explicitly")
    return default_tol[dtype]


def get_tols(x: Any, y: Any, rtol: Any, atol: Any) -> tuple:
    """The (rtol, atol) to compare ``x`` with ``y``: the looser default of the two dtypes unless given."""
    x = onp.array(x) if isinstance(x, numbers.Number) else x
    y = onp.array(y) if isinstance(y, numbers.Number) else y
    return (max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols())),
            max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols())))


def get_atol(atol: Any = None, dtype: Any = onp.dtype(onp.float64)) -> Any:
    """``atol``, or the default absolute tolerance of ``dtype`` when it is None."""
    return default_atols()[onp.dtype(dtype)] if atol is None else atol


def get_rtol(rtol: Any = None, dtype: Any = onp.dtype(onp.float64)) -> Any:
    """``rtol``, or the default relative tolerance of ``dtype`` when it is None."""
    return default_rtols()[onp.dtype(dtype)] if rtol is None else rtol


def get_etol(etol: Any = None) -> Any:
    """``etol`` (the share of elements allowed to mismatch), 0 when None."""
    return 0 if etol is None else etol


def _numpy(x: Any) -> Any:
    """NumPy view of an mxjax array; anything else is returned as is."""
    return x.asnumpy() if isinstance(x, NDArray) else x


def same(a: Any, b: Any) -> bool:
    """Whether two arrays have the same shape and elements."""
    return bool(onp.array_equal(_numpy(a), _numpy(b)))


def checkShapes(a: Any, b: Any) -> None:
    """Raise ``AssertionError`` unless ``a`` and ``b`` have the same shape."""
    if a.shape != b.shape:
        raise AssertionError(f"a.shape = {a.shape} and b.shape = {b.shape} are not equal")


def almost_equal(a: Any, b: Any, rtol: Any = None, atol: Any = None, equal_nan: bool = False,
                 use_broadcast: bool = True) -> bool:
    """Whether ``|a - b| <= atol + rtol * |b|`` everywhere (float64 defaults when tolerances are None)."""
    a, b = _numpy(a), _numpy(b)
    if not use_broadcast:
        checkShapes(onp.asarray(a), onp.asarray(b))
    return bool(onp.allclose(a, b, rtol=get_rtol(rtol), atol=get_atol(atol), equal_nan=equal_nan))


def locationError(a: Any, b: Any, index: tuple, names: Any, maxError: bool = False) -> str:
    """One line naming a mismatch position and both values there."""
    label = "maximum " if maxError else ""
    return f"Location of {label}error: {index}, {names[0]}={a[index]:.8f}, {names[1]}={b[index]:.8f}"


def _violations(a: onp.ndarray, b: onp.ndarray, rtol: float, atol: float, equal_nan: bool) -> onp.ndarray:
    """Error over tolerance per element (0 where close, inf where a NaN or inf differs)."""
    with onp.errstate(invalid="ignore", over="ignore"):
        close = onp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
        diff = onp.abs(a.astype(onp.float64) - b.astype(onp.float64))
        ratio = diff / (atol + rtol * onp.abs(b.astype(onp.float64)) + 1e-20)
    ratio = onp.where(onp.isfinite(ratio), ratio, onp.inf)
    return onp.where(close, 0.0, ratio)


def _mismatch_message(a: onp.ndarray, b: onp.ndarray, rtol: float, atol: float, names: Any, equal_nan: bool,
                      mismatches: tuple) -> str:
    """The report ``assert_almost_equal`` raises: worst error, mismatch share and the worst positions."""
    a, b = onp.broadcast_arrays(a, b)
    violation = _violations(a, b, rtol, atol, equal_nan)
    bad = int(onp.count_nonzero(violation))
    worst = onp.unravel_index(int(onp.argmax(violation)), violation.shape) if violation.ndim else ()
    worst = tuple(int(i) for i in worst)
    lines = [f"Error {float(violation[worst]):f} exceeds tolerance rtol={rtol:e}, atol={atol:e} "
             f"(mismatch {100.0 * bad / max(a.size, 1):f}%: {bad} of {a.size} elements)."]
    if worst != ():
        lines.append(locationError(a, b, worst, names, maxError=True))
        shown, ranked = mismatches[0], mismatches[1]
        limit = bad if ranked <= 0 else min(bad, ranked)
        order = onp.argsort(-violation, axis=None, kind="stable")[:min(limit, max(shown, 0))]
        for rank, flat in enumerate(order, 1):
            index = tuple(int(i) for i in onp.unravel_index(int(flat), violation.shape))
            lines.append(f"{rank:3d}: Error {float(violation[index]):f}  {locationError(a, b, index, names)}")
    with onp.printoptions(threshold=8, edgeitems=2, suppress=True):
        lines += [f" {names[0]}: {a!r}", f" {names[1]}: {b!r}"]
    return "\n".join(lines)


def assert_almost_equal(a: Any, b: Any, rtol: Any = None, atol: Any = None, names: Any = ("a", "b"),
                        equal_nan: bool = False, use_broadcast: bool = True, mismatches: tuple = (10, 10)) -> None:
    """Raise ``AssertionError`` unless ``a`` and ``b`` (NumPy or mxjax arrays, or numbers) are close.

    Tolerances default per dtype (``default_rtols``/``default_atols``), may be numbers or
    dicts of dtype to number.  ``mismatches`` = (positions listed in the message, positions
    ranked; 0 or less ranks all).  Two bool arrays must be equal exactly.
    """
    if not use_broadcast:
        checkShapes(a, b)
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _numpy(a), _numpy(b)
    if getattr(a, "dtype", None) == onp.bool_ and getattr(b, "dtype", None) == onp.bool_:
        onp.testing.assert_equal(a, b)
        return
    try:
        close = almost_equal(a, b, rtol, atol, equal_nan=equal_nan)
    except ValueError as err:  # shapes that do not broadcast
        raise AssertionError(f"assert_almost_equal: cannot compare {names[0]} of shape {onp.shape(a)} with "
                             f"{names[1]} of shape {onp.shape(b)}: {err}") from None
    if not close:
        raise AssertionError(_mismatch_message(onp.asarray(a), onp.asarray(b), rtol, atol, names, equal_nan,
                                               tuple(mismatches)))


def assert_allclose(a: Any, b: Any, rtol: Any = 1e-07, atol: Any = 0, equal_nan: bool = True) -> None:
    """``assert_almost_equal`` with NumPy's ``assert_allclose`` defaults (rtol 1e-7, atol 0, NaN equal)."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a: Any, b: Any, rtol: Any = None, atol: Any = None, etol: Any = None,
                                 names: Any = ("a", "b"), equal_nan: bool = False,
                                 mismatches: tuple = (10, 10)) -> None:
    """Like ``assert_almost_equal``, but pass when at most a share ``etol`` of the elements mismatch."""
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = onp.asarray(_numpy(a)), onp.asarray(_numpy(b))
    equals = onp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if 1 - onp.count_nonzero(equals) / equals.size > etol:
        raise AssertionError(_mismatch_message(a, b, rtol, atol, names, equal_nan, tuple(mismatches)))


def _zero_nans(a: Any, b: Any) -> tuple:
    a, b = onp.array(_numpy(a)), onp.array(_numpy(b))
    if a.shape != b.shape:
        a, b = (onp.array(x) for x in onp.broadcast_arrays(a, b))
    nan = onp.isnan(a) | onp.isnan(b)
    a[nan] = 0
    b[nan] = 0
    return a, b


def assert_almost_equal_ignore_nan(a: Any, b: Any, rtol: Any = None, atol: Any = None,
                                   names: Any = ("a", "b")) -> None:
    """``assert_almost_equal`` after zeroing every position where either array holds NaN."""
    a, b = _zero_nans(a, b)
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f: Any, exception_type: Any, *args: Any, **kwargs: Any) -> None:
    """Raise ``AssertionError`` unless ``f(*args, **kwargs)`` raises ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    name = getattr(f, "__name__", repr(f))
    expected = getattr(exception_type, "__name__", str(exception_type))
    raise AssertionError(f"assert_exception: {name} did not raise {expected}")


def compare_ndarray_tuple(t1: Any, t2: Any, rtol: Any = None, atol: Any = None) -> None:
    """``assert_almost_equal`` over two (nested) tuples of arrays; nothing to check when either is None."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------- symbol checks

_FLOATS = (onp.float16, onp.float32, onp.float64)


def _check_dtype(dtype: Any, where: str, allow_asnumpy: bool = True) -> None:
    if not ((allow_asnumpy and isinstance(dtype, str) and dtype == "asnumpy") or dtype in _FLOATS):
        choices = "float16, float32, float64" + (" or 'asnumpy'" if allow_asnumpy else "")
        raise MXNetValueError(f"{where}: dtype must be {choices}, got {dtype!r}")


def _arrays(names: list, values: Any, ctx: Any, dtype: Any, where: str, what: str) -> dict:
    """``values`` (a list in ``names`` order, or a dict over exactly ``names``) as ``mx.nd`` arrays."""
    if isinstance(values, dict):
        if set(values) != set(names):
            raise MXNetValueError(f"{where}: {what} names {sorted(values)} do not match the symbol's {sorted(names)}")
    elif isinstance(values, (list, tuple)):
        if len(values) != len(names):
            raise MXNetValueError(f"{where}: {len(values)} {what} given for {len(names)} ({names})")
        values = dict(zip(names, values))
    else:
        raise MXNetValueError(f"{where}: {what} must be a list or dict of arrays, got {type(values).__name__}")
    return {k: _nd.array(v, ctx=ctx, dtype=v.dtype if dtype == "asnumpy" else dtype)
            if isinstance(v, onp.ndarray) else v for k, v in sorted(values.items())}


def _aux(sym: Any, aux_states: Any, ctx: Any, dtype: Any, where: str) -> Any:
    if aux_states is None:
        return None
    aux = _arrays(sym.list_auxiliary_states(), aux_states, ctx, dtype, where, "auxiliary states")
    return {k: v if isinstance(v, NDArray) else _nd.array(v, ctx=ctx) for k, v in aux.items()}


def numeric_grad(executor: Any, location: dict, aux_states: Any = None, eps: float = 1e-4,
                 use_forward_train: bool = True, dtype: Any = onp.float32) -> dict:
    """Central finite differences of ``sum(executor.outputs[0])`` with respect to each float argument.

    ``location`` maps argument names to NumPy arrays; each element moves by +-eps/2 and the
    bound arrays (and ``aux_states``, reset before every run) are restored afterwards.
    """
    _check_dtype(dtype, "numeric_grad", allow_asnumpy=False)
    location = {k: onp.array(v, order="C") for k, v in location.items()}
    grads = {k: onp.zeros(v.shape, dtype=dtype) for k, v in location.items()}

    def run() -> onp.ndarray:
        for name, value in (aux_states or {}).items():
            executor.aux_dict[name][:] = _numpy(value)
        executor.forward(is_train=use_forward_train)
        return executor.outputs[0].asnumpy().astype(onp.float64)

    for name, value in location.items():
        executor.arg_dict[name][:] = value.astype(dtype)
        if value.dtype.kind != "f":
            continue
        flat = value.reshape(-1)
        for i in range(flat.size):
            original = flat[i]
            flat[i] = original + eps / 2.0
            executor.arg_dict[name][:] = value.astype(dtype)
            up = run()
            flat[i] = original - eps / 2.0
            executor.arg_dict[name][:] = value.astype(dtype)
            down = run()
            grads[name].reshape(-1)[i] = (up - down).sum() / eps
            flat[i] = original
        executor.arg_dict[name][:] = value.astype(dtype)
    return grads


def check_numeric_gradient(sym: Any, location: Any, aux_states: Any = None, numeric_eps: Any = None,
                           rtol: Any = None, atol: Any = None, grad_nodes: Any = None,
                           use_forward_train: bool = True, ctx: Any = None, grad_stype_dict: Any = None,
                           dtype: Any = onp.float32) -> None:
    """Check ``sym``'s backward pass against finite differences at ``location``.

    The output is projected onto random weights (so every output element counts), the
    symbolic gradient comes from the executor's backward, the numeric one from
    ``numeric_grad``.  ``grad_nodes``: argument names, or a dict name -> grad_req
    ('write', 'add' or 'null').  ``grad_stype_dict`` may only ask for 'default' storage.
    """
    _check_dtype(dtype, "check_numeric_gradient", allow_asnumpy=False)
    if any(v != "default" for v in (grad_stype_dict or {}).values()):
        raise MXNetValueError(f"check_numeric_gradient: only 'default' (dense) gradients exist in mxjax, "
                              f"got grad_stype_dict={grad_stype_dict}")
    ctx = ctx or current_device()
    if len(sym.list_outputs()) != 1:
        raise MXNetValueError(f"check_numeric_gradient: the symbol must have one output, "
                              f"it has {sym.list_outputs()}")
    location = _arrays(sym.list_arguments(), location, ctx, dtype, "check_numeric_gradient", "location")
    location_npy = {k: v.asnumpy() for k, v in location.items()}
    aux = _aux(sym, aux_states, ctx, dtype, "check_numeric_gradient")
    aux_npy = None if aux is None else {k: v.asnumpy() for k, v in aux.items()}
    if grad_nodes is None:
        grad_req = {k: "write" for k in sym.list_arguments()}
    elif isinstance(grad_nodes, (list, tuple)):
        grad_req = {k: "write" for k in grad_nodes}
    elif isinstance(grad_nodes, dict):
        grad_req = dict(grad_nodes)
    else:
        raise MXNetValueError(f"check_numeric_gradient: grad_nodes must be a list or dict, got {grad_nodes!r}")
    _, out_shapes, _ = sym.infer_shape(**{k: v.shape for k, v in location.items()})
    proj_name = "__random_proj"
    projected = sym * Variable(proj_name)
    location[proj_name] = _nd.array(onp.random.rand(*out_shapes[0]) + 0.1, ctx=ctx, dtype=dtype)
    grad_req[proj_name] = "write"
    dirty = {k: onp.random.normal(0, 0.01, size=location[k].shape) for k in grad_req}
    args_grad = {k: _nd.array(v, ctx=ctx, dtype=dtype) for k, v in dirty.items()}
    executor = projected._bind(ctx, args=location, args_grad=args_grad, grad_req=grad_req, aux_states=aux)
    executor.forward(is_train=True)
    eps = get_tolerance(executor.outputs[0], numeric_eps, default_numeric_eps())
    if dtype in (onp.float16, onp.float32) and eps < 1e-5:
        raise MXNetValueError(f"check_numeric_gradient: numeric_eps={eps} is too small for {onp.dtype(dtype).name} "
                              "finite differences; use at least 1e-5")
    executor.backward()
    symbolic = {k: executor.grad_dict.get(k) for k in grad_req}
    numeric = numeric_grad(executor, location_npy, aux_npy, eps=eps, use_forward_train=use_forward_train,
                           dtype=dtype)
    for name, req in grad_req.items():
        if name == proj_name:
            continue
        names = (f"NUMERICAL_{name}", f"BACKWARD_{name}")
        if req == "write":
            assert_almost_equal(numeric[name], symbolic[name], rtol, atol, names)
        elif req == "add":
            assert_almost_equal(numeric[name], symbolic[name].asnumpy() - dirty[name], rtol, atol, names)
        elif req == "null":
            if symbolic[name] is not None and not same(symbolic[name], args_grad[name]):
                raise AssertionError(f"check_numeric_gradient: grad_req 'null' for {name!r}, "
                                     "but its gradient buffer was written")
        else:
            raise MXNetValueError(f"check_numeric_gradient: invalid grad_req {req!r} for argument {name!r}")


def check_symbolic_forward(sym: Any, location: Any, expected: Any, rtol: Any = None, atol: Any = None,
                           aux_states: Any = None, ctx: Any = None, equal_nan: bool = False,
                           dtype: Any = onp.float32) -> list:
    """Check ``sym``'s outputs at ``location`` against ``expected`` (a list, or a dict by output name).

    Arrays are made with ``dtype`` ('asnumpy' keeps each NumPy array's own).  Returns the outputs.
    """
    _check_dtype(dtype, "check_symbolic_forward")
    ctx = ctx or current_device()
    location = _arrays(sym.list_arguments(), location, ctx, dtype, "check_symbolic_forward", "location")
    aux = _aux(sym, aux_states, ctx, dtype, "check_symbolic_forward")
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    executor = sym._bind(ctx=ctx, args=location, grad_req="null", aux_states=aux)
    outputs = executor.forward(is_train=False)
    if len(expected) != len(outputs):
        raise MXNetValueError(f"check_symbolic_forward: {len(expected)} expected arrays for "
                              f"{len(outputs)} outputs {sym.list_outputs()}")
    for name, want, got in zip(sym.list_outputs(), expected, outputs):
        assert_almost_equal(want, got, rtol, atol, (f"EXPECTED_{name}", f"FORWARD_{name}"), equal_nan=equal_nan)
    return outputs


def check_symbolic_backward(sym: Any, location: Any, out_grads: Any, expected: Any, rtol: Any = None,
                            atol: Any = None, aux_states: Any = None, grad_req: Any = "write", ctx: Any = None,
                            grad_stypes: Any = None, equal_nan: bool = False, dtype: Any = onp.float32) -> dict:
    """Check the gradients ``sym``'s backward writes at ``location`` for head gradients ``out_grads``.

    ``expected``: a list in argument order, or a dict by argument name.  Gradient buffers
    start random, so 'add' is checked as (buffer after - before) and 'null' as untouched.
    Returns the gradient arrays by name.
    """
    _check_dtype(dtype, "check_symbolic_backward")
    if any(v not in (None, "default") for v in (grad_stypes or {}).values()):
        raise MXNetValueError(f"check_symbolic_backward: only 'default' (dense) gradients exist in mxjax, "
                              f"got grad_stypes={grad_stypes}")
    ctx = ctx or current_device()
    arg_names = sym.list_arguments()
    location = _arrays(arg_names, location, ctx, dtype, "check_symbolic_backward", "location")
    aux = _aux(sym, aux_states, ctx, dtype, "check_symbolic_backward")
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(arg_names, expected))
    dirty = {k: onp.random.normal(size=onp.shape(v)) for k, v in sorted(expected.items())}
    grads = {k: _nd.array(v, ctx=ctx, dtype=onp.asarray(expected[k]).dtype if dtype == "asnumpy" else dtype)
             for k, v in dirty.items()}
    if isinstance(grad_req, str):
        grad_req = {k: grad_req for k in arg_names}
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(arg_names, grad_req))
    executor = sym._bind(ctx=ctx, args=location, args_grad=grads, aux_states=aux, grad_req=grad_req)
    outputs = executor.forward(is_train=True)

    def head(value: Any) -> Any:
        if not isinstance(value, onp.ndarray):
            return value
        return _nd.array(value, ctx=ctx, dtype=value.dtype if dtype == "asnumpy" else dtype)

    if isinstance(out_grads, (list, tuple)):
        out_grads = [head(g) for g in out_grads]
    elif isinstance(out_grads, dict):
        out_grads = [head(out_grads[k]) for k in sym.list_outputs()]
    elif out_grads is not None:
        raise MXNetValueError(f"check_symbolic_backward: out_grads must be a list, dict or None, "
                              f"got {type(out_grads).__name__}")
    executor.backward(out_grads)
    for name in expected:
        names = (f"EXPECTED_{name}", f"BACKWARD_{name}")
        req = grad_req.get(name, "null")
        if req == "write":
            assert_almost_equal(expected[name], grads[name], rtol, atol, names, equal_nan=equal_nan)
        elif req == "add":
            assert_almost_equal(expected[name], grads[name].asnumpy() - dirty[name], rtol, atol, names,
                                equal_nan=equal_nan)
        elif req == "null":
            assert_almost_equal(dirty[name], grads[name], rtol, atol, names, equal_nan=equal_nan)
        else:
            raise MXNetValueError(f"check_symbolic_backward: invalid grad_req {req!r} for argument {name!r}")
    return grads


def _least_precise(a: Any, b: Any) -> Any:
    return a if b is None or onp.dtype(a).itemsize < onp.dtype(b).itemsize else b


def check_consistency(sym: Any, ctx_list: list, scale: float = 1.0, grad_req: Any = "write", arg_params: Any = None,
                      aux_params: Any = None, rtol: Any = None, atol: Any = None, raise_on_err: bool = True,
                      ground_truth: Any = None, equal_nan: bool = False, use_uniform: bool = False,
                      rand_type: Any = onp.float64) -> dict:
    """Run one symbol (or one per entry) under each ``ctx_list`` entry and check all agree.

    Each entry is ``simple_bind``'s keywords: ``{'ctx': mx.cpu(0), 'data': (2, 3),
    'type_dict': {'data': np.float16}}``.  Every run gets the same random inputs; the most
    precise run (or ``ground_truth``) is the reference for outputs and, unless grad_req is
    'null', for gradients of a backward seeded with the first run's outputs.
    Returns the reference values by name.
    """
    if len(ctx_list) < 2:
        raise MXNetValueError(f"check_consistency: needs at least two entries in ctx_list, got {len(ctx_list)}")
    syms = [sym] * len(ctx_list) if not isinstance(sym, (list, tuple)) else list(sym)
    if len(syms) != len(ctx_list):
        raise MXNetValueError(f"check_consistency: {len(syms)} symbols for {len(ctx_list)} ctx_list entries")
    output_names, arg_names = syms[0].list_outputs(), syms[0].list_arguments()
    for s in syms:
        if s.list_arguments() != arg_names or s.list_outputs() != output_names:
            raise MXNetValueError("check_consistency: the symbols differ in arguments or outputs")
    exes = [s.simple_bind(grad_req=grad_req, **spec) for s, spec in zip(syms, ctx_list)]
    arg_params = {} if arg_params is None else dict(arg_params)
    aux_params = {} if aux_params is None else dict(aux_params)
    for name, arr in sorted(exes[0].arg_dict.items()):
        if name not in arg_params:
            if use_uniform:
                value = onp.random.uniform(low=-0.92 * scale, high=0.92 * scale, size=arr.shape)
            else:
                value = onp.random.normal(size=arr.shape, scale=scale)
            arg_params[name] = value.astype(rand_type)
    for name in exes[0].aux_dict:
        aux_params.setdefault(name, 0)
    for exe in exes:
        for name, arr in exe.arg_dict.items():
            arr[:] = _numpy(arg_params[name])
        for name, arr in exe.aux_dict.items():
            arr[:] = _numpy(aux_params[name])
        if grad_req == "add":
            for arr in exe.grad_arrays:
                if arr is not None:
                    arr[:] = 0

    def compare(got: Any, want: Any, rt: Any, at: Any, label: str) -> None:
        try:
            assert_almost_equal(got, want, rtol=rt, atol=at, equal_nan=equal_nan)
        except AssertionError as err:
            if raise_on_err:
                raise AssertionError(f"check_consistency: {label}\n{err}") from None
            print(f"check_consistency: {label}\n{err}")

    for exe in exes:
        exe.forward(is_train=False)
    dtypes = [onp.dtype(exe.outputs[0].dtype) for exe in exes]
    ref = int(onp.argmax([d.itemsize for d in dtypes]))
    truth = ground_truth if ground_truth is not None else dict(exes[ref].output_dict)
    for i, exe in enumerate(exes):
        if i != ref:
            for name, arr in zip(output_names, exe.outputs):
                compare(arr, truth[name], rtol, atol, f"forward output {name!r}: run {i} vs run {ref}")
    if grad_req == "null":
        return truth
    for exe in exes:
        exe.forward(is_train=True)
    head_dtypes = [o.dtype for o in exes[0].outputs]
    for exe in exes:
        head_dtypes = [_least_precise(o.dtype, d) for o, d in zip(exe.outputs, head_dtypes)]
    heads = [o.asnumpy().astype(d) for o, d in zip(exes[0].outputs, head_dtypes)]
    for exe in exes:
        exe.backward([_nd.array(h, ctx=o.device, dtype=o.dtype) for h, o in zip(heads, exe.outputs)])
    truth = ground_truth
    if truth is None:
        truth = dict(exes[ref].output_dict)
        truth.update(exes[ref].grad_dict)
    for i, exe in enumerate(exes):
        if i == ref:
            continue
        for name, arr in zip(output_names + arg_names, exe.outputs + exe.grad_arrays):
            want = truth.get(name)
            if want is None or arr is None:
                if (want is None) != (arr is None):
                    raise AssertionError(f"check_consistency: {name!r} has a gradient in only one of "
                                         f"run {i} and run {ref}")
                continue
            rt, at = rtol, atol
            low_arr, low_want = _least_precise(arr.dtype, dtypes[i]), _least_precise(want.dtype, dtypes[ref])
            if onp.dtype(low_arr) != onp.dtype(arr.dtype) or onp.dtype(low_want) != onp.dtype(want.dtype):
                rt, at = get_tols(onp.zeros((), low_arr), onp.zeros((), low_want), rtol, atol)
            compare(arr, want, rt, at, f"{name!r} after backward: run {i} ({onp.dtype(arr.dtype).name}) vs "
                                       f"run {ref} ({onp.dtype(want.dtype).name})")
    return truth
