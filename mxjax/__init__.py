"""mxjax: Apache MXNet 2.0's programming model on JAX (``import mxjax as mx``)."""
from __future__ import annotations

from . import _config  # noqa: F401  (turns on JAX's 64-bit mode before any array exists)
from . import _deferred_compute, autograd, base, device, engine, operator
from .base import MXNetError
from .device import Context, Device, cpu, cpu_pinned, current_context, current_device, gpu, num_gpus
from ._ndarray import NDArray, waitall
from . import numpy as np
from . import ndarray
from . import ndarray as nd
from . import numpy_extension as npx
from . import initializer, lr_scheduler, name, optimizer, random
from . import initializer as init
from . import profiler
from . import symbol
from . import symbol as sym
from . import gluon
from . import visualization as viz
from . import test_utils

context = device  # the 1.x module name: mx.context.Context, mx.context.current_context()

__version__ = "0.1.0"

__all__ = [
    "MXNetError", "Context", "Device", "NDArray", "autograd", "base", "init", "initializer", "lr_scheduler", "optimizer", "context", "cpu", "cpu_pinned",
    "current_context", "current_device", "device", "engine", "gluon", "gpu", "nd", "np", "npx", "num_gpus",
    "name", "operator", "profiler", "random", "sym", "symbol", "test_utils", "viz", "waitall",
]
