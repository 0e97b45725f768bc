"""Op groups shared by the float16 and bfloat16 tables.

The split follows one question per op: does its accuracy survive an 8-bit (bfloat16) or
11-bit (float16) mantissa?  Products and convolutions accumulate in float32 inside XLA and gain
the most from low precision; exponentials, logarithms, reductions, normalizations and losses lose
digits or overflow, so they take float32 inputs; shape and elementwise ops that neither lose nor
gain run in whatever dtype reaches them.  Ops with several inputs that must share one dtype
receive them cast to the widest float dtype among them.
"""

MATMUL_LIKE = [
    "Convolution",
    "FullyConnected",
    "Deconvolution",
    "batch_dot",
    "matmul",
    "einsum",
    "_linalg_gemm",
    "_linalg_gemm2",
]

SENSITIVE = [
    # exponentials, logarithms and powers: overflow or lose relative precision
    "exp", "expm1", "exp2", "log", "log10", "log2", "log1p", "logaddexp", "power", "float_power",
    "reciprocal", "rsqrt", "rcbrt", "square",
    # special functions and inverse trigonometry near their poles
    "gamma", "gammaln", "digamma", "erfinv", "arccos", "arcsin", "arctanh", "cosh", "sinh", "tan",
    # reductions: long sums in a short mantissa drift
    "sum", "nansum", "prod", "nanprod", "mean", "nanmean", "var", "std", "moments", "cumsum", "cumprod",
    "multi_sum_sq", "khatri_rao",
    # normalizations and softmax family
    "softmax", "log_softmax", "softmin", "masked_softmax", "masked_log_softmax", "SoftmaxActivation",
    "LayerNorm", "GroupNorm", "InstanceNorm", "L2Normalization", "LRN",
    # losses and output layers
    "SoftmaxOutput", "LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput",
    "SVMOutput", "softmax_cross_entropy", "smooth_l1", "MakeLoss", "CTCLoss",
    # orderings whose ties change under rounding
    "topk", "argsort", "sort",
]

NEUTRAL = [
    "Activation", "LeakyReLU", "relu", "sigmoid", "tanh", "softsign", "hard_sigmoid", "mish", "log_sigmoid",
    "Pooling", "BatchNorm", "Dropout", "Flatten", "Reshape", "reshape", "reshape_like", "transpose",
    "SwapAxis", "swapaxes", "expand_dims", "squeeze", "flip", "reverse", "tile", "repeat", "Pad", "pad",
    "slice", "slice_axis", "slice_like", "SliceChannel", "split", "take", "pick", "one_hot", "Embedding",
    "clip", "abs", "negative", "sqrt", "cbrt", "sign", "ceil", "floor", "round", "rint",
    "max", "min", "argmax", "argmin", "identity", "BlockGrad", "zeros_like", "ones_like",
    "broadcast_to", "broadcast_like", "broadcast_axis", "UpSampling", "depth_to_space", "space_to_depth",
    "amp_cast", "amp_multicast", "astype", "sin", "cos", "arctan", "erf", "SequenceMask", "SequenceLast",
    "SequenceReverse", "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar",
    "_rdiv_scalar", "_maximum_scalar", "_minimum_scalar", "_power_scalar", "_rpower_scalar",
]

SAME_DTYPE_INPUTS = [
    "add", "subtract", "multiply", "true_divide", "mod", "maximum", "minimum", "hypot", "arctan2",
    "fmax", "fmin", "fmod", "copysign", "add_n", "Concat", "concatenate", "stack", "hstack", "vstack",
    "dstack", "column_stack", "where", "dot", "tensordot", "kron", "cross", "equal", "not_equal",
    "greater", "greater_equal", "less", "less_equal", "logical_and", "logical_or", "logical_xor",
    "broadcast_equal", "broadcast_not_equal", "broadcast_greater", "broadcast_greater_equal",
    "broadcast_lesser", "broadcast_lesser_equal", "broadcast_logical_and", "broadcast_logical_or",
    "broadcast_logical_xor", "Correlation",
]

# ops that take float32 only for some values of one parameter: (op, parameter, values)
CONDITIONAL = [
    ("Activation", "act_type", ["softrelu"]),
    ("LeakyReLU", "act_type", ["elu", "selu", "gelu"]),
]
