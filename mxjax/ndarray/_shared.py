"""``mx.nd`` functions of ops shared with ``mx.np``/``mx.npx`` (same semantics in 1.x), one line each.

``nd_function`` lets the 1.x keyword names reach the NumPy ops' inputs
(``data=`` for one input, ``lhs=``/``rhs=`` for two).
"""
from __future__ import annotations

from ._maker import nd_function

# unary math (the float functions are the legacy ops: the result keeps the input dtype)
abs = nd_function("absolute", name="abs")  # noqa: A001
negative = nd_function("negative")
sign = nd_function("sign")
square = nd_function("square")
sqrt = nd_function("_legacy_sqrt", name="sqrt")
cbrt = nd_function("_legacy_cbrt", name="cbrt")
reciprocal = nd_function("_legacy_reciprocal", name="reciprocal")
exp = nd_function("_legacy_exp", name="exp")
expm1 = nd_function("_legacy_expm1", name="expm1")
log = nd_function("_legacy_log", name="log")
log10 = nd_function("_legacy_log10", name="log10")
log2 = nd_function("_legacy_log2", name="log2")
log1p = nd_function("_legacy_log1p", name="log1p")
sin = nd_function("_legacy_sin", name="sin")
cos = nd_function("_legacy_cos", name="cos")
tan = nd_function("_legacy_tan", name="tan")
arcsin = nd_function("_legacy_arcsin", name="arcsin")
arccos = nd_function("_legacy_arccos", name="arccos")
arctan = nd_function("_legacy_arctan", name="arctan")
sinh = nd_function("_legacy_sinh", name="sinh")
cosh = nd_function("_legacy_cosh", name="cosh")
tanh = nd_function("_legacy_tanh", name="tanh")
arcsinh = nd_function("_legacy_arcsinh", name="arcsinh")
arccosh = nd_function("_legacy_arccosh", name="arccosh")
arctanh = nd_function("_legacy_arctanh", name="arctanh")
degrees = nd_function("_legacy_degrees", name="degrees")
radians = nd_function("_legacy_radians", name="radians")
floor = nd_function("floor")
ceil = nd_function("ceil")
trunc = nd_function("trunc")
fix = nd_function("fix")
rint = nd_function("_legacy_rint", name="rint")

# broadcasting arithmetic (lhs, rhs): the legacy ops (one dtype for both arrays, kept by the result)
broadcast_add = nd_function("_legacy_broadcast_add", name="broadcast_add")
broadcast_plus = nd_function("_legacy_broadcast_add", name="broadcast_plus")
broadcast_sub = nd_function("_legacy_broadcast_sub", name="broadcast_sub")
broadcast_minus = nd_function("_legacy_broadcast_sub", name="broadcast_minus")
broadcast_mul = nd_function("_legacy_broadcast_mul", name="broadcast_mul")
broadcast_div = nd_function("_legacy_broadcast_div", name="broadcast_div")
broadcast_mod = nd_function("_legacy_broadcast_mod", name="broadcast_mod")
broadcast_power = nd_function("_legacy_broadcast_power", name="broadcast_power")
broadcast_maximum = nd_function("_legacy_broadcast_maximum", name="broadcast_maximum")
broadcast_minimum = nd_function("_legacy_broadcast_minimum", name="broadcast_minimum")
broadcast_hypot = nd_function("_legacy_broadcast_hypot", name="broadcast_hypot")
elemwise_add = nd_function("_legacy_broadcast_add", name="elemwise_add")
elemwise_sub = nd_function("_legacy_broadcast_sub", name="elemwise_sub")
elemwise_mul = nd_function("_legacy_broadcast_mul", name="elemwise_mul")
elemwise_div = nd_function("_legacy_broadcast_div", name="elemwise_div")

# shapes
expand_dims = nd_function("expand_dims")
squeeze = nd_function("squeeze")
tile = nd_function("tile")
repeat = nd_function("repeat")
zeros_like = nd_function("zeros_like", positional=("a",))
ones_like = nd_function("ones_like", positional=("a",))

# special functions and activations
erf = nd_function("erf")
erfinv = nd_function("erfinv")
gamma = nd_function("gamma")
gammaln = nd_function("gammaln")
digamma = nd_function("digamma")
relu = nd_function("relu")
sigmoid = nd_function("sigmoid")
softsign = nd_function("softsign")
log_sigmoid = nd_function("log_sigmoid")
mish = nd_function("mish")
softmax = nd_function("softmax")
log_softmax = nd_function("log_softmax")
softmin = nd_function("softmin")
SoftmaxActivation = nd_function("SoftmaxActivation")
Activation = nd_function("Activation")

# neural-network layers
FullyConnected = nd_function("FullyConnected")
Convolution = nd_function("Convolution")
Deconvolution = nd_function("Deconvolution")
Pooling = nd_function("Pooling")
UpSampling = nd_function("UpSampling")
LayerNorm = nd_function("LayerNorm")
GroupNorm = nd_function("GroupNorm")
InstanceNorm = nd_function("InstanceNorm")
L2Normalization = nd_function("L2Normalization")
LRN = nd_function("LRN")
Embedding = nd_function("Embedding")

# indexing, sequences and losses
one_hot = nd_function("one_hot")
pick = nd_function("pick")
choose_element_0index = nd_function("pick", name="choose_element_0index")
topk = nd_function("topk")
batch_dot = nd_function("batch_dot")
gather_nd = nd_function("gather_nd")
scatter_nd = nd_function("scatter_nd")
SequenceMask = nd_function("SequenceMask")
SequenceLast = nd_function("SequenceLast")
SequenceReverse = nd_function("SequenceReverse")
BlockGrad = nd_function("BlockGrad")
stop_gradient = nd_function("BlockGrad", name="stop_gradient")
smooth_l1 = nd_function("smooth_l1")
CTCLoss = nd_function("CTCLoss")
ctc_loss = nd_function("CTCLoss", name="ctc_loss")

__all__ = [
    "abs", "negative", "sign", "square", "sqrt", "cbrt", "reciprocal", "exp", "expm1", "log", "log10",
    "log2", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
    "arccosh", "arctanh", "degrees", "radians", "floor", "ceil", "trunc", "fix", "rint", "broadcast_add",
    "broadcast_plus", "broadcast_sub", "broadcast_minus", "broadcast_mul", "broadcast_div", "broadcast_mod",
    "broadcast_power", "broadcast_maximum", "broadcast_minimum", "broadcast_hypot", "elemwise_add",
    "elemwise_sub", "elemwise_mul", "elemwise_div", "expand_dims", "squeeze", "tile", "repeat",
    "zeros_like", "ones_like", "erf", "erfinv", "gamma", "gammaln", "digamma", "relu", "sigmoid",
    "softsign", "log_sigmoid", "mish", "softmax", "log_softmax", "softmin", "SoftmaxActivation",
    "Activation", "FullyConnected", "Convolution", "Deconvolution", "Pooling", "UpSampling", "LayerNorm",
    "GroupNorm", "InstanceNorm", "L2Normalization", "LRN", "Embedding", "one_hot", "pick",
    "choose_element_0index", "topk", "batch_dot", "gather_nd", "scatter_nd", "SequenceMask", "SequenceLast",
    "SequenceReverse", "BlockGrad", "stop_gradient", "smooth_l1", "CTCLoss", "ctc_loss",
]
