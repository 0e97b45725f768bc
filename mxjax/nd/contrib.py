"""``mx.nd.contrib``: MXNet 1.x's contrib operators (more arrive with control flow)."""
from __future__ import annotations

from .._frontend import make_function
from ..ndarray import NDArray

__all__ = ["BilinearResize2D", "arange_like", "CTCLoss", "ctc_loss"]

BilinearResize2D = make_function("BilinearResize2D", name="BilinearResize2D", out_cls=NDArray, legacy=True,
                                 module="mxjax.nd.contrib")
arange_like = make_function("arange_like", name="arange_like", out_cls=NDArray, legacy=True,
                            module="mxjax.nd.contrib")
CTCLoss = make_function("CTCLoss", name="CTCLoss", out_cls=NDArray, legacy=True, module="mxjax.nd.contrib")
ctc_loss = make_function("CTCLoss", name="ctc_loss", out_cls=NDArray, legacy=True, module="mxjax.nd.contrib")
