"""Embedding, one_hot, pick, topk, sequence ops, batch_dot, gather_nd/scatter_nd, arange_like,
BlockGrad, smooth_l1 and CTCLoss against NumPy references."""
import functools
import itertools
import math

import jax
import numpy as onp
import pytest
from oracle import check, run_op

import mxjax as mx
import mxjax.numpy_extension as npx
from mxjax._ndarray import invoke
from mxjax.operator import get_op

_run = run_op
_check = functools.partial(check, rtol=1e-05, atol=1e-06)
RNG = onp.random.default_rng(3)


def _x(*shape):
    return RNG.standard_normal(shape).astype("float32")


def _a(x):
    return mx.np.array(x)


def test_embedding():
    weight = _x(4, 3)
    data = onp.array([[1.0, 3.7], [0.0, 9.0], [-2.0, 2.0]], dtype="float32")  # truncation, then clipping
    want = weight[[[1, 3], [0, 3], [0, 2]]]
    _check(npx.embedding(_a(data), _a(weight), input_dim=4, output_dim=3), want)
    _check(_run("Embedding", [onp.array([2, 0]), weight.astype("float64")], input_dim=4, output_dim=3),
           weight[[2, 0]], dtype="float64")
    with pytest.raises(ValueError, match=r"Embedding: weight has shape \(4, 3\) but \(5, 3\) is expected"):
        npx.embedding(_a(data), _a(weight), input_dim=5, output_dim=3)
    attrs = get_op("Embedding").decode_params({"input_dim": "4", "output_dim": "3", "dtype": "float32",
                                               "sparse_grad": "False"})
    assert attrs == {"input_dim": 4, "output_dim": 3, "dtype": "float32", "sparse_grad": False}


def test_one_hot():
    idx = onp.array([[1, 0], [2, 5]])
    hot = onp.zeros((2, 2, 3))
    for (i, j), k in onp.ndenumerate(idx):
        if k < 3:
            hot[i, j, k] = 1
    _check(npx.one_hot(_a(idx), 3), hot)
    _check(npx.one_hot(_a(idx), 3, on_value=8, off_value=1, dtype="int32"), onp.where(hot == 1, 8, 1),
           dtype="int32")
    _check(npx.one_hot(_a(onp.array([-1.0, 1.5])), 2), [[0, 0], [0, 1]])
    with pytest.raises(ValueError, match="one_hot: depth must be a non-negative integer, got None"):
        npx.one_hot(_a(idx))


def test_pick():
    x = onp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype="float32")
    _check(npx.pick(_a(x), _a(onp.array([0, 1])), 0), [1.0, 4.0])
    _check(npx.pick(_a(x), _a(onp.array([0, 1, 0])), 1), [1.0, 4.0, 5.0])
    _check(npx.pick(_a(x), _a(onp.array([2, -1, -2])), 1, mode="wrap"), [1.0, 4.0, 5.0])
    _check(npx.pick(_a(x), _a(onp.array([5, -1, 1])), 1), [2.0, 3.0, 6.0])  # clip
    _check(npx.pick(_a(x), _a(onp.array([[1.0], [0.0], [2.0]])), 1, keepdims=True), [[2.0], [3.0], [6.0]])
    _check(_run("pick", [x, onp.array([5, 0])], axis=None), [6.0, 1.0])
    with pytest.raises(ValueError, match=r"pick: index has shape \(2,\) but \(3,\) is expected"):
        npx.pick(_a(x), _a(onp.array([0, 1])), 1)
    with pytest.raises(ValueError, match="pick: mode='raise' is not supported"):
        npx.pick(_a(x), _a(onp.array([0, 1])), 0, mode="raise")


@pytest.mark.parametrize("axis,k,is_ascend", [(-1, 2, False), (0, 1, True), (1, 0, False), (None, 3, True)])
def test_topk(axis, k, is_ascend):
    x = RNG.permutation(24).reshape(2, 3, 4).astype("float32")  # distinct values: no tie ambiguity
    flat = x.reshape(-1) if axis is None else x
    ax = 0 if axis is None else axis % 3
    order = onp.argsort(flat if is_ascend else -flat, axis=ax, kind="stable")
    count = flat.shape[ax] if k < 1 else k
    order = onp.take(order, onp.arange(count), axis=ax)
    values = onp.take_along_axis(flat, order, axis=ax)
    kwargs = dict(axis=axis, k=k, is_ascend=is_ascend)
    _check(npx.topk(_a(x), ret_typ="value", **kwargs), values)
    _check(npx.topk(_a(x), **kwargs), order.astype("float32"))  # MXNet's default: float32 indices
    got_v, got_i = npx.topk(_a(x), ret_typ="both", dtype="int32", **kwargs)
    _check(got_v, values)
    _check(got_i, order, dtype="int32")
    mask = onp.zeros_like(flat)
    onp.put_along_axis(mask, order, 1, axis=ax)
    _check(npx.topk(_a(x), ret_typ="mask", **kwargs), mask.reshape(x.shape))


