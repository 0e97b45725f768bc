"""Executor methods deciding which auxiliary-state buffers a training call may donate to XLA.

Donation lets XLA write BatchNorm's new moving statistics over the old ones instead
of holding both; it is safe only for buffers nothing else can still read.  That is decided
by ownership: the buffer a training call makes is handed to its aux-state array as a lazy
value (:class:`_Owned`), and whatever reads it -- an op, ``asnumpy``, ``to_jax``, a view,
a copy -- goes through ``compute``, which hands it out for good.  A buffer never handed
out can be read by nobody else, so the next training call may donate it.  Another thread may
read an aux state while a training call runs (a monitor of BatchNorm's statistics): the call
decides, donates and hands over the new buffers holding the executor's ``_donation_lock``, and a
read that finds its buffer given away reads the buffer that replaced it.  Kept apart from
``executor.py`` (which runs the programs); ``Executor`` inherits these methods.
"""
from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from jax.extend.core import Literal

from ..graph.interpret import graph_function
from ..graph.lazy import Lazy


class _Owned(Lazy):
    """The ``_var`` of an aux-state array holding the buffer this executor's last training call
    made: ``given`` once anything read it (or a view of the array was made, which may read it
    later) -- from then on it may have other holders, and it is never donated.  ``successor``: the
    owned buffer of the training call that donated this one (a read from another thread that raced
    with it, or a view made before it, reads that one: the array's value now)."""

    __slots__ = ("value", "given", "lock", "successor")

    def __init__(self, value: jax.Array, lock: Any) -> None:
        self.value, self.given, self.lock, self.successor = value, False, lock, None

    def compute(self, array: Any) -> jax.Array:
        with self.lock:  # (not while a training call decides what to donate and gives it away)
            if self.successor is None:
                self.given = True
                return self.value
        return self.successor.compute(array)

    def share(self, array: Any) -> None:
        with self.lock:
            if self.successor is None:
                self.given = True
                return
        self.successor.share(array)

    def device(self, array: Any) -> Any:
        return next(iter(self.value.devices()))


class _Donation:
    """Which aux-state inputs of a training call are dead after it (see ``Executor.forward``)."""

    __slots__ = ()

    def _donatable(self, mode: str) -> tuple[str, ...]:
        """Aux states whose input buffer is dead after this training call, so XLA may reuse it.

        A buffer qualifies only if this executor's previous training call produced
        it (never a caller's array) and nothing has read it since (see :class:`_Owned`).
        The fused form also keeps its inputs for a possible VJP rebuild, so there it
        additionally needs outputs that do not read the aux states.
        Every backend donates, CPU included: each donated buffer has a same-shaped
        output (its new value) to take it, so XLA never reports it unusable.
        """
        if not self._updated_aux or (mode == "step" and self._outputs_read_aux()):
            return ()
        owned = self._owned
        return tuple(name for name in self._updated_aux
                     if (var := self.aux_dict[name]._var) is owned.get(name) and var is not None and not var.given)

    def _own(self, name: str, value: jax.Array, donated: bool) -> None:
        """Give the aux-state array ``name`` the buffer a training call made, as owned (see :class:`_Owned`);
        ``donated``: the call gave the array's old buffer away (an earlier holder of it reads this one)."""
        array = self.aux_dict[name]
        array._check_writable()
        var = _Owned(value, self._donation_lock)
        # (after pending engine work; the old owned value dropped unread)
        array._overwrite(jax.ShapeDtypeStruct(value.shape, value.dtype), var)
        if donated:
            self._owned[name].successor = var
        self._owned[name] = var

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
