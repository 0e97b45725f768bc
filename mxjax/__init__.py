"""mxjax: Apache MXNet 2.0's programming model on JAX (``import mxjax as mx``)."""
from __future__ import annotations

from . import _config  # noqa: F401  (turns on JAX's 64-bit mode before any array exists)
from . import _deferred_compute, autograd, base, device, engine, error, operator
from .base import MXNetError, RemovedAPIError
from .device import Context, Device, cpu, cpu_pinned, current_context, current_device, gpu, num_gpus
from . import attribute, log, registry, runtime, util
from .attribute import AttrScope
from .util import (is_np_array, is_np_default_dtype, is_np_shape, np_array, np_default_dtype, np_shape,
                   set_np_shape, use_np, use_np_array, use_np_default_dtype, use_np_shape)
from ._ndarray import NDArray, waitall
from . import numpy as np
from . import ndarray
from . import ndarray as nd
from . import numpy_extension as npx
from . import initializer, lr_scheduler, name, optimizer, random
from . import initializer as init
from . import random as rnd
from . import profiler
from . import kvstore
from . import kvstore as kv
from .kvstore import kvstore_server
from . import symbol
from . import symbol as sym
from . import gluon
from . import contrib
from .gluon import metric  # MXNet 1.x's mx.metric, which MXNet 2.0 moved to mx.gluon.metric
from . import visualization as viz
from . import test_utils
from . import model, callback
from . import _legacy_python_host  # noqa: F401  (mx.operator's NDArray and NumpyOp/NDArrayOp symbols)
from . import dlpack, executor, libinfo, ndarray_doc, symbol_doc
from . import numpy_dispatch_protocol, numpy_op_signature, numpy_op_fallback
from . import container, tvmop
from . import recordio, io, library, onnx
from . import image
from . import image as img
from .symbol import numpy as np_symbol

context = device  # the 1.x module name: mx.context.Context, mx.context.current_context()

__version__ = "0.1.0"

# 1.x names MXNet 2.0 removed: accessing them raises RemovedAPIError (an AttributeError) naming the
# replacement, so ported code fails with a pointer instead of a bare "no attribute".
_GLUON_TRAINING = ("build a gluon.HybridBlock and train it with gluon.Trainer "
                   "(gluon.SymbolBlock.imports loads a saved symbol and params)")
_REMOVED = {
    "mod": f"mx.mod (Module API) was removed in MXNet 2.0: {_GLUON_TRAINING}",
    "module": f"mx.module (Module API) was removed in MXNet 2.0: {_GLUON_TRAINING}",
    "rnn": "mx.rnn was removed in MXNet 2.0: use mx.gluon.rnn (LSTM, GRU, RNN and their cells)",
    "monitor": "mx.monitor was removed in MXNet 2.0: use HybridBlock.register_op_hook",
    "mon": "mx.mon was removed in MXNet 2.0: use HybridBlock.register_op_hook",
    "executor_manager": f"mx.executor_manager was removed in MXNet 2.0: {_GLUON_TRAINING}",
    "torch": "mx.torch (Torch plugin) was removed in MXNet 2.0 and has no replacement",
    "th": "mx.th (Torch plugin) was removed in MXNet 2.0 and has no replacement",
}


def __getattr__(name: str):
    if name in _REMOVED:
        raise RemovedAPIError(_REMOVED[name])
    raise AttributeError(f"module 'mxjax' has no attribute {name!r}")


__all__ = [
    "MXNetError", "Context", "Device", "NDArray", "autograd", "base", "init", "initializer", "lr_scheduler", "optimizer", "context", "cpu", "cpu_pinned",
    "current_context", "current_device", "device", "engine", "gluon", "gpu", "nd", "np", "npx", "num_gpus",
    "name", "operator", "profiler", "random", "sym", "symbol", "test_utils", "viz", "waitall",
    "AttrScope", "attribute", "callback", "error", "log", "model", "registry", "runtime", "util",
    "is_np_array", "is_np_default_dtype", "is_np_shape", "np_array", "np_default_dtype", "np_shape",
    "set_np_shape", "use_np", "use_np_array", "use_np_default_dtype", "use_np_shape",
    "dlpack", "executor", "libinfo", "ndarray_doc", "symbol_doc", "numpy_dispatch_protocol", "numpy_op_signature",
    "numpy_op_fallback", "np_symbol", "contrib", "container", "tvmop", "recordio", "io", "library", "onnx", "image", "img",
]
