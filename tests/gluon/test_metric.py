"""``mx.gluon.metric`` against fixtures written by MXNet 2.0 (tools/make_metric_fixtures.py)."""
import json
import math
import pathlib

import numpy as onp
import pytest

import mxjax as mx
from mxjax.gluon import metric as M

FIX = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "metric"
DATA = json.loads((FIX / "metrics.json").read_text())
with onp.load(FIX / "inputs.npz") as _npz:
    ARRAYS = {k: _npz[k] for k in _npz.files}


def _check(got, want, where):
    if isinstance(want, list):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), (where, got, want)
        for g, w in zip(got, want):
            _check(g, w, where)
    elif isinstance(want, dict):
        assert isinstance(got, mx.np.ndarray), (where, type(got))
        onp.testing.assert_allclose(got.asnumpy(), want["array"], rtol=1e-5, err_msg=str(where))
    elif want == "nan":
        assert isinstance(got, float) and math.isnan(got), (where, got)
    elif isinstance(want, str):
        assert got == want, (where, got, want)
    else:
        assert isinstance(got, (int, float)), (where, type(got))
        assert got == pytest.approx(want, rel=1e-5, abs=1e-7), (where, got, want)


def _replay(case, convert):
    m = getattr(M, case["metric"])(**case["kwargs"])
    _check(m.get(), case["results"][0], (case["metric"], 0))
    for i, step in enumerate(case["steps"]):
        labels = [convert(ARRAYS[k], case["kind"]) for k in step["labels"]]
        preds = [convert(ARRAYS[k], case["kind"]) for k in step["preds"]]
        if case["bare"]:
            labels, preds = labels[0], preds[0]
        m.update(labels, preds)
        _check(m.get(), case["results"][i + 1], (case["metric"], i + 1))
    return m


def _to_mx(a, kind):
    return (mx.nd.array if kind == "nd" else mx.np.array)(a, dtype=a.dtype)


@pytest.mark.parametrize("name", sorted(DATA["cases"]))
def test_matches_mxnet(name):
    case = DATA["cases"][name]
    m = _replay(case, _to_mx)
    _check([list(p) for p in m.get_name_value()], case["name_value"], (name, "name_value"))
    if "config" in case:
        assert m.get_config() == case["config"]
        again = M.create(**m.get_config()) if case["metric"] != "CompositeEvalMetric" else None
        if again is not None:
            assert type(again) is type(m)   # (TopKAccuracy re-appends "_k" to the name, as in MXNet)
    m.reset()
    _check(m.get(), case["after_reset"], (name, "reset"))


@pytest.mark.parametrize("name", ["acc", "f1_multiclass_macro", "mse", "crossentropy_ignore", "pcc", "composite"])
def test_numpy_inputs_match(name):
    _replay(DATA["cases"][name], lambda a, kind: a.copy())


def _bad_inputs():
    a, n = mx.np.array, mx.nd.array
    return {
        "acc_list_len": lambda: M.Accuracy().update([a([0, 1])], [a([[1, 0.]]), a([[1, 0.]])]),
        "acc_shape": lambda: M.Accuracy().update([a([0, 1, 1])], [a([[1, 0.], [0, 1.]])]),
        "topk_one": lambda: M.TopKAccuracy(top_k=1),
        "topk_3d": lambda: M.TopKAccuracy(top_k=2).update([a([0])], [a(onp.ones((1, 2, 2)))]),
        "topk_big": lambda: M.TopKAccuracy(top_k=5).update([a([0, 1])], [a(onp.ones((2, 3)))]),
        "f1_label": lambda: M.F1().update([a([0, 2])], [a([[1, 0.], [0, 1.]])]),
        "f1_pred": lambda: M.F1().update([a([0, 1])], [a(onp.ones((2, 3)))]),
        "f1_class_type": lambda: M.F1(class_type="foo").update([a([0, 1])], [a([0.2, 0.7])]),
        "f1_multiclass_label": lambda: M.F1(class_type="multiclass").update([a([0, 3])], [a(onp.ones((2, 3)))]),
        "ce_shape": lambda: M.CrossEntropy().update([a([0, 1, 1])], [a(onp.ones((2, 3)))]),
        "ce_3d": lambda: M.CrossEntropy().update([a(onp.zeros((2, 3)))], [a(onp.ones((2, 3, 4)))]),
        "pearson_shape": lambda: M.PearsonCorrelation().update([a([0., 1, 1])], [a([0., 1])]),
        "threshold_int": lambda: M.predict_with_threshold(a([0.1, 0.9]), 1),
        "create_unknown": lambda: M.create("no_such_metric"),
        "create_int": lambda: M.create(3),
        "custom_config": lambda: M.create(lambda l, p: 0.).get_config(),
        "nd_list_len": lambda: M.MAE().update([n([0, 1])], [n([1, 0.]), n([1, 0.])]),
    }


