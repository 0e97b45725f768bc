"""``mx.nd`` functions of the legacy ops (operator/legacy*.py) and the core ops, one line each."""
from __future__ import annotations

from ._maker import nd_function

# reductions, index searches and sorts (1.x: exclude=, input-dtype results, (1,) for scalars)
sum = nd_function("_legacy_sum", name="sum")  # noqa: A001
sum_axis = nd_function("_legacy_sum", name="sum_axis")
mean = nd_function("_legacy_mean", name="mean")
prod = nd_function("_legacy_prod", name="prod")
nansum = nd_function("_legacy_nansum", name="nansum")
nanprod = nd_function("_legacy_nanprod", name="nanprod")
max = nd_function("_legacy_max", name="max")  # noqa: A001
max_axis = nd_function("_legacy_max", name="max_axis")
min = nd_function("_legacy_min", name="min")  # noqa: A001
min_axis = nd_function("_legacy_min", name="min_axis")
norm = nd_function("_legacy_norm", name="norm")
argmax = nd_function("_legacy_argmax", name="argmax")
argmin = nd_function("_legacy_argmin", name="argmin")
argmax_channel = nd_function("argmax_channel")
sort = nd_function("_legacy_sort", name="sort")
argsort = nd_function("_legacy_argsort", name="argsort")

# scalar ops and 0/1 comparisons in the input dtype
_plus_scalar = nd_function("_plus_scalar")
_minus_scalar = nd_function("_minus_scalar")
_rminus_scalar = nd_function("_rminus_scalar")
_mul_scalar = nd_function("_mul_scalar")
_div_scalar = nd_function("_div_scalar")
_rdiv_scalar = nd_function("_rdiv_scalar")
_mod_scalar = nd_function("_mod_scalar")
_rmod_scalar = nd_function("_rmod_scalar")
_power_scalar = nd_function("_power_scalar")
_rpower_scalar = nd_function("_rpower_scalar")
_maximum_scalar = nd_function("_maximum_scalar")
_minimum_scalar = nd_function("_minimum_scalar")
_hypot_scalar = nd_function("_hypot_scalar")
_equal_scalar = nd_function("_equal_scalar")
_not_equal_scalar = nd_function("_not_equal_scalar")
_greater_scalar = nd_function("_greater_scalar")
_greater_equal_scalar = nd_function("_greater_equal_scalar")
_lesser_scalar = nd_function("_lesser_scalar")
_lesser_equal_scalar = nd_function("_lesser_equal_scalar")
_logical_and_scalar = nd_function("_logical_and_scalar")
_logical_or_scalar = nd_function("_logical_or_scalar")
_logical_xor_scalar = nd_function("_logical_xor_scalar")
broadcast_equal = nd_function("broadcast_equal")
broadcast_not_equal = nd_function("broadcast_not_equal")
broadcast_greater = nd_function("broadcast_greater")
broadcast_greater_equal = nd_function("broadcast_greater_equal")
broadcast_lesser = nd_function("broadcast_lesser")
broadcast_lesser_equal = nd_function("broadcast_lesser_equal")
broadcast_logical_and = nd_function("broadcast_logical_and")
broadcast_logical_or = nd_function("broadcast_logical_or")
broadcast_logical_xor = nd_function("broadcast_logical_xor")

# slicing, joining, reshaping, broadcasting
slice = nd_function("slice")  # noqa: A001
crop = nd_function("slice", name="crop")
slice_axis = nd_function("slice_axis")
slice_like = nd_function("slice_like")
SliceChannel = nd_function("SliceChannel")
Concat = nd_function("Concat")
concat = nd_function("Concat", name="concat")
stack = nd_function("_legacy_stack", name="stack")
Flatten = nd_function("Flatten")
flatten = nd_function("Flatten", name="flatten")
Reshape = nd_function("Reshape")
reshape = nd_function("Reshape", name="reshape")
reshape_like = nd_function("reshape_like")
transpose = nd_function("transpose")
SwapAxis = nd_function("SwapAxis")
swapaxes = nd_function("SwapAxis", name="swapaxes")
reverse = nd_function("reverse")
flip = nd_function("reverse", name="flip")
depth_to_space = nd_function("depth_to_space")
space_to_depth = nd_function("space_to_depth")
Pad = nd_function("Pad")
pad = nd_function("Pad", name="pad")
where = nd_function("_legacy_where", name="where")
diag = nd_function("_legacy_diag", name="diag")
broadcast_to = nd_function("_legacy_broadcast_to", name="broadcast_to")
broadcast_axis = nd_function("broadcast_axis")
broadcast_axes = nd_function("broadcast_axis", name="broadcast_axes")
broadcast_like = nd_function("broadcast_like")
shape_array = nd_function("shape_array")
size_array = nd_function("size_array")
clip = nd_function("clip")
Cast = nd_function("astype", name="Cast")
cast = nd_function("astype", name="cast")
amp_cast = nd_function("amp_cast")
amp_multicast = nd_function("amp_multicast")
identity = nd_function("copy", name="identity")
_copy = nd_function("copy", name="_copy")

