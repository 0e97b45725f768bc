"""The host side of the ``Custom`` op: the user's ``forward``/``backward`` run as ``jax.pure_callback``
calls under a ``jax.custom_vjp``, on NDArrays built by :data:`HOST` (filled by ``mxjax._custom_host``).

Split from ``custom`` (which re-exports these names) to keep the callback plumbing apart from
the registered op and the registry queries.
"""
from __future__ import annotations

from typing import Any, Callable

import jax
import numpy as onp

from .. import _config
from ..base import MXNetError
from ._custom_prop import Signature

class HostArrays:
    """How host code builds the NDArrays a user's CustomOp sees; ``mxjax._custom_host`` fills
    ``factory`` at import: ``factory()`` returns ``make(host_array) -> NDArray`` of the class the
    current mode uses (``mx.np.ndarray`` when NumPy array semantics are on, as in MXNet 2)."""

    factory: Callable[[], Callable[[Any], Any]] | None = None

    def maker(self) -> Callable[[Any], Any]:
        if self.factory is None:
            raise MXNetError("Custom: the NDArray side of custom operators is not set up (import mxjax)")
        return self.factory()


HOST = HostArrays()


def user_error(op_type: str, method: str, err: Exception) -> MXNetError:
    """An exception raised by the user's code, as the MXNetError MXNet reports (naming the op type)."""
    if isinstance(err, MXNetError) and str(err).startswith(f"Custom operator {op_type!r}"):
        return err
    return MXNetError(f"Custom operator {op_type!r}: {method} raised {type(err).__name__}: {err}")


class _HostOp:
    """One graph node's CustomOp and the host functions its callbacks call (same instance for both)."""

    def __init__(self, sig: Signature, is_train: bool) -> None:
        self.sig, self.is_train = sig, is_train
        self.make = HOST.maker()  # fixed when traced: the callback may run on another thread
        self.op = sig.create_operator()

    @_config.with_x64  # the callback's thread: the user's code sees 64-bit types as mxjax's calls do
    def forward(self, *inputs: Any) -> tuple:
        sig, make, n = self.sig, self.make, len(self.sig.arguments)
        in_data = [make(x) for x in inputs[:n]]
        aux = [make(x) for x in inputs[n:]]
        out_data = [make(onp.zeros(s, d)) for s, d in zip(sig.out_shapes, sig.out_dtypes)]
        try:
            self.op.forward(is_train=self.is_train, req=["write"] * len(out_data), in_data=in_data,
                            out_data=out_data, aux=aux)
        except Exception as err:
            raise user_error(sig.op_type, "forward", err) from err
        return (tuple(onp.asarray(o, dtype=d) for o, d in zip(out_data, sig.out_dtypes))
                + tuple(onp.asarray(a, dtype=d) for a, d in zip(aux, sig.aux_dtypes)))

    @_config.with_x64
    def backward(self, diff: tuple, *arrays: Any) -> tuple:
        sig, make = self.sig, self.make
        n_in, n_out = len(sig.arguments) + len(sig.aux_names), len(sig.outputs)
        inputs, outs, cts = arrays[:n_in], arrays[n_in:n_in + n_out], arrays[n_in + n_out:]
        n = len(sig.arguments)
        in_grad = [make(onp.zeros(s, d)) for s, d in zip(sig.in_shapes, sig.in_dtypes)]
        try:
            self.op.backward(req=["write" if i in diff else "null" for i in range(n)],
                             out_grad=[make(c) for c in cts], in_data=[make(x) for x in inputs[:n]],
                             out_data=[make(o) for o in outs], in_grad=in_grad,
                             aux=[make(a) for a in inputs[n:]])
        except Exception as err:
            raise user_error(sig.op_type, "backward", err) from err
        return tuple(onp.asarray(in_grad[i], dtype=sig.in_dtypes[i]) for i in diff)


def _graph_call(sig: Signature, is_train: bool, inputs: tuple) -> Any:
    """The op inside a traced program: host callbacks under a ``custom_vjp`` (outputs, then new aux)."""
    host = _HostOp(sig, is_train)
    n_out = len(sig.outputs)
    result_structs = sig.out_structs() + [jax.ShapeDtypeStruct(s, d)
                                          for s, d in zip(sig.aux_shapes, sig.aux_dtypes)]
    diff = tuple(i for i, d in enumerate(sig.in_dtypes) if onp.issubdtype(d, onp.inexact))

    def forward(xs: tuple) -> tuple:
        return tuple(jax.pure_callback(host.forward, result_structs, *xs, vmap_method="sequential"))

    @jax.custom_vjp
    def run(xs: tuple) -> tuple:
        return forward(xs)

    def run_fwd(xs: tuple) -> tuple:
        results = forward(xs)
        return results, (xs, results[:n_out])

    def run_bwd(residuals: tuple, cts: tuple) -> tuple:
        xs, outs = residuals
        structs = [jax.ShapeDtypeStruct(sig.in_shapes[i], sig.in_dtypes[i]) for i in diff]
        grads = jax.pure_callback(lambda *a: host.backward(diff, *a), structs, *xs, *outs, *cts[:n_out],
                                  vmap_method="sequential") if diff else ()
        full: list = [None] * len(xs)
        for i, g in zip(diff, grads):
            full[i] = g
        return (tuple(full),)

    run.defvjp(run_fwd, run_bwd)
    return run(tuple(inputs))
