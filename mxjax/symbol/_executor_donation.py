"""Executor methods deciding which auxiliary-state buffers a training call may donate to XLA.

Donation lets XLA write BatchNorm's new moving statistics over the old ones instead
of holding both; it is safe only for buffers nothing else can still read.  Kept apart
from ``executor.py`` (which runs the programs); ``Executor`` inherits these methods.
"""
from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
from jax.extend.core import Literal

from ..graph.interpret import graph_function


class _Donation:
    """Which aux-state inputs of a training call are dead after it (see ``Executor.forward``)."""

    __slots__ = ()

    def _donatable(self, mode: str) -> tuple[str, ...]:
        """Aux states whose input buffer is dead after this training call, so XLA may reuse it.

        A buffer qualifies only if this executor's previous training call produced
        it (never a caller's array) and no Python object but its NDArray refers to
        it (``copyto`` always copies, so no other array shares it).  The fused form also keeps its inputs for a possible VJP rebuild, so
        there it additionally needs outputs that do not read the aux states.
        Every backend donates, CPU included: each donated buffer has a same-shaped
        output (its new value) to take it, so XLA never reports it unusable.
        """
        if not self._updated_aux or (mode == "step" and self._outputs_read_aux()):
            return ()
        names = []
        for name in self._updated_aux:
            x = self.aux_dict[name]._data
            # holders: the NDArray, self._owned, x, getrefcount's argument
            if x is self._owned.get(name) and self.aux_dict[name]._var is None and sys.getrefcount(x) <= 4:
                names.append(name)
            del x
        return tuple(names)

    def _outputs_read_aux(self) -> bool:
        """Whether the training outputs depend on aux-state values (traced once, conservatively)."""
        if self._reads_aux is None:
            fn = graph_function(self._symbol._outputs, True)
            aux = {n: jax.ShapeDtypeStruct(a.shape, a.dtype) for n, a in self.aux_dict.items()}
            rest = {n: jax.ShapeDtypeStruct(a.shape, a.dtype) for n, a in self.arg_dict.items()}
            key = jax.ShapeDtypeStruct((2,), jnp.uint32) if self._random else None
            closed = jax.make_jaxpr(lambda a, r, k: fn({**r, **a}, k)[0])(aux, rest, key)
            jaxpr = closed.jaxpr
            tainted = set(jaxpr.invars[:len(jax.tree_util.tree_leaves(aux))])
            for eqn in jaxpr.eqns:  # an equation reading an aux-derived value taints all its outputs
                if any(not isinstance(v, Literal) and v in tainted for v in eqn.invars):
                    tainted.update(eqn.outvars)
            self._reads_aux = any(not isinstance(v, Literal) and v in tainted
                                  for v in jaxpr.outvars)
        return self._reads_aux
