"""A block with a dynamic-shape op under an outer ``jax.jit``: a DynamicShapeError that names the op and says
what to do, whether the block is imperative, hybridized on its first call, or hybridized and already cached --
except where a hybridized block needs no values at all (a mask whose rows only feed sums stays in place)."""
import jax
import numpy as onp
import pytest

import mxjax as mx
from mxjax import np, npx
from mxjax.gluon import HybridBlock, nn
from mxjax.operator import DynamicShapeError

X = onp.linspace(-1, 1, 12, dtype=onp.float32).reshape(4, 3)


class Dynamic(HybridBlock):
    """Dense, then a dynamic-shape op on its output, then a static sum (or, ``rows``, the selected rows)."""

    def __init__(self, dynamic, rows=False):
        super().__init__()
        self.dense = nn.Dense(3, in_units=3)
        self.dynamic, self.rows = dynamic, rows

    def forward(self, x):
        out = self.dynamic(self.dense(x))
        return out + 1 if self.rows else out.sum() + 1


def _mask(y):
    return npx.boolean_mask(y, y.sum(axis=1) > 0)


def _indexed(y):
    return y[y > 0]


def _nonzero(y):
    return np.nonzero(y > 0)[0].astype("float32")


def _unique(y):
    return np.unique(y)


MODES = ["imperative", "hybridized", "hybridized-cached"]


def _block(dynamic, mode, rows=False):
    net = Dynamic(dynamic, rows)
    net.initialize()
    if mode != "imperative":
        net.hybridize()
    if mode == "hybridized-cached":
        net(np.array(X))  # the cached graph runs its dynamic op between compiled segments
    return net


def _jitted_call(net):
    return jax.jit(lambda x: net(np.array(x)).to_jax())(X)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dynamic, op", [(_mask, "_contrib_boolean_mask")], ids=["boolean_mask"])
def test_outer_jit_names_the_op_and_what_to_do(dynamic, op, mode):
    net = _block(dynamic, mode, rows=True)
    eager = net(np.array(X)).asnumpy()   # without jax.jit the block runs, hybridized or not
    w, b = (p.data().asnumpy() for p in net.collect_params().values())
    y = X @ w.T + b
    onp.testing.assert_allclose(eager, y[y.sum(axis=1) > 0] + 1, rtol=1e-5)
    with pytest.raises(DynamicShapeError) as info:
        _jitted_call(net)
    message = str(info.value)
    assert isinstance(info.value, mx.MXNetError)
    assert message.startswith(f"{op} is a dynamic-shape op")
    assert "jax.jit" in message and "between compiled segments" in message


@pytest.mark.parametrize("mode", MODES)
def test_a_mask_feeding_only_sums_needs_no_values_when_hybridized(mode):
    net = _block(_mask, mode)
    w, b = (p.data().asnumpy() for p in net.collect_params().values())
    y = X @ w.T + b
    want = y[y.sum(axis=1) > 0].sum() + 1
    if mode != "hybridized-cached":  # op by op (imperative, or tracing the first call) the mask is read
        with pytest.raises(DynamicShapeError):
            _jitted_call(net)
    else:  # the rows stay in place and the sum skips the unselected ones: one static program
        onp.testing.assert_allclose(onp.asarray(_jitted_call(net)), want, rtol=1e-5)


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype")  # a 32-bit user jit: JAX truncates int64
@pytest.mark.parametrize("mode", MODES)
def test_shape_array_ops_under_outer_jit(mode):
    net = _block(lambda y: np.zeros(npx.shape_array(y)) + y, mode)
    with pytest.raises(DynamicShapeError, match=r"^_zeros_by_shape_array is a dynamic-shape op.*jax\.jit"):
        _jitted_call(net)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dynamic, op", [(_indexed, "_getitem_mask"), (_nonzero, "nonzero"), (_unique, "unique")],
                         ids=["getitem_mask", "nonzero", "unique"])
def test_other_dynamic_ops_under_outer_jit(dynamic, op, mode):
    net = _block(dynamic, mode)
    with pytest.raises(DynamicShapeError, match=rf"^{op} is a dynamic-shape op"):
        _jitted_call(net)
