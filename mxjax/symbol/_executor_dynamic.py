"""Executor methods for graphs with dynamic-shape ops (``mxjax.dynamic``).

Such a graph cannot be one compiled program: it runs as compiled static segments
around eager dynamic ops, recorded by autograd in training so ``backward`` can
follow.  Kept apart from ``executor.py``, whose compiled one-program path is the
common case; ``Executor`` inherits these methods.
"""
from __future__ import annotations

from typing import Any

from .. import _rng, autograd
from ..base import MXNetError, MXNetValueError
from ..dynamic import SegmentedGraph


class _SegmentedRun:
    """``forward``/``backward`` of an ``Executor`` whose graph has dynamic-shape ops."""

    __slots__ = ()

    def _forward_segmented(self, train: bool) -> list:
        """A graph with dynamic-shape ops: compiled static segments and eager dynamic ops
        (``mxjax.dynamic``); a training forward is recorded so ``backward`` can follow."""
        graph = self._segmented.get(train)
        if graph is None:
            aux = list(self._updated_aux) if train else []
            graph = self._segmented[train] = SegmentedGraph(self._symbol._outputs, self.arg_names + self.aux_names,
                                                            aux, train)
        arrays = []
        for name in self.arg_names:
            array = type(self.arg_dict[name])._wrap(self.arg_dict[name].to_jax())
            if train and name in self._diff:
                array.attach_grad()
            arrays.append(array)
        arrays += [type(a)._wrap(a.to_jax()) for a in (self.aux_dict[n] for n in self.aux_names)]
        key = _rng.next_key() if self._random else None
        recording = train and bool(self._diff)
        with autograd.record(train_mode=True) if recording else autograd.pause(train_mode=train):
            results = graph(arrays, key)
        n_out = len(self._symbol._outputs)
        for name, value in zip(graph.aux_names, results[n_out:]):
            self.aux_dict[name]._write(value.to_jax())
        self._seg_inputs = dict(zip(self.arg_names, arrays)) if recording else None
        cls = self._output_class()
        self.outputs = [r._as_class(cls) for r in results[:n_out]]
        return self.outputs

    def _backward_segmented(self, out_grads: Any) -> None:
        if self._seg_inputs is None:
            raise MXNetError("backward: call forward(is_train=True) first (with arguments that need gradients)")
        if out_grads is not None:
            out_grads = out_grads if isinstance(out_grads, (list, tuple)) else [out_grads]
            if len(out_grads) != len(self.outputs):
                raise MXNetValueError(f"backward: {len(out_grads)} output gradients for {len(self.outputs)} outputs")
        autograd.backward(self.outputs, out_grads)
        for name in self._diff:
            value = self._seg_inputs[name].grad.to_jax()
            buf = self.grad_dict[name]
            if value.dtype != buf.dtype:
                value = value.astype(buf.dtype)
            buf._write(value if self._grad_req[name] == "write" else buf.to_jax() + value)
        self._seg_inputs = None
