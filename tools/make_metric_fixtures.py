"""Write tests/fixtures/metric/{metrics.json,inputs.npz}: MXNet 2.0's ``mx.gluon.metric`` on small random inputs.

Run inside a reference MXNet 2.0 virtualenv (``python tools/make_metric_fixtures.py``).  Each case names a
metric class and its constructor arguments, then a list of updates; each update names its label and
prediction arrays in ``inputs.npz`` (``kind`` says whether they are passed as ``mx.np`` or ``mx.nd`` arrays,
as lists or bare).  ``get()`` is recorded after every update, then ``get_config()`` where it exists.  The
``errors`` table records which exception MXNet raises for bad input.
"""
from __future__ import annotations

import json
import math
import pathlib

import mxnet as mx
import numpy as np
from mxnet.gluon import metric as M

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "metric"
RNG = np.random.default_rng(31)
ARRAYS: dict[str, np.ndarray] = {}


def put(arr):
    key = f"a{len(ARRAYS)}"
    ARRAYS[key] = arr
    return key


def probs(n, c):
    p = RNG.uniform(0.05, 1.0, (n, c)).astype("float32")
    return p / p.sum(-1, keepdims=True)


def cls(n, c):
    return RNG.integers(0, c, n).astype("float32")


def rand(*shape):
    return RNG.normal(size=shape).astype("float32")


def to_mx(key, kind):
    return (mx.nd.array if kind == "nd" else mx.np.array)(ARRAYS[key], dtype=ARRAYS[key].dtype)


def jsonable(v):
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if hasattr(v, "asnumpy"):
        return {"array": v.asnumpy().tolist()}
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return v.item() if hasattr(v, "item") else v


def run_case(cls_name, kwargs, updates, kind="np", bare=False):
    """``updates`` is a list of (label arrays, pred arrays) as NumPy; returns the JSON record."""
    m = getattr(M, cls_name)(**kwargs)
    steps, results = [], [jsonable(m.get())]
    for labels, preds in updates:
        lk, pk = [put(a) for a in labels], [put(a) for a in preds]
        steps.append({"labels": lk, "preds": pk})
        lab, pre = [to_mx(k, kind) for k in lk], [to_mx(k, kind) for k in pk]
        if bare:
            lab, pre = lab[0], pre[0]
        m.update(lab, pre)
        results.append(jsonable(m.get()))
    rec = {"metric": cls_name, "kwargs": kwargs, "kind": kind, "bare": bare, "steps": steps, "results": results,
           "name_value": jsonable(m.get_name_value())}
    try:
        rec["config"] = m.get_config()
    except NotImplementedError:
        pass
    m.reset()
    rec["after_reset"] = jsonable(m.get())
    return rec


def classification_cases():
    cases = {}
    ups = [([cls(6, 4)], [probs(6, 4)]), ([cls(5, 4), cls(3, 4)], [probs(5, 4), probs(3, 4)])]
    cases["acc"] = run_case("Accuracy", {}, ups)
    cases["acc_nd"] = run_case("Accuracy", {}, ups, kind="nd")
    cases["acc_bare"] = run_case("Accuracy", {}, ups[:1], bare=True)
    cases["acc_index_pred"] = run_case("Accuracy", {}, [([cls(7, 3)], [cls(7, 3)])])
    cases["acc_axis0"] = run_case("Accuracy", {"axis": 0}, [([cls(5, 3)], [probs(5, 3).T.copy()])])
    cases["acc_seq"] = run_case("Accuracy", {"axis": -1, "name": "seqacc"},
                                [([cls(6, 3).reshape(2, 3)], [probs(6, 3).reshape(2, 3, 3)])])
    cases["topk"] = run_case("TopKAccuracy", {"top_k": 3}, [([cls(8, 6)], [probs(8, 6)]), ([cls(4, 6)], [probs(4, 6)])])
    b2 = [([cls(8, 2)], [probs(8, 2)]), ([cls(6, 2)], [RNG.uniform(size=6).astype("float32")])]
    for name in ("F1", "MCC", "BinaryAccuracy"):
        kw = {} if name != "BinaryAccuracy" else {"threshold": 0.4}
        ups_b = b2 if name != "BinaryAccuracy" else [b2[1], ([cls(6, 2)], [RNG.uniform(size=6).astype("float32")])]
        cases[name.lower()] = run_case(name, kw, ups_b)
    cases["f1_macro"] = run_case("F1", {"average": "macro"}, b2)
    cases["f1_none"] = run_case("F1", {"average": None}, b2)
    cases["f1_threshold"] = run_case("F1", {"threshold": 0.3}, b2)
    mc = [([cls(9, 4)], [probs(9, 4)]), ([cls(7, 4)], [probs(7, 4)])]
    cases["f1_multiclass_micro"] = run_case("F1", {"class_type": "multiclass"}, mc)
    cases["f1_multiclass_macro"] = run_case("F1", {"class_type": "multiclass", "average": "macro"}, mc)
    ml = [([RNG.integers(0, 2, (6, 3)).astype("float32")], [RNG.uniform(size=(6, 3)).astype("float32")])]
    cases["f1_multilabel"] = run_case("F1", {"class_type": "multilabel", "average": "macro"}, ml)
    cases["fbeta"] = run_case("Fbeta", {"beta": 2.0}, b2)
    cases["fbeta_multiclass"] = run_case("Fbeta", {"beta": 0.5, "class_type": "multiclass", "average": "macro"}, mc)
    cases["pcc"] = run_case("PCC", {}, [([cls(10, 3)], [probs(10, 3)]), ([cls(8, 5)], [cls(8, 5)]),
                                        ([cls(6, 5)], [probs(6, 5)])])
    cases["mcc_perfect_neg"] = run_case("MCC", {}, [([np.array([0, 0, 1, 1], "float32")],
                                                     [np.array([0.9, 0.8, 0.1, 0.2], "float32")])])
    return cases


