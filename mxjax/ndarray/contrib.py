"""``mx.nd.contrib``: MXNet 1.x's contrib operators (more arrive with control flow)."""
from __future__ import annotations

from .._frontend import make_function
from .._ndarray import NDArray
from ..numpy_extension.control_flow import cond, foreach, while_loop  # 1.x's contrib names for them

__all__ = ["BilinearResize2D", "arange_like", "CTCLoss", "ctc_loss", "boolean_mask", "index_array", "foreach",
           "while_loop", "cond"]

BilinearResize2D = make_function("BilinearResize2D", name="BilinearResize2D", out_cls=NDArray, legacy=True,
                                 module="mxjax.ndarray.contrib")
arange_like = make_function("arange_like", name="arange_like", out_cls=NDArray, legacy=True,
                            module="mxjax.ndarray.contrib")
CTCLoss = make_function("CTCLoss", name="CTCLoss", out_cls=NDArray, legacy=True, module="mxjax.ndarray.contrib")
ctc_loss = make_function("CTCLoss", name="ctc_loss", out_cls=NDArray, legacy=True, module="mxjax.ndarray.contrib")
# dynamic shape: the rows of data where index is non-zero (any index dtype, as MXNet)
boolean_mask = make_function("_contrib_boolean_mask", name="boolean_mask", out_cls=NDArray, legacy=True,
                             module="mxjax.ndarray.contrib")
index_array = make_function("_contrib_index_array", name="index_array", out_cls=NDArray, legacy=True,
                            module="mxjax.ndarray.contrib")