@pytest.mark.parametrize("name", sorted(DATA["errors"]))
def test_bad_input_raises_like_mxnet(name):
    want = DATA["errors"][name]
    with pytest.raises(Exception) as info:
        _bad_inputs()[name]()
    assert type(info.value).__name__ == want


def test_create_and_registry():
    assert isinstance(M.create("acc"), M.Accuracy)
    assert isinstance(M.create("top_k_acc", top_k=3), M.TopKAccuracy)
    assert isinstance(M.create("ce"), M.CrossEntropy) and isinstance(M.create("pearsonr"), M.PearsonCorrelation)
    comp = M.create(["acc", M.MAE(), lambda label, pred: 1.0])
    assert isinstance(comp, M.CompositeEvalMetric)
    assert [type(c) for c in comp.metrics] == [M.Accuracy, M.MAE, M.CustomMetric]
    assert isinstance(comp.get_metric(5), ValueError)
    acc = M.Accuracy()
    assert M.create(acc) is acc
    assert mx.gluon.metric is M

    @M.register
    @M.alias("my_metric_alias")
    class MyMetric(M.EvalMetric):
        def __init__(self, name="mine", **kw):
            super().__init__(name, **kw)

        def update(self, labels, preds):
            self.sum_metric += 2.0
            self.num_inst += 1

    m = M.create("my_metric_alias")
    m.update([], [])
    assert m.get() == ("mine", 2.0) and str(m) == "EvalMetric: {'mine': 2.0}"


def test_custom_metric_and_np():
    def mae(label, pred):
        assert isinstance(label, mx.np.ndarray) and isinstance(pred, mx.np.ndarray)
        return float(onp.abs(label.asnumpy() - pred.asnumpy()).mean())

    m = M.create(mae)
    assert m.name == "mae"
    m.update([mx.np.array([1., 2.])], [mx.np.array([1.5, 2.])])
    m.update([mx.nd.array([0., 0.])], [mx.nd.array([1., 1.])])
    assert m.get() == ("mae", pytest.approx(0.625))
    assert M.CustomMetric(lambda l, p: 0.).name == "custom(<lambda>)"
    pair = M.np(lambda l, p: (float(l.asnumpy().sum()), 4), name="pair")
    pair.update([mx.np.array([1., 3.])], [mx.np.array([0., 0.])])
    assert pair.get() == ("pair", 1.0)


def test_update_dict_and_names():
    m = M.Accuracy(output_names=["out"], label_names=["lab"])
    m.update_dict({"lab": mx.np.array([0, 1]), "x": mx.np.array([5])},
                  {"out": mx.np.array([[0.9, 0.1], [0.8, 0.2]]), "y": mx.np.array([1])})
    assert m.get() == ("accuracy", 0.5)
    comp = M.CompositeEvalMetric([M.MAE(), M.Loss()], label_names=["lab"], output_names=["out"])
    comp.update_dict({"lab": mx.np.array([1., 2.])}, {"out": mx.np.array([2., 2.]), "z": mx.np.array([9.])})
    assert comp.get_name_value() == [("mae", 0.5), ("loss", 2.0)]


def test_check_label_shapes_and_threshold():
    a = mx.np.array([1., 2.])
    assert M.check_label_shapes(a, a, wrap=True) == ([a], [a])
    with pytest.raises(ValueError, match="does not match"):
        M.check_label_shapes(a, mx.np.array([1., 2., 3.]), shape=True)
    assert M.predict_with_threshold(onp.array([0.2, 0.7]), 0.5).tolist() == [False, True]
    out = M.predict_with_threshold(onp.array([[0.2, 0.7]]), mx.np.array([0.1, 0.8]))
    assert onp.asarray(out).tolist() == [[True, False]]


@pytest.mark.parametrize("cls", [M.CrossEntropy, M.Perplexity])
def test_cross_entropy_eps_is_checked(cls):
    """MXNet 2.0's first argument is eps; 1.x's Perplexity(None) meant ignore_label.  Given None (or a
    negative number, or text) the floor of the log would be nan: a clear error names the argument instead
    (MXNet 2.0 fails deep in its C++ for None)."""
    for bad in (None, -1.0, "x", True):
        with pytest.raises(mx.base.MXNetValueError, match="eps"):
            cls(bad)
    metric = cls(ignore_label=None)
    metric.update(mx.nd.array([0, 1, 2]), mx.nd.array([[0.2, 0.5, 0.3], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]]))
    nll = -onp.log([0.2, 0.8, 0.4]).mean()
    assert metric.get()[1] == pytest.approx(nll if cls is M.CrossEntropy else math.exp(nll), rel=1e-6)
