"""Symbol checks for ``mx.test_utils`` (re-exported there): finite-difference gradients
(``numeric_grad``, ``check_numeric_gradient``), expected forward and backward values
(``check_symbolic_forward``/``backward``) and agreement across devices and dtypes
(``check_consistency``).

They bind a Symbol through its public executor (``sym._bind``/``simple_bind``, ``forward``,
``backward``) as MXNet's do, and judge the results with the array comparisons of
``_test_utils_checks``; kept apart from those because only these need ``mx.symbol``.
"""
from __future__ import annotations

from typing import Any

import numpy as onp

from . import ndarray as _nd
from .base import MXNetValueError
from .device import current_device
from .symbol import Variable
from ._ndarray import NDArray
from ._test_utils_checks import (_numpy, assert_almost_equal, default_numeric_eps, get_tolerance, get_tols,
                                 same)

__all__ = ["numeric_grad", "check_numeric_gradient", "check_symbolic_forward", "check_symbolic_backward",
           "check_consistency"]


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
