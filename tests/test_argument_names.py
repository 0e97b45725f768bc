"""Argument names MXNet 2.0.0b1 gives these functions (read there with inspect.signature), for the calls
that pass them by keyword; each is also called that way."""
import inspect

import numpy as onp
import pytest

import mxjax as mx

NAMES = [
    (lambda: mx.nd.power, ["base", "exp"]),
    (lambda: mx.np.random.seed, ["seed_state", "device"]),
    (lambda: mx.npx.random.seed, ["seed", "device"]),
    (lambda: mx.random.seed, ["seed_state", "device"]),
    (lambda: mx.npx.savez, ["file"]),
]


@pytest.mark.parametrize("function, names", NAMES, ids=["nd.power", "np.random.seed", "npx.random.seed",
                                                        "random.seed", "npx.savez"])
def test_argument_names_are_mxnets(function, names):
    params = [p.name for p in inspect.signature(function()).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    assert params[:len(names)] == names


def test_keyword_calls(tmp_path):
    assert mx.nd.power(base=mx.nd.array([2.0, 3.0]), exp=2).asnumpy().tolist() == [4.0, 9.0]
    draws = []
    for reseed in (lambda: mx.np.random.seed(seed_state=7, device="all"), lambda: mx.npx.random.seed(seed=7)):
        reseed()
        draws.append(mx.np.random.uniform(size=3).asnumpy())
    onp.testing.assert_array_equal(draws[0], draws[1])
    mx.npx.savez(file=str(tmp_path / "x.npz"), a=mx.np.ones(2))
    assert mx.npx.load(str(tmp_path / "x.npz"))["a"].asnumpy().tolist() == [1.0, 1.0]


def test_random_seed_takes_1x_ctx_too():
    mx.random.seed(5, ctx="all")
    first = mx.np.random.uniform(size=2).asnumpy()
    mx.random.seed(seed_state=5, device=mx.cpu())
    onp.testing.assert_array_equal(mx.np.random.uniform(size=2).asnumpy(), first)
