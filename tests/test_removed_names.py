"""1.x names MXNet 2.0 removed: AttributeError subclasses whose message names the replacement."""
import pytest

import mxjax as mx
from mxjax.base import RemovedAPIError


@pytest.mark.parametrize("name, hint", [
    ("mod", "gluon.HybridBlock"), ("module", "gluon.Trainer"), ("rnn", "mx.gluon.rnn"),
    ("monitor", "register_op_hook"), ("mon", "register_op_hook"),
    ("executor_manager", "gluon.Trainer"), ("torch", "no replacement"), ("th", "no replacement"),
])
def test_removed_module_names(name, hint):
    with pytest.raises(RemovedAPIError, match=hint):
        getattr(mx, name)
    assert not hasattr(mx, name)  # as in MXNet 2.0, where they do not exist
    assert issubclass(RemovedAPIError, AttributeError)


def test_mod_module_usage_fails_at_the_attribute():
    with pytest.raises(AttributeError, match="SymbolBlock.imports"):
        mx.mod.Module(symbol=None)  # noqa: F821


def test_unknown_names_are_plain_attribute_errors():
    with pytest.raises(AttributeError, match="module 'mxjax' has no attribute 'no_such_name'") as info:
        mx.no_such_name  # noqa: B018
    assert not isinstance(info.value, RemovedAPIError)


def test_new_top_level_names_exist():
    for name in ["AttrScope", "attribute", "is_np_array", "is_np_default_dtype", "is_np_shape", "np_array",
                 "np_default_dtype", "np_shape", "runtime", "set_np_shape", "use_np", "use_np_array",
                 "use_np_default_dtype", "use_np_shape", "util", "base", "error", "registry", "callback",
                 "log", "model"]:
        assert hasattr(mx, name), name
    assert mx.use_np is mx.util.use_np and mx.np_shape is mx.util.np_shape


def test_metric_is_gluon_metric_for_1x_code():
    # 1.x scripts use mx.metric; MXNet 2.0 moved it to mx.gluon.metric, and mxjax keeps both names
    assert mx.metric is mx.gluon.metric
    acc = mx.metric.create("acc")
    acc.update([mx.nd.array([0, 1])], [mx.nd.array([[0.9, 0.1], [0.2, 0.8]])])
    assert acc.get() == ("accuracy", 1.0)
