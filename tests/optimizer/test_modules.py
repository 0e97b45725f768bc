"""mx.optimizer's per-class modules (MXNet 2's mxnet/optimizer/<name>.py layout), its utils, and
that the optimizer classes and the update operators share one rule (same numbers)."""
from __future__ import annotations

import importlib

import numpy as onp
import pytest

import mxjax as mx
from mxjax import optimizer as opt
from mxjax.ndarray import _updates

ND = mx.nd if hasattr(mx.nd, "sgd_update") else _updates
CONTRIB = mx.nd.contrib if hasattr(mx.nd.contrib, "adamw_update") else _updates

MODULES = {"adam": "Adam", "adamW": "AdamW", "adamax": "Adamax", "adabelief": "AdaBelief", "adadelta": "AdaDelta",
           "adagrad": "AdaGrad", "dcasgd": "DCASGD", "ftml": "FTML", "ftrl": "Ftrl", "lamb": "LAMB", "lans": "LANS",
           "lars": "LARS", "nadam": "Nadam", "nag": "NAG", "rmsprop": "RMSProp", "sgd": "SGD", "sgld": "SGLD",
           "signum": "Signum", "contrib": "GroupAdaGrad", "optimizer": "Optimizer", "updater": "Updater"}


@pytest.mark.parametrize("module, name", sorted(MODULES.items()))
def test_each_class_lives_in_its_mxnet_module(module, name):
    mod = importlib.import_module(f"mxjax.optimizer.{module}")
    cls = getattr(mod, name)
    assert name in mod.__all__ and cls.__module__ == mod.__name__
    assert getattr(opt, module) is mod
    if module not in ("optimizer", "updater"):
        assert opt.Optimizer.opt_registry[name.lower()] is cls


def test_test_optimizer_lives_in_optimizer_module():
    from mxjax.optimizer.optimizer import Test, create
    assert opt.Test is Test and isinstance(create("test"), Test)


def test_utils_flatten_and_as_classic():
    from mxjax.optimizer.utils import _as_classic, _flatten_list
    assert _flatten_list([[1, 2], [3], []]) == [1, 2, 3]
    a = mx.np.array([1.0, 2.0])
    classic = _as_classic(a, allow_np=True)
    assert type(classic) is mx.nd.NDArray and classic.asnumpy().tolist() == [1.0, 2.0]
    assert all(type(x) is mx.nd.NDArray for x in _as_classic([a, a], allow_np=True))
    nd = mx.nd.array([1.0])
    assert _as_classic(nd, allow_np=False) is nd
    with pytest.raises(ValueError, match="not allowed"):
        _as_classic(a, allow_np=False)


def _weights():
    rng = onp.random.RandomState(3)
    return rng.uniform(-1, 1, (4, 3)).astype(onp.float32), rng.uniform(-1, 1, (4, 3)).astype(onp.float32)


def test_sgd_class_and_sgd_mom_update_agree():
    w0, g0 = _weights()
    sgd = opt.SGD(learning_rate=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5, clip_gradient=0.2)
    w, state = mx.nd.array(w0), None
    state = sgd.create_state(0, w)
    w2, mom2 = mx.nd.array(w0), mx.nd.zeros(w0.shape)
    for _ in range(2):
        sgd.update([0], [w], [mx.nd.array(g0)], [state])
        ND.sgd_mom_update(w2, mx.nd.array(g0), mom2, lr=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5,
                          clip_gradient=0.2, out=w2)
    onp.testing.assert_allclose(w.asnumpy(), w2.asnumpy(), rtol=1e-6, atol=1e-7)
    onp.testing.assert_allclose(state.asnumpy(), mom2.asnumpy(), rtol=1e-6, atol=1e-7)


def test_adamw_class_and_contrib_adamw_update_agree():
    w0, g0 = _weights()
    adamw = opt.AdamW(learning_rate=0.05, wd=0.02, correct_bias=False)
    w = mx.nd.array(w0)
    mean, var = adamw.create_state(0, w)
    w2, m2, v2 = mx.nd.array(w0), mx.nd.zeros(w0.shape), mx.nd.zeros(w0.shape)
    adamw.update([0], [w], [mx.nd.array(g0)], [(mean, var)])
    CONTRIB.adamw_update(w2, mx.nd.array(g0), m2, v2, 1.0, lr=1.0, eta=0.05, wd=0.02, epsilon=1e-6, out=w2)
    onp.testing.assert_allclose(w.asnumpy(), w2.asnumpy(), rtol=1e-6, atol=1e-7)
    onp.testing.assert_allclose(var.asnumpy(), v2.asnumpy(), rtol=1e-6, atol=1e-9)