def test_topk_errors():
    with pytest.raises(ValueError, match=r"topk: k=5 exceeds the 4 elements along axis 1"):
        npx.topk(_a(_x(3, 4)), k=5)
    with pytest.raises(ValueError, match="topk: ret_typ='values' is not supported"):
        npx.topk(_a(_x(3, 4)), ret_typ="values")


@pytest.mark.parametrize("axis", [0, 1])
def test_sequence_ops(axis):
    data = _x(4, 3, 2) if axis == 0 else _x(3, 4, 2)
    lengths = onp.array([2, 4, 1])
    tm = data if axis == 0 else data.swapaxes(0, 1)  # time-major view
    masked = tm.copy()
    for b, n in enumerate(lengths):
        masked[n:, b] = -1.0
    want = masked if axis == 0 else masked.swapaxes(0, 1)
    _check(npx.sequence_mask(_a(data), _a(lengths), use_sequence_length=True, value=-1.0, axis=axis), want)
    _check(npx.sequence_mask(_a(data), axis=axis), data)
    last = onp.stack([tm[n - 1, b] for b, n in enumerate(lengths)])
    _check(_run("SequenceLast", [data, lengths], use_sequence_length=True, axis=axis), last)
    _check(_run("SequenceLast", [data], axis=axis), tm[-1])
    if axis == 0:
        rev = data.copy()
        for b, n in enumerate(lengths):
            rev[:n, b] = data[:n, b][::-1]
        _check(_run("SequenceReverse", [data, lengths], use_sequence_length=True), rev)
        _check(_run("SequenceReverse", [data]), data[::-1])


def test_sequence_errors():
    data = _x(4, 3)
    with pytest.raises(ValueError, match=r"SequenceMask: sequence_length has shape \(2,\) but \(3,\) is expected"):
        npx.sequence_mask(_a(data), _a(onp.array([1, 2])), use_sequence_length=True)
    with pytest.raises(ValueError, match="SequenceReverse: axis=1 is not supported"):
        _run("SequenceReverse", [data], axis=1)
    with pytest.raises(ValueError, match="SequenceLast: use_sequence_length=True needs the sequence_length"):
        _run("SequenceLast", [data], use_sequence_length=True)


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_batch_dot(ta, tb):
    a = _x(2, 4, 3) if ta else _x(2, 3, 4)
    b = _x(2, 5, 4) if tb else _x(2, 4, 5)
    want = onp.matmul(a.swapaxes(-1, -2) if ta else a, b.swapaxes(-1, -2) if tb else b)
    _check(npx.batch_dot(_a(a), _a(b), transpose_a=ta, transpose_b=tb), want, rtol=1e-5)


def test_batch_dot_errors():
    with pytest.raises(ValueError, match=r"batch_dot: cannot multiply lhs \(2, 3, 4\) by rhs \(2, 3, 5\)"):
        npx.batch_dot(_a(_x(2, 3, 4)), _a(_x(2, 3, 5)))
    with pytest.raises(ValueError, match=r"batch_dot: lhs \(3, 4\) and rhs \(2, 4, 5\) must be batches"):
        npx.batch_dot(_a(_x(3, 4)), _a(_x(2, 4, 5)))


def test_gather_and_scatter_nd():
    data = _x(3, 4, 2)
    idx = onp.array([[0, 2, 1], [3, 0, 1]])
    _check(npx.gather_nd(_a(data), _a(idx)), data[idx[0], idx[1]])
    _check(npx.gather_nd(_a(data), _a(onp.array([[2, -1]]))), data[[2, -1]])
    values = onp.array([1.0, 2.0, 3.0], dtype="float32")
    want = onp.zeros((3, 4), "float32")
    want[idx[0], idx[1]] = values
    _check(npx.scatter_nd(_a(values), _a(idx), shape=(3, 4)), want)
    with pytest.raises(ValueError, match=r"gather_nd: indices of shape \(4, 1\) must have a first axis"):
        npx.gather_nd(_a(data), _a(onp.zeros((4, 1), "int32")))
    with pytest.raises(ValueError, match=r"scatter_nd: data has shape \(2,\) but \(3,\) is expected"):
        npx.scatter_nd(_a(values[:2]), _a(idx), shape=(3, 4))


