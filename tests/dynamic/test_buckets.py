"""Rows selected by a mask, padded to power-of-two buckets: the bucket sizes, the ops that skip padded rows,
and hybridized blocks whose segments run on padded rows giving NumPy's values and gradients."""
import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd
from mxjax.dynamic.buckets import MIN_BUCKET, bucket_size
from mxjax.gluon import HybridBlock, nn

RNG = onp.random.default_rng(5)


def test_bucket_sizes_are_powers_of_two_capped_by_the_data():
    for length in (2, 3, 24, 256, 300):
        sizes = [bucket_size(n, length) for n in range(length + 1)]
        for n, size in enumerate(sizes):
            assert n <= size <= max(length, MIN_BUCKET)
            assert size == length or size & (size - 1) == 0
            assert size >= MIN_BUCKET
        assert sizes == sorted(sizes)
    assert len({bucket_size(n, 256) for n in range(257)}) == 8  # 2, 4, ..., 256


@pytest.mark.parametrize("fill, value", [("zero", 0), ("one", 1), ("lowest", -onp.inf), ("highest", onp.inf)])
@pytest.mark.parametrize("axis", [0, 1])
def test_mask_rows_replaces_the_entries_past_the_valid_count(fill, value, axis):
    x = RNG.normal(size=(5, 6)).astype(onp.float32)
    op = mx.operator.get_op("_mask_rows")
    got = onp.asarray(op.compute(x, onp.int32(3), axis=axis, fill=fill))
    want = x.copy()
    index = [slice(None)] * 2
    index[axis] = slice(3, None)
    want[tuple(index)] = value
    onp.testing.assert_array_equal(got, want)
    ints = op.compute(onp.arange(6, dtype=onp.int32), onp.int32(2), axis=0, fill=fill)
    expect = {"zero": 0, "one": 1, "lowest": onp.iinfo(onp.int32).min, "highest": onp.iinfo(onp.int32).max}
    onp.testing.assert_array_equal(onp.asarray(ints), [0, 1] + [expect[fill]] * 4)
    with pytest.raises(mx.MXNetError, match="fill"):
        op.compute(x, onp.int32(3), axis=0, fill="nan")


def test_rescale_mean_rows_turns_a_padded_mean_into_the_valid_mean():
    x = RNG.normal(size=(8, 3)).astype(onp.float32)
    x[5:] = 0  # padding already masked to zero
    padded_mean = x.mean(axis=0)
    got = mx.operator.get_op("_rescale_mean_rows").compute(padded_mean, onp.int32(5), x, axis=0)
    onp.testing.assert_allclose(onp.asarray(got), x[:5].mean(axis=0), rtol=1e-6)


class Reduce(HybridBlock):
    """Dense -> rows with a positive first column -> tanh(Dense) -> a reduction of the rows."""

    def __init__(self, how):
        super().__init__()
        self.how = how
        self.d1 = nn.Dense(6, in_units=4)
        self.d2 = nn.Dense(3, in_units=6)

    def forward(self, x):
        h = self.d1(x)
        y = mx.np.tanh(self.d2(mx.npx.boolean_mask(h, h[:, 0] > 0)))
        return self.how(y)


HOW = {
    "sum": lambda y: y.sum(),
    "mean_rows": lambda y: y.mean(axis=0),
    "max_rows_keepdims": lambda y: y.max(axis=0, keepdims=True),
    "min_all": lambda y: y.min(),
    "prod_rows": lambda y: (y * 0.1 + 1).prod(axis=0),
    "sum_columns": lambda y: y.sum(axis=1),  # not over rows: the result keeps its rows (cut to n)
    "centred": lambda y: ((y - y.mean(axis=0)) ** 2).sum(),  # a row reduction broadcast back
    "log": lambda y: mx.np.log(y + 1.5).sum(),
}


