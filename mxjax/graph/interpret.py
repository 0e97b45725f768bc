"""Graphs as JAX functions: the executor compiles them, inference evaluates them abstractly.

It works on the IR (``graph.ir``) alone, below ``mxjax.symbol`` (which re-exports it as
``mxjax.symbol.interpret``), so the layers between -- ``mxjax.dynamic``, npx control
flow -- can run graphs without importing the symbol layer.

``graph_function`` turns output entries into ``f(values, key) -> (outputs, aux_updates)``
where ``values`` maps variable names to arrays: the graph is lowered (``lower``) to
``graph.recorded``'s straight-line form and run by its interpreter.  Random ops get keys folded from
``key`` by node position; in training, ops with auxiliary inputs (BatchNorm) also
report those inputs' new values, keyed by the variable name that feeds them.
"""
from __future__ import annotations

import weakref
from typing import Any, Callable, NamedTuple, Sequence

import jax

from .ir import Entry, Node, topo_order
from .recorded import evaluate
from ..base import MXNetError
from ..operator import OpDef
from ..operator.naming import op_for_json_name
from ..subgraph import subgraph_inputs
from .shape_rules import consumer_shape, is_deferred_creation, resolved_creation_shape


# Node parameter holding non-array inputs (Python scalars) as ((slot, value), ...)
CONSTANTS = "__constants__"
SUBGRAPH_OP = "_CachedOp"  # a partitioned group: evaluates its subgraphs[0]


class SubgraphOp:
    """What ``node_op`` gives for a ``_CachedOp`` node: enough of an OpDef for the symbol layer,
    and (per training flag) a compute function that runs the subgraph on the node's inputs.

    ``updates`` holds the auxiliary updates of the last call (read right after it, inside
    one trace), named by the graph variables the subgraph's variables stand for.
    """

    name = SUBGRAPH_OP
    params: dict = {}
    differentiable = True
    dynamic_shape = False
    check = None

    def __init__(self, node: Node, train: bool = False) -> None:
        self.node, self.train = node, train
        info = _SUBGRAPH_INFO.get(node)
        if info is None:  # node_op is asked often (listing, inference): walk the subgraph once
            info = _SUBGRAPH_INFO[node] = _subgraph_info(node)
        self.names, self.needs_key, self.aux_inputs = info
        self.aux_update = _updated_inside if self.aux_inputs else None
        self.updates: dict = {}
        self._fn: Callable | None = None

    def count_outputs(self, params: dict) -> int:
        return self.node.num_outputs

    def compute(self, *inputs: Any) -> tuple:
        if self._fn is None:
            self._fn = graph_function(self.node.subgraphs[0], self.train)
        key, inputs = (inputs[0], inputs[1:]) if self.needs_key else (None, inputs)
        outs, self.updates = self._fn(dict(zip(self.names, inputs)), key)
        return tuple(outs)


_SUBGRAPH_INFO: "weakref.WeakKeyDictionary[Node, tuple]" = weakref.WeakKeyDictionary()


def _subgraph_info(node: Node) -> tuple:
    """(input names, whether it is random, the input positions that are auxiliary states)."""
    names = subgraph_inputs(node)
    aux = set()
    for inner in topo_order(node.subgraphs[0]):
        if not inner.is_variable:
            op = node_op(inner)
            aux.update(inner.inputs[s][0].name for s in op.aux_inputs if s < len(inner.inputs))
    return names, is_random(node.subgraphs[0]), tuple(k for k, name in enumerate(names) if name in aux)


def _updated_inside(*args: Any, **kwargs: Any) -> None:
    """The aux_update of a subgraph node: its auxiliary states are updated by the ops inside."""
    raise MXNetError("internal: a subgraph's auxiliary updates come from its compute")


def is_random(outputs: list[Entry]) -> bool:
    """Whether evaluating these outputs draws random numbers (so needs a PRNG key)."""
    for node in topo_order(outputs):
        if node.is_variable:
            continue
        if node_op(node).needs_key:
            return True
    return False


def node_op(node: Node) -> Any:
    """The OpDef of an op node (a :class:`SubgraphOp` for a partitioned group)."""
    if node.op == SUBGRAPH_OP:
        return SubgraphOp(node)
    try:
        return op_for_json_name(node.op)
    except MXNetError:
        raise MXNetError(f"node {node.name!r}: operator {node.op!r} is not registered in mxjax") from None


def call_params(node: Node, op: OpDef, train: bool) -> dict:
    """The node's parameters as the op's compute function takes them (training flag included)."""
    params = dict(node.params)
    if "_train" in op.params:
        params["_train"] = train
    return params


class Lowered(NamedTuple):
    """A graph in ``graph.recorded``'s straight-line form (see :func:`lower`)."""

    variables: list  # the graph's variables: its leaves, in order
    ops: list  # per op node, in topological order: (node, position, refs of its array inputs, width)
    outputs: list  # the refs of the graph's outputs


def lower(outputs: list[Entry]) -> Lowered:
    """The graph in ``graph.recorded``'s straight-line form: per op node its place in topological
    order, the refs of its array inputs (an earlier output by position among all outputs, or a
    variable: a leaf) and how many outputs it gives (as many as anything reads, at least its count)."""
    nodes = topo_order(outputs)
    variables = [node for node in nodes if node.is_variable]
    refs = {id(node): -1 - k for k, node in enumerate(variables)}
    width = {id(node): node.num_outputs for node in nodes if not node.is_variable}
    for source, index in [entry for node in nodes for entry in node.inputs] + list(outputs):
        if not source.is_variable:
            width[id(source)] = max(width[id(source)], index + 1)
    ops, count = [], 0
    for position, node in enumerate(nodes):
        if not node.is_variable:
            args = tuple(refs[id(n)] if n.is_variable else refs[id(n)] + i for n, i in node.inputs)
            refs[id(node)] = count
            count += width[id(node)]
            ops.append((node, position, args, width[id(node)]))
    return Lowered(variables, ops, [refs[id(n)] if n.is_variable else refs[id(n)] + i for n, i in outputs])


