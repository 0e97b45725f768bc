"""``mx.nd.contrib``'s detection ops (region proposals, PS/deformable/rotated RoI pooling), hawkesll,
BatchNormWithReLU, rand_zipfian, the exposed ``backward_*`` ops, and the re-exported
``current_device`` and ``uniform`` (``mx.nd.random.uniform``, as in MXNet 2.0's contrib module)."""
from __future__ import annotations

import math
from typing import Any, Callable

from .._frontend import make_function
from .._ndarray import NDArray
from ..device import current_device
from ..numpy_extension._legacy import batch_norm_with_relu as _batch_norm_with_relu
from ._layers import as_legacy
from .random import uniform

_MODULE = "mxjax.ndarray.contrib"


def _nd(op: str, name: str) -> Callable[..., Any]:
    return make_function(op, name=name, out_cls=NDArray, legacy=True, module=_MODULE)


PSROIPooling = _nd("_contrib_PSROIPooling", "PSROIPooling")
DeformablePSROIPooling = _nd("_contrib_DeformablePSROIPooling", "DeformablePSROIPooling")
Proposal = _nd("_contrib_Proposal", "Proposal")
MultiProposal = _nd("_contrib_MultiProposal", "MultiProposal")
RROIAlign = _nd("_contrib_RROIAlign", "RROIAlign")
hawkesll = _nd("_contrib_hawkesll", "hawkesll")
# MXNet 2.0's Python wrappers of these declare no array inputs (so there they cannot be fed); here they
# take the C++ op's inputs in its order: the heads first, then the forward op's inputs
backward_hawkesll = _nd("_contrib_backward_hawkesll", "backward_hawkesll")
backward_quadratic = _nd("_contrib_backward_quadratic", "backward_quadratic")
backward_gradientmultiplier = _nd("_contrib_backward_gradientmultiplier", "backward_gradientmultiplier")
backward_index_copy = _nd("_contrib_backward_index_copy", "backward_index_copy")


def BatchNormWithReLU(data=None, gamma=None, beta=None, moving_mean=None, moving_var=None, eps=1e-3,
                      momentum=0.9, fix_gamma=True, use_global_stats=False, output_mean_var=False, axis=1,
                      cudnn_off=False, min_calib_range=None, max_calib_range=None, out=None, **kwargs):
    """``relu(BatchNorm(...))``: batch statistics in training (moving statistics updated in place),
    moving statistics otherwise."""
    kwargs.pop("name", None)
    result = _batch_norm_with_relu(data, gamma, beta, moving_mean, moving_var, eps=eps, momentum=momentum,
                                   fix_gamma=fix_gamma, use_global_stats=use_global_stats,
                                   output_mean_var=output_mean_var, axis=axis, cudnn_off=cudnn_off,
                                   min_calib_range=min_calib_range, max_calib_range=max_calib_range, out=out,
                                   **kwargs)
    return result if out is not None else as_legacy(result)


BatchNormWithReLU.op = _batch_norm_with_relu.op  # type: ignore[attr-defined]
BatchNormWithReLU.__module__ = _MODULE


def rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
    """Sample ``num_sampled`` classes in [0, range_max) with replacement from the approximately log-uniform
    distribution ``P(c) = (log(c + 2) - log(c + 1)) / log(range_max + 1)``.

    Returns the samples (int64), and the expected counts (float64) of ``true_classes`` and of the samples,
    ``P(c) * num_sampled``."""
    ctx = current_device() if ctx is None else ctx
    log_range = math.log(range_max + 1)
    rand = uniform(0, log_range, shape=(num_sampled,), dtype="float64", ctx=ctx)
    sampled_classes = (rand.exp() - 1).astype("int64") % range_max
    true_cls = true_classes.as_in_context(ctx).astype("float64")
    expected_count_true = ((true_cls + 2.0) / (true_cls + 1.0)).log() / log_range * num_sampled
    sampled = sampled_classes.astype("float64")
    expected_count_sampled = ((sampled + 2.0) / (sampled + 1.0)).log() / log_range * num_sampled
    return sampled_classes, expected_count_true, expected_count_sampled


rand_zipfian.__module__ = _MODULE

__all__ = ["PSROIPooling", "DeformablePSROIPooling", "Proposal", "MultiProposal", "RROIAlign", "hawkesll",
           "BatchNormWithReLU", "rand_zipfian", "backward_hawkesll", "backward_quadratic",
           "backward_gradientmultiplier", "backward_index_copy", "current_device", "uniform"]
