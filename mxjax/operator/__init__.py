"""The operator registry and every op definition (importing this package registers them all)."""
from __future__ import annotations

from .registry import OPS, DynamicShapeError, OpDef, Param, clear_caches, defop, get_op, list_ops, register_op

# Op modules, imported once here so the registry's contents never depend on import order.
from . import core, elemwise, creation, manipulation, reduction, reduction_stats, sorting  # noqa: E402,F401
from . import linalg, random, nn, legacy, numpy_extra, dynamic  # noqa: E402,F401
from . import control_flow  # noqa: E402,F401
from . import contrib_math, contrib_attention, contrib_box, contrib_nms, contrib_multibox  # noqa: E402,F401
from . import contrib_dynamic, contrib_roi, contrib_optim, contrib_sldwin  # noqa: E402,F401
from . import quantization, intgemm  # noqa: E402,F401
from . import optimizer_update, optimizer_update_multi, optimizer_update_contrib  # noqa: E402,F401
from . import numpy_poly, numpy_misc  # noqa: E402,F401
from . import legacy_random, legacy_random_pdf, legacy_tensor, legacy_vision, npx_index, npx_deformable  # noqa: E402,F401
from . import image, image_color  # noqa: E402,F401
from . import contrib_detection, contrib_hawkes, contrib_graph  # noqa: E402,F401
from . import rnn  # noqa: E402,F401

# MXNet's mx.operator: Python custom operators and registry queries (after every op is registered)
from .custom import (CustomOp, CustomOpProp, OperatorArguments, get_all_registered_operators,  # noqa: E402
                     get_all_registered_operators_grouped, get_operator_arguments, register)
from .legacy_python import NDArrayOp, NumpyOp, PythonOp  # noqa: E402
# the mx.base names MXNet's mx.operator carries (NDArray is set by mxjax._legacy_python_host: a higher layer)
from .._config import is_np_array  # noqa: E402
from .._util_ctypes import (MXCallbackList, c_array, c_array_buf, c_int_p, c_str, ctypes2numpy_shared,  # noqa: E402
                            py_str)
from ..base import check_call  # noqa: E402

__all__ = ["OPS", "DynamicShapeError", "OpDef", "Param", "clear_caches", "defop", "get_op", "list_ops", "register_op",
           "CustomOp", "CustomOpProp", "OperatorArguments", "get_all_registered_operators",
           "get_all_registered_operators_grouped", "get_operator_arguments", "register",
           "PythonOp", "NumpyOp", "NDArrayOp"]