def _numpy(how, x, w1, b1, w2, b2):
    h = x @ w1.T + b1
    y = onp.tanh(h[h[:, 0] > 0] @ w2.T + b2)
    return {"sum": y.sum(), "mean_rows": y.mean(axis=0), "max_rows_keepdims": y.max(axis=0, keepdims=True),
            "min_all": y.min(), "prod_rows": (y * 0.1 + 1).prod(axis=0), "sum_columns": y.sum(axis=1),
            "centred": ((y - y.mean(axis=0)) ** 2).sum(), "log": onp.log(y + 1.5).sum()}[how]


@pytest.mark.parametrize("how", list(HOW))
def test_bucketed_segments_match_imperative_and_numpy(how):
    net = Reduce(HOW[how])
    net.initialize()
    batches = [RNG.normal(size=(32, 4)).astype(onp.float32) for _ in range(6)]
    results, counts = {}, []
    for mode in ("imperative", "hybridized"):
        if mode == "hybridized":
            net.hybridize()
        outs, grads = [], []
        for x in batches:
            with autograd.record():
                y = net(mx.np.array(x))
                loss = (y * y).sum()
            loss.backward()
            outs.append(y.asnumpy())
            counts.append(int(((x @ net.d1.weight.data().asnumpy().T + net.d1.bias.data().asnumpy())[:, 0] > 0).sum()))
            grads.append([p.grad().asnumpy() for p in net.collect_params().values()])
        results[mode] = outs, grads
    weights = [p.data().asnumpy() for p in net.collect_params().values()]
    for x, out in zip(batches, results["hybridized"][0]):
        onp.testing.assert_allclose(out, _numpy(how, x, *weights), rtol=1e-5, atol=1e-5)
    for (a, ga), (b, gb) in zip(zip(*results["imperative"]), zip(*results["hybridized"])):
        onp.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        for u, v in zip(ga, gb):
            onp.testing.assert_allclose(u, v, rtol=1e-4, atol=1e-5)
    (entry,) = net.compile_stats().values()
    # a segment ending in reductions over rows leaves the rows in place; one that returns rows buckets them
    how_run = "bucketed_calls" if how == "sum_columns" else "in_place_calls"
    assert entry[how_run][-1] == len(batches) and entry["eager_calls"] == [0] * entry["segments"]
    assert entry["compiled"][-1] == (len({bucket_size(c, 32) for c in counts}) if how == "sum_columns" else 1)


def test_finite_differences_through_padded_rows():
    """Gradients reach only the selected rows: central differences of the hybridized loss."""
    net = Reduce(HOW["log"])
    net.initialize()
    net.cast("float64")
    net.hybridize()
    x = RNG.normal(size=(16, 4))
    xs = mx.np.array(x, dtype=onp.float64)
    xs.attach_grad()
    with autograd.record():
        loss = net(xs)
    loss.backward()
    grad = xs.grad.asnumpy()
    eps = 1e-6
    numeric = onp.zeros_like(x)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            for sign in (1, -1):
                shifted = x.copy()
                shifted[i, j] += sign * eps
                numeric[i, j] += sign * float(net(mx.np.array(shifted, dtype=onp.float64))) / (2 * eps)
    onp.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)
    h = x @ net.d1.weight.data().asnumpy().T + net.d1.bias.data().asnumpy()
    assert (grad[h[:, 0] <= 0] == 0).all()


class TwoMasks(HybridBlock):
    """Two masks with different row counts meet in one segment: it runs at the exact shapes."""

    def __init__(self):
        super().__init__()
        self.d = nn.Dense(3, in_units=4)

    def forward(self, x):
        h = self.d(x)
        first = mx.npx.boolean_mask(h, h[:, 0] > 0)
        second = mx.npx.boolean_mask(h, h[:, 1] > 0)
        return first.sum(axis=0) * second.sum(axis=0)


def test_masks_with_different_counts_fall_back_to_exact_shapes():
    net = TwoMasks()
    net.initialize()
    net.hybridize()
    for _ in range(3):
        x = RNG.normal(size=(20, 4)).astype(onp.float32)
        w, b = (p.data().asnumpy() for p in net.collect_params().values())
        h = x @ w.T + b
        want = h[h[:, 0] > 0].sum(axis=0) * h[h[:, 1] > 0].sum(axis=0)
        onp.testing.assert_allclose(net(mx.np.array(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)
