"""``mx.npx`` operators: the neural-network ops with MXNet 2's ``npx`` signatures.

One line per public name over the registered ops (named by MXNet's legacy/JSON
names).  Three functions need Python around the op: ``dropout``, ``batch_norm``
and ``leaky_relu`` read the train-mode flag (``autograd.is_training()``), and
``batch_norm`` writes the updated moving statistics back into ``running_mean`` /
``running_var`` in training, as MXNet's op mutates those aux arrays.
"""
from __future__ import annotations

from typing import Any, Callable

from .._config import is_training
from .._deferred_compute import is_deferred_compute
from .._frontend import listed, make_function, store_out
from .._rng import next_key
from .._invoke import invoke
from ..numpy._maker import by_shape_array
from ..numpy.multiarray import ndarray
from ..operator import get_op

_MODULE = "mxjax.numpy_extension"


# npx spells some inputs differently from the legacy ops it shares (npx.fully_connected(x=...))
_KEYWORDS = {"x": "data", "a": "lhs", "b": "rhs"}


def _npx(op: str, name: str, **options: Any) -> Callable[..., Any]:
    # MXNet 2's npx layer functions swallow **kwargs (Gluon passes name='fwd'): legacy=True accepts name=
    options.setdefault("keywords", _KEYWORDS)
    return make_function(op, name=name, out_cls=ndarray, module=_MODULE, legacy=True, **options)


def _finish(result: Any, out: Any, name: str) -> Any:
    if out is not None:
        return store_out(out, result, name)
    return listed(result)


# -------------------------------------------------------------------- activations

activation = _npx("Activation", "activation", positional=("data", "act_type"))
relu = _npx("relu", "relu")
sigmoid = _npx("sigmoid", "sigmoid")
log_sigmoid = _npx("log_sigmoid", "log_sigmoid")
softsign = _npx("softsign", "softsign")
mish = _npx("mish", "mish")

_LEAKY = get_op("LeakyReLU")
_RRELU = get_op("_rrelu_train")


def leaky_relu(data=None, gamma=None, act_type="leaky", slope=0.25, lower_bound=0.125, upper_bound=0.334,
               out=None, **kwargs):
    """Leaky ReLU family (leaky, prelu, elu, selu, gelu, gelu_tanh, rrelu); rrelu draws random slopes
    from ``[lower_bound, upper_bound)`` in training and uses their mean otherwise."""
    kwargs.pop("name", None)
    if act_type == "rrelu" and is_training():
        result = invoke(_RRELU, [next_key(), data], {"lower_bound": lower_bound, "upper_bound": upper_bound},
                        ndarray)
    else:
        params = {"act_type": act_type, "slope": slope, "lower_bound": lower_bound, "upper_bound": upper_bound}
        result = invoke(_LEAKY, [data, gamma if act_type == "prelu" else None], params, ndarray)
    return _finish(result, out, "leaky_relu")


leaky_relu.op = _LEAKY  # type: ignore[attr-defined]


# -------------------------------------------------------------------- softmax family

_SOFTMAX_ORDER = ("data", "axis", "length", "temperature", "use_length", "dtype")
softmax = _npx("softmax", "softmax", positional=_SOFTMAX_ORDER)
log_softmax = _npx("log_softmax", "log_softmax", positional=_SOFTMAX_ORDER)
masked_softmax = _npx("masked_softmax", "masked_softmax",
                      positional=("data", "mask", "axis", "temperature", "normalize"))
masked_log_softmax = _npx("masked_log_softmax", "masked_log_softmax",
                          positional=("data", "mask", "axis", "temperature", "normalize"))

# -------------------------------------------------------------------- layers

fully_connected = _npx("FullyConnected", "fully_connected", defaults={"no_bias": True},
                       positional=("data", "weight", "bias", "num_hidden", "no_bias", "flatten"))
convolution = _npx("Convolution", "convolution")
deconvolution = _npx("Deconvolution", "deconvolution", defaults={"no_bias": False},
                     positional=("data", "weight", "bias", "kernel", "stride", "dilate", "pad", "adj",
                                 "target_shape", "num_filter", "num_group", "workspace", "no_bias",
                                 "cudnn_tune", "cudnn_off", "layout"))
pooling = _npx("Pooling", "pooling",
               positional=("data", "kernel", "stride", "pad", "pool_type", "pooling_convention",
                           "global_pool", "cudnn_off", "p_value", "count_include_pad", "layout"))
embedding = _npx("Embedding", "embedding")
layer_norm = _npx("LayerNorm", "layer_norm")
group_norm = _npx("GroupNorm", "group_norm")
instance_norm = _npx("InstanceNorm", "instance_norm")

_DROPOUT = get_op("Dropout")


