"""``mx.sym.npx``: MXNet 2's NumPy-extension ops as symbol functions (``npx.relu`` writes ``_npx_relu``).

Names are the ``_npx_*`` ops of the registry, every ``mx.npx`` operator bound
straight to one op, which lends its exact signature (``npx.activation(data, act_type)``),
and the legacy ops MXNet 2 also files under ``npx`` (``npx.cast`` writes ``Cast``,
``npx.rnn`` writes ``RNN``), bound through their registered op.  npx spells some inputs
as ``x``/``a``/``b`` where the op says ``data``/``lhs``/``rhs``.  Python scalars follow
NumPy semantics, as in MXNet 2.
"""
from __future__ import annotations

import sys
from typing import Any

from .. import numpy_extension as _npx
from . import numpy_extension_image as image  # noqa: F401
from . import numpy_extension_random as random
from ._generated import PrefixedNamespace

sys.modules.setdefault(f"{__name__}.random", random)  # ``import mxjax.symbol.numpy_extension.random``

# the mx.npx functions that are one op bound by make_function (hand-written ones read run-time
# state such as the training flag and are bound afresh from their op instead)
_FRONTS = {name: getattr(_npx, name) for name in _npx.__all__
           if hasattr(getattr(_npx, name), "op") and hasattr(getattr(_npx, name), "positional")}

# npx name -> the op name MXNet 2 writes for it, where that op carries no ``_npx_`` alias in
# MXNet's registry naming (MXNet registers ``_npx_cast`` as an alias of ``Cast``, and so on).
# A name appears in the namespace once its op is registered here.
LEGACY_OPS = {
    "add_n": "add_n", "batch_flatten": "Flatten", "broadcast_greater": "broadcast_greater",
    "cast": "Cast", "norm": "norm", "pad": "Pad", "reshape_like": "reshape_like", "rnn": "RNN",
    "roi_pooling": "ROIPooling", "slice": "slice", "slice_channel": "SliceChannel",
    "slice_like": "slice_like", "scalar_poisson": "_random_poisson", "tensor_poisson": "_sample_poisson",
    "sync_batch_norm": "_contrib_SyncBatchNorm", "batch_norm_with_relu": "_contrib_BatchNormWithReLU",
    "requantize": "_contrib_requantize", "contrib_quantize": "_contrib_quantize",
    "contrib_quantize_v2": "_contrib_quantize_v2", "contrib_calibrate_entropy": "_contrib_calibrate_entropy",
    **{f"quantized_{kind}": f"_contrib_quantized_{kind}" for kind in (
        "act", "conv", "elemwise_add", "elemwise_mul", "embedding", "flatten", "fully_connected",
        "pooling")},  # quantized_reshape/transpose: MXNet's own _npx_quantized_* ops
    **{f"intgemm_{kind}": f"_contrib_intgemm_{kind}" for kind in (
        "fully_connected", "maxabsolute", "prepare_data", "prepare_weight", "take_weight")},
}

_OPS = PrefixedNamespace("_npx_", __name__, keywords={"x": "data", "a": "lhs", "b": "rhs"}, fronts=_FRONTS,
                         legacy=False, legacy_ops=LEGACY_OPS)


def __getattr__(name: str) -> Any:
    return _OPS.get(name)


def __dir__() -> list[str]:
    return [n for n in _OPS.dir() if not n.startswith("_image_")]  # those are image.<name>
