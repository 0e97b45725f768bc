"""Every optimizer against the weights and states MXNet 2.0.0b1 wrote
(``tools/make_optimizer_fixtures.py``): four steps of two weights with wd, clip_gradient,
rescale_grad, an lr_mult, a FactorScheduler in some cases and float16 multi_precision."""
import json
import os

import jax
import numpy as onp
import pytest

import mxjax as mx
from mxjax import optimizer as opt

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "optimizer")
with open(os.path.join(HERE, "cases.json")) as f:
    SPEC = json.load(f)
DATA = onp.load(os.path.join(HERE, "updates.npz"))
CASES = SPEC["cases"]


def _leaves(state):
    return jax.tree.leaves(state, is_leaf=lambda x: isinstance(x, mx.nd.NDArray))


def _grad_key(key, k, p):  # the shared gradients, or the case's own where they differ
    own = f"{key}/grad{k}/{p}"
    return own if own in DATA.files else f"grad{k}/{p}"


def _ids(case):
    extra = ",".join(f"{k}={v}" for k, v in case["kwargs"].items())
    tags = ("-sched" if case["scheduler"] else "") + ("-fp16mp" if case["multi_precision"] else "")
    return f"{case['name']}({extra}){tags}"


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_matches_mxnet(case):
    key, dtype = case["key"], case["dtype"]
    kw = dict(SPEC["common"], learning_rate=SPEC["learning_rate"], **case["kwargs"])
    if case["scheduler"]:
        kw["lr_scheduler"] = mx.lr_scheduler.FactorScheduler(base_lr=SPEC["learning_rate"], **SPEC["scheduler"])
    if case["multi_precision"]:
        kw["multi_precision"] = True
    o = opt.create(case["name"], **kw)
    o.set_lr_mult({1: 0.5})
    weights = [mx.nd.array(DATA[f"{key}/w0/{p}"], dtype=dtype) for p in range(2)]
    states = [o.create_state_multi_precision(p, w) for p, w in enumerate(weights)]
    for p in range(2):  # MXNet's state structure: same number of arrays, same shapes
        assert len(_leaves(states[p])) == case["n_states"][p]
    # float32 rounding: MXNet computes in float32 too, in another order (AdaBelief without bias
    # correction amplifies it: its steps divide by sqrt(s) ~ sqrt(eps)); a formula error is ~1e-2
    tol = dict(rtol=2e-3, atol=2e-3) if dtype == "float16" else dict(rtol=1e-4, atol=3e-5)
    for k in range(SPEC["steps"]):
        grads = [mx.nd.array(DATA[_grad_key(key, k, p)], dtype=dtype) for p in range(2)]
        o.update_multi_precision([0, 1], weights, grads, states)
        for p in range(2):
            assert weights[p].dtype == onp.dtype(dtype)
            onp.testing.assert_allclose(weights[p].asnumpy(), DATA[f"{key}/step{k}/{p}"], **tol,
                                        err_msg=f"{case['name']} step {k} weight {p}")
    for p in range(2):
        for j, s in enumerate(_leaves(states[p])):
            onp.testing.assert_allclose(s.asnumpy(), DATA[f"{key}/state/{p}/{j}"], **tol,
                                        err_msg=f"{case['name']} state {j} of weight {p}")