def test_arange_like():
    x = _a(_x(2, 3))
    _check(npx.arange_like(x), onp.arange(6).reshape(2, 3))
    _check(npx.arange_like(x, start=1.0, step=0.5, repeat=2), (1 + 0.5 * (onp.arange(6) // 2)).reshape(2, 3))
    _check(npx.arange_like(x, axis=-1), onp.arange(3))
    _check(npx.arange_like(_a(onp.zeros((2, 2), "int32")), start=3), [[3, 4], [5, 6]], dtype="int32")
    with pytest.raises(ValueError, match="arange_like: axis 2 is out of bounds"):
        npx.arange_like(x, axis=2)


def test_stop_gradient_and_smooth_l1():
    x = _x(5)
    _check(npx.stop_gradient(_a(x)), x)
    op = get_op("BlockGrad")
    assert get_op("stop_gradient") is op
    onp.testing.assert_array_equal(jax.grad(lambda v: (op.compute(v) * v).sum())(x), x)
    x = onp.array([-3.0, -0.5, 0.2, 0.9, 2.0], dtype="float32")
    for sigma in (1.0, 2.0):
        s2 = sigma ** 2
        want = onp.where(onp.abs(x) < 1 / s2, 0.5 * s2 * x ** 2, onp.abs(x) - 0.5 / s2)
        _check(npx.smooth_l1(_a(x), scalar=sigma), want)


def _ctc_ref(scores, label, blank):
    """-log of the total probability of every alignment that collapses to ``label`` (brute force)."""
    logp = scores - onp.log(onp.exp(scores).sum(-1, keepdims=True))
    total = 0.0
    for path in itertools.product(range(scores.shape[1]), repeat=scores.shape[0]):
        collapsed = [k for i, k in enumerate(path) if i == 0 or k != path[i - 1]]
        if [k for k in collapsed if k != blank] == list(label):
            total += math.exp(sum(logp[t, k] for t, k in enumerate(path)))
    return -math.log(total)


@pytest.mark.parametrize("blank_label", ["first", "last"])
def test_ctc_loss(blank_label):
    scores = _x(4, 2, 3).astype(onp.float64)
    if blank_label == "first":
        labels, seqs, blank = onp.array([[1, 2], [2, 0]]), [[1, 2], [2]], 0
    else:
        labels, seqs, blank = onp.array([[0, 1], [1, -1]]), [[0, 1], [1]], 2
    want = [_ctc_ref(scores[:, b], seqs[b], blank) for b in range(2)]
    got = npx.ctc_loss(_a(scores.astype("float32")), _a(labels), blank_label=blank_label)
    _check(got, want, rtol=1e-4)
    if blank_label == "last":
        return  # each variant compiles a CTC scan (~1 s): lengths are checked once
    # explicit lengths (symbol JSON passes only the inputs in use: data, label, label_lengths)
    lengths = onp.array([3, 4])
    want = [_ctc_ref(scores[:lengths[b], b], seqs[b], blank) for b in range(2)]
    got = _run("CTCLoss", [scores.astype("float32"), labels, lengths], use_data_lengths=True,
               blank_label=blank_label)
    _check(got, want, rtol=1e-4)
    label_len = onp.array([1, 1])
    want = [_ctc_ref(scores[:, b], seqs[b][:1], blank) for b in range(2)]
    got = _run("CTCLoss", [scores.astype("float32"), labels, label_len], use_label_lengths=True,
               blank_label=blank_label)
    _check(got, want, rtol=1e-4)


def test_ctc_loss_errors():
    with pytest.raises(ValueError, match=r"CTCLoss: data \(4, 2\) must be \(time, batch, alphabet\)"):
        npx.ctc_loss(_a(_x(4, 2)), _a(onp.ones((2, 2))))
    with pytest.raises(ValueError, match=r"CTCLoss: use_data_lengths=True needs data_lengths of shape \(2,\)"):
        npx.ctc_loss(_a(_x(4, 2, 3)), _a(onp.ones((2, 2))), use_data_lengths=True)
    with pytest.raises(ValueError, match="CTCLoss: labels of length 5 cannot exceed the 4 time steps"):
        npx.ctc_loss(_a(_x(4, 2, 3)), _a(onp.ones((2, 5))))
