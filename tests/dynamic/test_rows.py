"""The row-wise analysis of jaxprs, checked numerically: where it accepts a function, changing the padded
rows leaves the valid rows of every output unchanged; where it refuses, the change does leak (into the
first valid slices along every output axis long enough to have them)."""
import jax
import jax.numpy as jnp
import numpy as onp
import pytest

from mxjax.dynamic.rows import NotRowWise, row_axes

B, N = 8, 5  # padded rows, valid rows
RNG = onp.random.default_rng(3)
W = jnp.asarray(RNG.normal(size=(6, 4)), jnp.float32)
K = jnp.asarray(RNG.normal(size=(3, 2, 3, 3)), jnp.float32)  # OIHW
TABLE = jnp.asarray(RNG.normal(size=(10, 4)), jnp.float32)


def _layer_norm(x):
    mu = x.mean(axis=-1, keepdims=True)
    return (x - mu) / jnp.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + 1e-5)


def _conv(x):  # x (B, 6) -> (B, 2, 3, 1) -> NCHW conv over the batch axis
    img = jnp.tile(x.reshape(B, 2, 3, 1), (1, 1, 1, 3))
    return jax.lax.conv_general_dilated(img, K, (1, 1), "SAME")


# (name, function of a (B, 6) float array with rows along axis 0)
ROW_WISE = [
    ("dense_relu", lambda x: jax.nn.relu(x @ W + 1.0)),
    ("softmax_last_axis", lambda x: jax.nn.softmax(x, axis=-1)),
    ("layer_norm", _layer_norm),
    ("reshape_keeps_rows", lambda x: x.reshape(B, 2, 3).sum(axis=2)),
    ("transpose_moves_rows", lambda x: (x.T * 2.0)),
    ("convolution_over_batch", _conv),
    ("embedding_by_row_ids", lambda x: TABLE[jnp.clip(jnp.abs(x[:, 0] * 3).astype(jnp.int32), 0, 9)]),
    ("running_sum_down_rows", lambda x: jnp.cumsum(x, axis=0)),
    ("concatenate_columns", lambda x: jnp.concatenate([x, jnp.tanh(x)], axis=1)),
    ("row_positions", lambda x: x * jnp.arange(B, dtype=x.dtype)[:, None]),
    ("per_row_matmul", lambda x: jnp.einsum("bi,bj->bij", x, x)),
    ("sort_within_rows", lambda x: jnp.sort(x, axis=1)),
    ("argmax_per_row", lambda x: jnp.argmax(x, axis=1)),
]
MIXING = [
    ("sum_over_rows", lambda x: x.sum(axis=0)),
    ("softmax_over_rows", lambda x: jax.nn.softmax(x, axis=0)),
    ("sort_over_rows", lambda x: jnp.sort(x, axis=0)),
    ("rows_meet_rows", lambda x: x @ x.T),
    ("reverse_rows", lambda x: x[::-1]),
    ("centre_by_row_mean", lambda x: x - x.mean(axis=0)),
    ("reverse_running_sum", lambda x: jnp.flip(jnp.cumsum(jnp.flip(x, 0), axis=0), 0)),
    ("gather_rows", lambda x: x[jnp.array([1, 0, 2, 3, 4, 5, 6, 7])] * 0 + x[jnp.array([7] * B)]),
    ("regroup_rows", lambda x: x.reshape(4, 12)),
]


def _analyse(fn):
    closed = jax.make_jaxpr(fn)(jax.ShapeDtypeStruct((B, 6), jnp.float32))
    return row_axes(closed.jaxpr, [0])


def _valid(out, axis):
    return onp.take(onp.asarray(out), onp.arange(N), axis=axis)


@pytest.mark.parametrize("name, fn", ROW_WISE, ids=[n for n, _ in ROW_WISE])
def test_accepted_functions_keep_padding_out_of_the_valid_rows(name, fn):
    (axis,) = _analyse(fn)
    assert axis is not None
    x = RNG.normal(size=(B, 6)).astype(onp.float32)
    other = x.copy()
    other[N:] = RNG.normal(size=(B - N, 6)) * 100
    onp.testing.assert_allclose(_valid(fn(jnp.asarray(x)), axis), _valid(fn(jnp.asarray(other)), axis),
                                rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name, fn", MIXING, ids=[n for n, _ in MIXING])
def test_refused_functions_do_mix_rows(name, fn):
    with pytest.raises(NotRowWise):
        _analyse(fn)
    x = RNG.normal(size=(B, 6)).astype(onp.float32)
    other = x.copy()
    other[N:] = RNG.normal(size=(B - N, 6)) * 100
    first, second = onp.asarray(fn(jnp.asarray(x))), onp.asarray(fn(jnp.asarray(other)))
    for axis in range(first.ndim):  # no output axis keeps its first N slices clear of the padding
        if first.shape[axis] >= N:
            assert not onp.allclose(_valid(first, axis), _valid(second, axis))


def test_row_free_inputs_and_outputs():
    closed = jax.make_jaxpr(lambda x, w: (x @ w, w * 2))(jax.ShapeDtypeStruct((B, 6), jnp.float32), W)
    assert row_axes(closed.jaxpr, [0, None]) == [0, None]
    assert row_axes(closed.jaxpr, [None, None]) == [None, None]
