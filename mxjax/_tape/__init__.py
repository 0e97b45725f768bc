"""The autograd tape: recorded nodes, their compiled forward-with-VJP, and deferred (fused) nodes.

A node is a pure function of arrays plus JAX's VJP closure from running it.
Usually the forward runs when the op is recorded.  A node can also be recorded
*deferred*: its outputs are lazy arrays (shape and dtype known, value not yet
computed), and ops recorded on lazy arrays are deferred too.  A hybridized block
called under ``record()`` starts such a region, so the loss computed from its
outputs stays deferred as well.  Then ``backward`` compiles the whole region
-- forward, loss and VJP -- into ONE XLA program (cached by the region's
structure), which is what a hand-written ``jax.jit(value_and_grad(...))`` is.
A thread's deferred nodes join its open region until it runs or is sealed, as its
imperative ops join its bulk segment.  Reading a lazy value before ``backward``
(printing the loss, ``asnumpy``) runs the region's nodes as ordinary recorded
nodes, each with its VJP: same values, just not fused with the backward.

``nodes`` holds the node types, ``ints`` integer gradients, ``recording`` recording,
``plan`` the fused program of a region, ``chain`` the backward of nodes that ran with their VJPs,
``composed`` a region's backward going on through such nodes, ``pending`` a backward not run yet
and ``backward`` the backward pass itself.
"""
from __future__ import annotations

from .nodes import Leaf, Node, apply_vjp, bounded, clear_caches, differentiable, seq_of
from .ints import vjp_of
from .pending import defer_backward, defer_region_backward, pending_backward_of, region_of
from .recording import record
from .backward import fused_backward, plan_backward

__all__ = ["Leaf", "Node", "apply_vjp", "bounded", "clear_caches", "defer_backward", "defer_region_backward",
           "differentiable", "fused_backward", "pending_backward_of", "plan_backward", "record",
           "region_of", "seq_of", "vjp_of"]