def dropout(data, p=0.5, mode="training", axes=None, cudnn_off=False, out=None, **kwargs):
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``: in training
    (``autograd.record()``), or always with ``mode='always'``; the identity otherwise."""
    kwargs.pop("name", None)
    params = {"p": float(p), "mode": mode, "axes": tuple(axes) if axes else (),
              "cudnn_off": cudnn_off, "_train": is_training()}
    return _finish(invoke(_DROPOUT, [next_key(), data], params, ndarray), out, "dropout")


dropout.op = _DROPOUT  # type: ignore[attr-defined]


_BATCH_NORM = get_op("BatchNorm")
_MOVING_STATS = get_op("_batch_norm_moving_stats")


def batch_norm(x, gamma, beta, running_mean, running_var, eps=1e-3, momentum=0.9, fix_gamma=True,
               use_global_stats=False, output_mean_var=False, axis=1, cudnn_off=False,
               min_calib_range=None, max_calib_range=None, out=None, **kwargs):
    """Batch normalization.  In training (``autograd.record()``, no ``use_global_stats``) the batch
    statistics normalize and ``running_mean``/``running_var`` are updated in place to
    ``momentum * old + (1 - momentum) * batch``; otherwise the running statistics normalize."""
    kwargs.pop("name", None)
    training = is_training()
    params = {"eps": float(eps), "momentum": float(momentum), "fix_gamma": bool(fix_gamma),
              "use_global_stats": bool(use_global_stats), "output_mean_var": bool(output_mean_var),
              "axis": int(axis), "cudnn_off": bool(cudnn_off), "min_calib_range": min_calib_range,
              "max_calib_range": max_calib_range, "_train": training}
    result = invoke(_BATCH_NORM, [x, gamma, beta, running_mean, running_var], params, ndarray)
    # under deferred compute (hybridize's trace) the graph's aux update returns the new statistics and
    # the cached op writes them back: no in-place write of traced arrays here
    if training and not use_global_stats and not is_deferred_compute():
        new_mean, new_var = invoke(_MOVING_STATS, [x, running_mean, running_var],
                                   {"momentum": float(momentum), "axis": int(axis)}, ndarray)
        running_mean._assign(new_mean, "batch_norm")
        running_var._assign(new_var, "batch_norm")
    return _finish(result, out, "batch_norm")


batch_norm.op = _BATCH_NORM  # type: ignore[attr-defined]


# -------------------------------------------------------------------- indexing and sequences

one_hot = _npx("one_hot", "one_hot", positional=("indices", "depth", "on_value", "off_value", "dtype"),
              keywords={"data": "indices"})
pick = _npx("pick", "pick", positional=("data", "index", "axis", "mode", "keepdims"))
topk = _npx("topk", "topk")
batch_dot = _npx("batch_dot", "batch_dot",
                 positional=("lhs", "rhs", "transpose_a", "transpose_b", "forward_stype"))
broadcast_like = _npx("broadcast_like", "broadcast_like")
arange_like = _npx("arange_like", "arange_like", positional=("data", "start", "step", "repeat", "ctx", "axis"))
sequence_mask = _npx("SequenceMask", "sequence_mask")
gather_nd = _npx("gather_nd", "gather_nd")
scatter_nd = _npx("scatter_nd", "scatter_nd")
stop_gradient = _npx("BlockGrad", "stop_gradient")
reshape = by_shape_array(
    _npx("_npx_reshape", "reshape", positional=("a", "newshape", "reverse", "order"), keywords={}),
    _npx("_reshape_by_shape_array", "reshape", positional=("a", "shape", "reverse", "order"),
         keywords={"newshape": "shape"}), 1, "newshape")
boolean_mask = _npx("_contrib_boolean_mask", "boolean_mask", positional=("data", "index", "axis"))
shape_array = _npx("shape_array", "shape_array")
smooth_l1 = _npx("smooth_l1", "smooth_l1")
ctc_loss = _npx("CTCLoss", "ctc_loss")

# -------------------------------------------------------------------- special functions

erf = _npx("erf", "erf")
erfinv = _npx("erfinv", "erfinv")
gamma = _npx("gamma", "gamma")
gammaln = _npx("gammaln", "gammaln")
digamma = _npx("digamma", "digamma")

__all__ = [
    "activation", "relu", "sigmoid", "log_sigmoid", "softsign", "mish", "leaky_relu",
    "softmax", "log_softmax", "masked_softmax", "masked_log_softmax",
    "fully_connected", "convolution", "deconvolution", "pooling", "embedding", "layer_norm", "group_norm",
    "dropout", "batch_norm", "instance_norm", "one_hot", "pick", "topk", "batch_dot", "broadcast_like", "arange_like",
    "sequence_mask", "gather_nd", "scatter_nd", "stop_gradient", "reshape", "boolean_mask", "shape_array",
    "smooth_l1", "ctc_loss",
    "erf", "erfinv", "gamma", "gammaln", "digamma",
]
