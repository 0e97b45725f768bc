"""Integer gradients, as MXNet gives them: an integer variable's gradient has its own dtype.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as onp

from .._ndarray import NDArray


# MXNet gives an integer variable a gradient of its own dtype (d(x*x)/dx = 2x for int32 x): each op's
# backward kernel runs in the input's dtype, so a fractional gradient truncates toward zero where it
# enters an integer array.  JAX has no cotangents for integers (float0), so an op with differentiated
# integer inputs is differentiated at float "twins" of them, its outputs' cotangents cast to the
# twin's output dtypes and the input gradients cast back to the integer dtypes (the truncation).

INEXACT: dict = {}  # dtype -> whether it is a float or complex type


def inexact(dtype: Any) -> bool:
    found = INEXACT.get(dtype)
    if found is None:
        found = INEXACT[dtype] = bool(jnp.issubdtype(dtype, jnp.inexact))
    return found


def integer(dtype: Any) -> bool:
    return onp.dtype(dtype).kind in "iu"


def int_tracked(entry: Any, dtype: Any) -> bool:
    """Whether an integer input is differentiated: an integer variable, or an integer output of a
    node that differentiated integers.  (An argmax of floats stays out: its gradient is zero anyway,
    and its indices feed take/one_hot, which cannot run on float twins.)"""
    return (type(entry) is not tuple or entry[0].ints) and integer(dtype)  # (a Leaf: a variable)


def integer_only(inputs: Sequence[Any], diff: list, entries: list) -> bool:
    """An op with a float array input gives its integer inputs no gradient (MXNet's mixed int/float
    ops do not: ``(i * w).sum()`` leaves ``i.grad`` zero, tracked ``w`` or not); then they are
    dropped from ``diff``.  Returns whether integer inputs are still differentiated."""
    if not any(isinstance(x, NDArray) and inexact(x._data.dtype) for x in inputs):
        return True
    for i in [i for i in diff if not inexact(inputs[i]._data.dtype)]:
        diff.remove(i)
        entries[i] = None
    return False


def twin(x: Any) -> Any:
    """The float stand-in of an integer array: exact for 16-bit integers in float32, for 32-bit (and
    53-bit) ones in float64."""
    return x.astype(jnp.float32 if x.dtype.itemsize <= 2 else jnp.float64)


def as_float_out(out: Any) -> Any:
    """A twin's outputs, integer ones as float32 (their cotangent is zero, as MXNet's for argmax)."""
    if isinstance(out, (tuple, list)):
        return tuple(map(as_float_out, out))
    return out if inexact(out.dtype) else out.astype(jnp.float32)


@functools.lru_cache(maxsize=256)
def _cast_pullback(out_dtypes: tuple, in_dtypes: tuple) -> Callable:
    """The pullback of a twin: output cotangents cast to the twin's dtypes, input gradients to the
    inputs' own (one function per signature, so jitted callers see a stable static part)."""
    def pullback(vjp: Any, cotangents: Any) -> tuple:
        leaves, tree = jax.tree.flatten(cotangents)
        cast = tree.unflatten([c.astype(d) for c, d in zip(leaves, out_dtypes)])
        return tuple(g.astype(d) for g, d in zip(vjp(cast), in_dtypes))
    return pullback


def vjp_of(fn: Callable, inputs: Sequence[Any], diff: tuple) -> tuple:
    """``(outputs, pullback)`` of ``fn`` at ``inputs`` w.r.t. the ``diff`` positions (``jax.vjp``);
    integer positions get gradients of their own dtype (see above)."""
    def partial_fn(*diff_inputs: Any) -> Any:
        full = list(inputs)
        for i, value in zip(diff, diff_inputs):
            full[i] = value
        return fn(*full)
    ints = [i for i in diff if not inexact(inputs[i].dtype)]
    if not ints:
        return jax.vjp(partial_fn, *(inputs[i] for i in diff))
    out = fn(*inputs)  # the values as the integers give them (overflow, integer division...)
    twin_out, vjp = jax.vjp(lambda *d: as_float_out(partial_fn(*d)),
                            *(twin(inputs[i]) if i in ints else inputs[i] for i in diff))
    pullback = _cast_pullback(tuple(o.dtype for o in jax.tree.leaves(twin_out)),
                              tuple(inputs[i].dtype for i in diff))
    return out, jax.tree_util.Partial(pullback, vjp)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def truncate_grad(x: Any, dtype: Any) -> Any:
    """Identity on a twin whose gradient is truncated as it would be in ``dtype`` (an integer
    array read by an op of a fused program: MXNet's per-op integer backward)."""
    return x


def _truncate_fwd(x: Any, dtype: Any) -> tuple:
    return x, None


def _truncate_bwd(dtype: Any, _: Any, ct: Any) -> tuple:
    return (ct.astype(dtype).astype(ct.dtype),)


truncate_grad.defvjp(_truncate_fwd, _truncate_bwd)