def regression_cases():
    cases = {}
    ups = [([rand(4, 3)], [rand(4, 3)]), ([rand(5), rand(2, 2, 3)], [rand(5), rand(2, 2, 3)])]
    for name in ("MAE", "MSE", "RMSE", "MeanPairwiseDistance", "MeanCosineSimilarity", "PearsonCorrelation"):
        cases[name.lower()] = run_case(name, {}, ups)
    cases["mpd_p1"] = run_case("MeanPairwiseDistance", {"p": 1}, [([rand(4, 3)], [rand(4, 3)])])
    cases["mpd_p3"] = run_case("MeanPairwiseDistance", {"p": 3}, [([np.abs(rand(4, 3)) + 2], [np.abs(rand(4, 3))])])
    cases["mae_nd"] = run_case("MAE", {}, ups[:1], kind="nd")
    cases["loss"] = run_case("Loss", {}, [([rand(2)], [np.abs(rand(4))]), ([rand(1)], [rand(2, 3)])])
    cases["torch"] = run_case("Torch", {}, [([rand(2)], [np.abs(rand(4))])])
    return cases


def entropy_cases():
    cases = {}
    ups = [([cls(6, 5)], [probs(6, 5)]), ([cls(4, 5), cls(3, 5)], [probs(4, 5), probs(3, 5)])]
    for name in ("CrossEntropy", "Perplexity"):
        cases[name.lower()] = run_case(name, {}, ups)
        cases[name.lower() + "_ignore"] = run_case(name, {"ignore_label": 2}, ups)
        cases[name.lower() + "_logits"] = run_case(name, {"from_logits": True}, [([cls(6, 5)], [rand(6, 5)])])
    cases["ce_axis0"] = run_case("CrossEntropy", {"axis": 0}, [([cls(3, 3)], [probs(3, 3)])])
    cases["ce_col"] = run_case("CrossEntropy", {"eps": 1e-3}, [([cls(4, 3).reshape(4, 1)],
                                                               [np.array([[0.0, 0.5, 0.5]] * 4, "float32")])])
    return cases


def composite_cases():
    ups = [([cls(6, 2)], [probs(6, 2)]), ([cls(5, 2)], [probs(5, 2)])]
    rec = run_case("CompositeEvalMetric", {"metrics": ["acc", "f1", "ce"]}, ups)
    return {"composite": rec}


def expect_error(fn):
    try:
        fn()
    except Exception as e:  # pylint: disable=broad-except
        return type(e).__name__
    return None


def error_cases():
    a, n = mx.np.array, mx.nd.array
    return {
        "acc_list_len": expect_error(lambda: M.Accuracy().update([a([0, 1])], [a([[1, 0.]]), a([[1, 0.]])])),
        "acc_shape": expect_error(lambda: M.Accuracy().update([a([0, 1, 1])], [a([[1, 0.], [0, 1.]])])),
        "topk_one": expect_error(lambda: M.TopKAccuracy(top_k=1)),
        "topk_3d": expect_error(lambda: M.TopKAccuracy(top_k=2).update([a([0])], [a(np.ones((1, 2, 2)))])),
        "topk_big": expect_error(lambda: M.TopKAccuracy(top_k=5).update([a([0, 1])], [a(np.ones((2, 3)))])),
        "f1_label": expect_error(lambda: M.F1().update([a([0, 2])], [a([[1, 0.], [0, 1.]])])),
        "f1_pred": expect_error(lambda: M.F1().update([a([0, 1])], [a(np.ones((2, 3)))])),
        "f1_class_type": expect_error(lambda: M.F1(class_type="foo").update([a([0, 1])], [a([0.2, 0.7])])),
        "f1_multiclass_label": expect_error(
            lambda: M.F1(class_type="multiclass").update([a([0, 3])], [a(np.ones((2, 3)))])),
        "ce_shape": expect_error(lambda: M.CrossEntropy().update([a([0, 1, 1])], [a(np.ones((2, 3)))])),
        "ce_3d": expect_error(lambda: M.CrossEntropy().update([a(np.zeros((2, 3)))], [a(np.ones((2, 3, 4)))])),
        "pearson_shape": expect_error(lambda: M.PearsonCorrelation().update([a([0., 1, 1])], [a([0., 1])])),
        "threshold_int": expect_error(lambda: M.predict_with_threshold(a([0.1, 0.9]), 1)),
        "create_unknown": expect_error(lambda: M.create("no_such_metric")),
        "create_int": expect_error(lambda: M.create(3)),
        "custom_config": expect_error(lambda: M.create(lambda l, p: 0.).get_config()),
        "nd_list_len": expect_error(lambda: M.MAE().update([n([0, 1])], [n([1, 0.]), n([1, 0.])])),
    }


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    cases = {}
    for make in (classification_cases, regression_cases, entropy_cases, composite_cases):
        cases.update(make())
    data = {"version": mx.__version__, "cases": cases, "errors": error_cases()}
    (OUT / "metrics.json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    np.savez_compressed(OUT / "inputs.npz", **ARRAYS)


if __name__ == "__main__":
    main()