def run_lowered(graph: Lowered, leaves: list, step: Callable[[Node, int, int], Callable[..., tuple]],
                failed: Callable[[int, list, Exception], Exception] | None = None) -> list:
    """Run a :func:`lower`-ed graph on its leaves with ``graph.recorded``'s interpreter, each op node
    as ``step(node, position, width)`` (a function of its array inputs giving ``width`` outputs);
    returns the graph's outputs.  ``failed`` as ``evaluate`` takes it."""
    done = evaluate([(None, step(node, position, width), None, args, True)
                     for node, position, args, width in graph.ops], leaves, failed=failed)
    return [done[r] if r >= 0 else leaves[-1 - r] for r in graph.outputs]


def exactly(out: Any, width: int) -> tuple:
    """An op's result as ``width`` outputs (a single value is one; positions nothing reads are None)."""
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return outs + (None,) * (width - len(outs)) if len(outs) < width else outs[:width]


def graph_function(outputs: list[Entry], train: bool = False) -> Callable[..., Any]:
    """``f(values: dict[str, array], key) -> (list of outputs, dict of aux updates)``, pure and jittable.

    The graph is lowered once (:func:`lower`) and run by ``graph.recorded``'s interpreter, the one
    bulk segments and autograd's regions use."""
    graph = lower(outputs)
    variables, ops = graph.variables, graph.ops
    plans = {}
    for node, _, _, _ in ops:
        if node.op == SUBGRAPH_OP:
            plans[id(node)] = (SubgraphOp(node, train), {}, ())
        else:
            op = node_op(node)
            params = call_params(node, op, train)
            plans[id(node)] = (op, params, params.pop(CONSTANTS, ()))
    creations = {id(node): tuple(slot for slot, (n, _) in enumerate(node.inputs) if is_deferred_creation(n))
                 for node, _, _, _ in ops}
    random = [node for node, _, _, _ in ops if plans[id(node)][0].needs_key]

    def failed(k: int, inputs: list, err: Exception) -> Exception:
        """An MXNetError names the node and op it came from."""
        if not isinstance(err, MXNetError):
            return err
        node = ops[k][0]
        return MXNetError(f"Error in operator {node.name} ({plans[id(node)][0].name}): {err}")

    def run(values: dict, key: Any = None) -> tuple[list, dict]:
        missing = [node.name for node in variables if node.name not in values]
        if missing:
            raise MXNetError(f"graph input {missing[0]!r} has no value")
        if random and key is None:
            node = random[0]
            raise MXNetError(f"node {node.name!r} ({plans[id(node)][0].name}) is random and needs a PRNG key")
        aux_updates: dict[str, Any] = {}

        def step(node: Node, position: int, width: int) -> Callable[..., tuple]:
            op, params, constants = plans[id(node)]
            remade = creations[id(node)]

            def call(*arrays: Any) -> tuple:
                inputs = list(arrays)
                if remade:
                    _remake(node, inputs, remade, train)
                for slot, value in constants:
                    inputs.insert(slot, value)
                if op.needs_key:
                    out = op.compute(jax.random.fold_in(key, position), *inputs, **params)
                else:
                    out = op.compute(*inputs, **params)
                if isinstance(op, SubgraphOp):
                    aux_updates.update(op.updates)
                elif train and op.aux_update is not None:
                    new = op.aux_update(*inputs, **{k: v for k, v in params.items() if k != "_train"})
                    for slot, value in zip(op.aux_inputs, new):
                        source = node.inputs[slot][0]
                        if source.is_variable:
                            aux_updates[source.name] = value
                return exactly(out, width)
            return call
        outs = run_lowered(graph, [values[node.name] for node in variables], step, failed)
        return outs, aux_updates

    return run


def _remake(node: Node, inputs: list, creations: tuple, train: bool) -> None:
    """1.x ``zeros((L*D, 0, H))`` inputs (at ``creations``): made again in the shape the consumer's
    rule gives for these inputs."""
    shapes = [tuple(jax.numpy.shape(x)) for x in inputs]
    for slot in creations:
        wanted = consumer_shape(node_op(node), node.params, slot, shapes)
        if wanted is not None:
            source = node.inputs[slot][0]
            source_op = node_op(source)
            params = {**call_params(source, source_op, train), "shape": resolved_creation_shape(source, wanted)}
            inputs[slot] = source_op.compute(**params)


def graph_program(outputs: list[Entry], input_names: Sequence[str], aux_names: Sequence[str],
                  train: bool) -> Callable[..., tuple]:
    """``run(inputs, key) -> (*outputs, *new values of aux_names)`` over positional inputs: the body
    of a compiled graph (an auxiliary state the graph does not update comes back unchanged)."""
    fn = graph_function(outputs, train)

    def run(inputs: Sequence, key: Any = None) -> tuple:
        values = dict(zip(input_names, inputs))
        outs, updates = fn(values, key)
        return tuple(outs) + tuple(updates.get(n, values[n]) for n in aux_names)
    return run
