"""Graph evaluation as the symbol layer's modules and its users import it.

The code lives in :mod:`mxjax.graph.interpret`, below this package, so that layers the
symbol package builds on (``mxjax.dynamic``, npx control flow) can evaluate graphs
without importing it; this module keeps the ``mxjax.symbol.interpret`` path.
"""
from ..graph.interpret import (CONSTANTS, SUBGRAPH_OP, SubgraphOp, call_params, graph_function, graph_program,
                          is_random, node_op)

__all__ = ["CONSTANTS", "SUBGRAPH_OP", "SubgraphOp", "call_params", "graph_function", "graph_program",
           "is_random", "node_op"]