# arithmetic and math NumPy lacks
add_n = nd_function("add_n")
ElementWiseSum = nd_function("add_n", name="ElementWiseSum")
dot = nd_function("_legacy_dot", name="dot")
rsqrt = nd_function("rsqrt")
rcbrt = nd_function("rcbrt")
round = nd_function("_legacy_round", name="round")  # noqa: A001
logical_not = nd_function("_legacy_logical_not", name="logical_not")
hard_sigmoid = nd_function("hard_sigmoid")

# creation ops under their 1.x op names (mx.nd.zeros & co. are Python functions in _functions)
_zeros = nd_function("_zeros")
_ones = nd_function("_ones")
_full = nd_function("_full")
_arange = nd_function("_arange")
_eye = nd_function("_eye")

# output / loss layers
SoftmaxOutput = nd_function("SoftmaxOutput")
Softmax = nd_function("SoftmaxOutput", name="Softmax")
softmax_cross_entropy = nd_function("softmax_cross_entropy")
LinearRegressionOutput = nd_function("LinearRegressionOutput")
LogisticRegressionOutput = nd_function("LogisticRegressionOutput")
MAERegressionOutput = nd_function("MAERegressionOutput")
MakeLoss = nd_function("MakeLoss")
make_loss = nd_function("MakeLoss", name="make_loss")

# linear algebra (also in mx.nd.linalg without the prefix)
linalg_gemm = nd_function("_linalg_gemm", name="linalg_gemm")
linalg_gemm2 = nd_function("_linalg_gemm2", name="linalg_gemm2")
linalg_potrf = nd_function("_linalg_potrf", name="linalg_potrf")
linalg_potri = nd_function("_linalg_potri", name="linalg_potri")
linalg_trsm = nd_function("_linalg_trsm", name="linalg_trsm")
linalg_trmm = nd_function("_linalg_trmm", name="linalg_trmm")
linalg_syrk = nd_function("_linalg_syrk", name="linalg_syrk")
linalg_sumlogdiag = nd_function("_linalg_sumlogdiag", name="linalg_sumlogdiag")
linalg_inverse = nd_function("_linalg_inverse", name="linalg_inverse")
linalg_det = nd_function("_linalg_det", name="linalg_det")
linalg_slogdet = nd_function("_linalg_slogdet", name="linalg_slogdet")
linalg_extractdiag = nd_function("_linalg_extractdiag", name="linalg_extractdiag")
linalg_makediag = nd_function("_linalg_makediag", name="linalg_makediag")

__all__ = [
    "sum", "sum_axis", "mean", "prod", "nansum", "nanprod", "max", "max_axis", "min", "min_axis", "norm",
    "argmax", "argmin", "argmax_channel", "sort", "argsort", "_plus_scalar", "_minus_scalar",
    "_rminus_scalar", "_mul_scalar", "_div_scalar", "_rdiv_scalar", "_mod_scalar", "_rmod_scalar",
    "_power_scalar", "_rpower_scalar", "_maximum_scalar", "_minimum_scalar", "_hypot_scalar",
    "_equal_scalar", "_not_equal_scalar", "_greater_scalar", "_greater_equal_scalar", "_lesser_scalar",
    "_lesser_equal_scalar", "_logical_and_scalar", "_logical_or_scalar", "_logical_xor_scalar",
    "broadcast_equal", "broadcast_not_equal", "broadcast_greater", "broadcast_greater_equal",
    "broadcast_lesser", "broadcast_lesser_equal", "broadcast_logical_and", "broadcast_logical_or",
    "broadcast_logical_xor", "slice", "crop", "slice_axis", "slice_like", "SliceChannel", "Concat",
    "concat", "stack", "Flatten", "flatten", "Reshape", "reshape", "reshape_like", "transpose", "SwapAxis",
    "swapaxes", "reverse", "flip", "depth_to_space", "space_to_depth", "Pad", "pad", "where", "diag",
    "broadcast_to", "broadcast_axis", "broadcast_axes", "broadcast_like", "shape_array", "size_array",
    "clip", "Cast", "cast", "amp_cast", "amp_multicast", "identity", "_copy", "add_n", "ElementWiseSum",
    "dot", "rsqrt", "rcbrt", "round", "logical_not", "hard_sigmoid", "_zeros", "_ones", "_full", "_arange",
    "_eye", "SoftmaxOutput", "Softmax", "softmax_cross_entropy", "LinearRegressionOutput",
    "LogisticRegressionOutput", "MAERegressionOutput", "MakeLoss", "make_loss", "linalg_gemm",
    "linalg_gemm2", "linalg_potrf", "linalg_potri", "linalg_trsm", "linalg_trmm", "linalg_syrk",
    "linalg_sumlogdiag", "linalg_inverse", "linalg_det", "linalg_slogdet", "linalg_extractdiag",
    "linalg_makediag",
]
