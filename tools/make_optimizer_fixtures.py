"""Write MXNet 2.0's optimizer updates for the mxjax optimizer tests.

Run inside a virtualenv with mxnet 2.0.0b1 from the repository root:
``python tools/make_optimizer_fixtures.py``.  For each case (optimizer name, constructor
kwargs, optional FactorScheduler) two weights (indices 0 and 1, lr_mult 0.5 on index 1) are
updated four times with a fixed gradient sequence; the weights after every step and the final
states are written to ``tests/fixtures/optimizer/updates.npz``, the cases to ``cases.json``.
"""
import json
import os

import mxnet as mx
import numpy as np

OUT = os.path.join("tests", "fixtures", "optimizer")
STEPS = 4
COMMON = {"wd": 0.05, "clip_gradient": 0.3, "rescale_grad": 0.8}
CASES = [
    ("sgd", {"momentum": 0.9}), ("nag", {}), ("adam", {}), ("adamw", {}), ("adagrad", {}),
    ("rmsprop", {}), ("rmsprop", {"centered": True}), ("adadelta", {}), ("ftrl", {}), ("lamb", {}),
    ("lars", {"momentum": 0.9}), ("signum", {}), ("adamax", {}), ("nadam", {}), ("adabelief", {}),
    ("ftml", {}), ("lans", {}), ("dcasgd", {"momentum": 0.9}), ("dcasgd", {}), ("test", {}),
    ("adamax", {"beta1": 0.8}, True), ("nadam", {"schedule_decay": 0.01}, True),
    ("adabelief", {"correct_bias": False}, True), ("ftml", {}, True), ("lans", {"lower_bound": 0.1}, True),
    ("lamb", {"bias_correction": False}, True), ("dcasgd", {"momentum": 0.5, "lamda": 0.5}, True),
    ("groupadagrad", {"wd": 0.0}), ("groupadagrad", {"wd": 0.0, "epsilon": 1e-2}, True),
]
MP_CASES = ["sgd", "adam", "lamb", "lans", "adabelief", "ftml"]  # float16 weights, multi_precision=True


def flat_state(state):
    if state is None:
        return []
    if isinstance(state, (tuple, list)):
        return [x for s in state for x in flat_state(s)]
    return [state]


def run(name, kwargs, sched, dtype="float32", mp=False):
    rng = np.random.RandomState(7)
    ws = [rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (5, 2) if name == "groupadagrad" else (5,))]
    grads = [[rng.uniform(-1, 1, w.shape) for w in ws] for _ in range(STEPS)]
    kw = dict(COMMON, learning_rate=0.05, **kwargs)
    if sched:
        kw["lr_scheduler"] = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=0.05)
    if mp:
        kw["multi_precision"] = True
    opt = mx.optimizer.create(name, **kw)
    opt.set_lr_mult({1: 0.5})
    weights = [mx.nd.array(w, dtype=dtype) for w in ws]
    states = [opt.create_state_multi_precision(i, w) for i, w in enumerate(weights)]
    out = {"w0": [w.asnumpy() for w in weights]}
    for k in range(STEPS):
        gs = [mx.nd.array(g, dtype=dtype) for g in grads[k]]
        opt.update_multi_precision([0, 1], weights, gs, states)
        out["step%d" % k] = [w.asnumpy() for w in weights]
    out["grads"] = grads
    out["states"] = [[s.asnumpy() for s in flat_state(st)] for st in states]
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    arrays, cases = {}, []
    jobs = [(n, c[1], len(c) > 2 and c[2], "float32", False) for c in CASES for n in [c[0]]]
    jobs += [(n, {"momentum": 0.9} if n == "sgd" else {}, False, "float16", True) for n in MP_CASES]
    for i, (name, kwargs, sched, dtype, mp) in enumerate(jobs):
        res = run(name, kwargs, sched, dtype, mp)
        key = "c%d" % i
        cases.append({"key": key, "name": name, "kwargs": kwargs, "scheduler": bool(sched), "dtype": dtype,
                      "multi_precision": mp, "n_states": [len(s) for s in res["states"]]})
        for p in range(2):
            arrays["%s/w0/%d" % (key, p)] = res["w0"][p]
            for k in range(STEPS):
                arrays["%s/step%d/%d" % (key, k, p)] = res["step%d" % k][p]
                shared = "grad%d/%d" % (k, p)  # the gradients of case 0, unless this case's differ
                if shared not in arrays:
                    arrays[shared] = res["grads"][k][p]
                elif (arrays[shared].shape != res["grads"][k][p].shape
                      or not np.array_equal(arrays[shared], res["grads"][k][p])):
                    arrays["%s/%s" % (key, shared)] = res["grads"][k][p]
            for j, s in enumerate(res["states"][p]):
                arrays["%s/state/%d/%d" % (key, p, j)] = s
    np.savez_compressed(os.path.join(OUT, "updates.npz"), **arrays)
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump({"steps": STEPS, "common": COMMON, "learning_rate": 0.05, "lr_mult": {"1": 0.5},
                   "scheduler": {"step": 2, "factor": 0.5}, "cases": cases}, f, indent=1)


if __name__ == "__main__":
    main()
