"""``mx.sym.sparse``: the symbol functions of the ops MXNet 2.0.0b1 files under ``sparse``.

A symbol carries no storage type until it is bound, so these build exactly the nodes
the same-named ``mx.sym`` functions build (``sparse.dot`` writes ``dot``).  mxjax
stores every array densely: binding such a graph to csr/row_sparse arrays is not
possible, and ``cast_storage`` to a sparse type fails when run, as ``mx.nd`` does.
A name is present once its op is registered.
"""
from __future__ import annotations

from typing import Any

from ..operator import OPS
from ..operator.legacy import legacy_op_name
from ._generated import legacy_function

# the op names MXNet 2.0.0b1's mx.sym.sparse offers (ops with a sparse-storage kernel)
NAMES = (
    "ElementWiseSum", "Embedding", "FullyConnected", "LinearRegressionOutput", "LogisticRegressionOutput",
    "MAERegressionOutput", "_contrib_round_ste", "_contrib_sign_ste", "abs", "adagrad_update", "adam_update",
    "add_n", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "broadcast_add", "broadcast_div",
    "broadcast_minus", "broadcast_mul", "broadcast_plus", "broadcast_sub", "cast_storage", "cbrt", "ceil",
    "clip", "concat", "cos", "cosh", "degrees", "digamma", "dot", "elemwise_add", "elemwise_div",
    "elemwise_mul", "elemwise_sub", "exp", "expm1", "fix", "floor", "ftrl_update", "gamma", "gammaln", "log",
    "log10", "log1p", "log2", "log_sigmoid", "make_loss", "mean", "mish", "negative", "norm", "radians",
    "relu", "retain", "rint", "round", "rsqrt", "sgd_mom_update", "sgd_update", "sigmoid", "sign", "sin",
    "sinh", "slice", "sqrt", "square", "stop_gradient", "sum", "tan", "tanh", "trunc", "where", "zeros_like",
)

_FUNCTIONS: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    if name not in NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return legacy_function(name, __name__, _FUNCTIONS)


def __dir__() -> list[str]:
    return [name for name in NAMES if legacy_op_name(name) in OPS]
