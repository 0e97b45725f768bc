"""Write MXNet 2.0's optimizer-update operators' results for ``tests/ndarray/test_nd_updates.py``.

Run from the repository root inside a virtualenv with mxnet 2.0.0b1, then again with mxnet 1.9.1
(``python tools/make_update_fixtures.py``): 2.0 writes every case but those marked ``"ref": "1.9"``
(where 2.0.0b1's kernel is broken: ``rmspropalex_update`` gives NaN), which 1.9.1 writes into
``arrays_1x.npz`` / ``cases_1x.json`` (1.x spells ``rho``/``momentum`` ``gamma1``/``gamma2``).  Each case calls one ``mx.nd`` / ``mx.nd.contrib``
update once on seeded random inputs; ``tests/fixtures/updates/arrays.npz`` holds every input
before the call (``<case>/in/<name>``), every input after it (``<case>/after/<name>``: the
weight written through ``out=`` and the states the op mutates) and the returned arrays
(``<case>/ret/<k>``); ``cases.json`` holds how each case is called.
"""
import json
import os

import mxnet as mx
import numpy as np

OUT = os.path.join("tests", "fixtures", "updates")
SHAPE = (3, 4)
PRE = {"wd": 0.02, "rescale_grad": 0.8, "clip_gradient": 0.3}


def A(name, kind="u", dtype="float32", shape=SHAPE):
    """An array argument: kind u (uniform -1..1), p (positive), s (small), big (for clipping)."""
    return {"array": name, "kind": kind, "dtype": dtype, "shape": list(shape)}


def single(op, arrays, params, out="weight", ns="nd"):
    return {"op": op, "ns": ns, "args": arrays, "kwargs": params, "out": out}


def per_weight(n, make):
    return [a for i in range(n) for a in make(i)]


CASES = {
    "sgd": single("sgd_update", [A("weight"), A("grad", "big")], dict(PRE, lr=0.1)),
    "sgd_noclip_noout": single("sgd_update", [A("weight"), A("grad")], dict(lr=0.1, wd=0.01), out=None),
    "sgd_mom": single("sgd_mom_update", [A("weight"), A("grad", "big"), A("mom")], dict(PRE, lr=0.1, momentum=0.9)),
    "mp_sgd": single("mp_sgd_update", [A("weight", dtype="float16"), A("grad", "big", "float16"),
                                       A("weight32")], dict(PRE, lr=0.1)),
    "mp_sgd_mom": single("mp_sgd_mom_update", [A("weight", dtype="float16"), A("grad", "big", "float16"), A("mom"),
                                               A("weight32")], dict(PRE, lr=0.1, momentum=0.9)),
    "nag_mom": single("nag_mom_update", [A("weight"), A("grad", "big"), A("mom")], dict(PRE, lr=0.1, momentum=0.9)),
    "mp_nag_mom": single("mp_nag_mom_update", [A("weight", dtype="float16"), A("grad", "big", "float16"), A("mom"),
                                               A("weight32")], dict(PRE, lr=0.1, momentum=0.9)),
    "adam": single("adam_update", [A("weight"), A("grad", "big"), A("mean"), A("var", "p")],
                   dict(PRE, lr=0.05, beta1=0.8, beta2=0.99, epsilon=1e-6)),
    "adam_defaults": single("adam_update", [A("weight"), A("grad"), A("mean"), A("var", "p")], dict(lr=0.05)),
    "ftml": single("ftml_update", [A("weight"), A("grad", "big"), A("d", "p"), A("v", "p"), A("z")],
                   dict(lr=0.05, beta1=0.6, beta2=0.99, epsilon=1e-6, t=3, wd=0.02, rescale_grad=0.8,
                        clip_grad=0.3)),
    "ftrl": single("ftrl_update", [A("weight"), A("grad", "big"), A("z"), A("n", "p")],
                   dict(PRE, lr=0.1, lamda1=0.05, beta=1.5)),
    "rmsprop": single("rmsprop_update", [A("weight"), A("grad", "big"), A("n", "p")],
                      dict(PRE, lr=0.05, rho=0.9, epsilon=1e-6, clip_weights=0.5)),
    "rmspropalex": dict(single("rmspropalex_update", [A("weight"), A("grad", "big"), A("n", "p"), A("g", "s"),
                                                      A("delta")],
                               dict(PRE, lr=0.05, rho=0.9, momentum=0.8, epsilon=1e-6, clip_weights=0.5)),
                        ref="1.9", renames={"rho": "gamma1", "momentum": "gamma2"}),
    "signsgd": single("signsgd_update", [A("weight"), A("grad")], dict(PRE, lr=0.1)),
    "signum": single("signum_update", [A("weight"), A("grad", "big"), A("mom")],
                     dict(PRE, lr=0.1, momentum=0.9, wd_lh=0.05)),
    "lamb1": single("lamb_update_phase1", [A("weight"), A("grad", "big"), A("mean"), A("var", "p")],
                    dict(PRE, beta1=0.8, beta2=0.99, epsilon=1e-6, t=3), out=None),
    "lamb1_nobias": single("lamb_update_phase1", [A("weight"), A("grad"), A("mean"), A("var", "p")],
                           dict(wd=0.01, t=2, bias_correction=False), out=None),
    "lamb2": single("lamb_update_phase2", [A("weight"), A("g"), A("r1", "p", shape=(1,)), A("r2", "p", shape=(1,))],
                    dict(lr=0.1, lower_bound=0.2, upper_bound=0.9)),
    "mp_lamb1": single("mp_lamb_update_phase1", [A("weight", dtype="float16"), A("grad", "big", "float16"),
                                                 A("mean"), A("var", "p"), A("weight32")],
                       dict(PRE, beta1=0.8, beta2=0.99, epsilon=1e-6, t=3), out=None),
    "mp_lamb2": single("mp_lamb_update_phase2", [A("weight", dtype="float16"), A("g"), A("r1", "p", shape=(1,)),
                                                 A("r2", "p", shape=(1,)), A("weight32")], dict(lr=0.1)),
    "multi_sgd": single("multi_sgd_update", per_weight(2, lambda i: [A(f"w{i}"), A(f"g{i}", "big")]),
                        dict(lrs=(0.1, 0.2), wds=(0.01, 0.0), rescale_grad=0.8, clip_gradient=0.3, num_weights=2),
                        out=["w0", "w1"]),
    "multi_sgd_mom": single("multi_sgd_mom_update",
                            per_weight(2, lambda i: [A(f"w{i}"), A(f"g{i}", "big"), A(f"m{i}")]),
                            dict(lrs=(0.1, 0.2), wds=(0.01, 0.0), momentum=0.9, rescale_grad=0.8, clip_gradient=0.3,
                                 num_weights=2), out=["w0", "w1"]),
    "multi_mp_sgd": single("multi_mp_sgd_update",
                           per_weight(2, lambda i: [A(f"w{i}", dtype="float16"), A(f"g{i}", "big", "float16"),
                                                    A(f"w32_{i}")]),
                           dict(lrs=(0.1, 0.2), wds=(0.01, 0.0), rescale_grad=0.8, num_weights=2), out=["w0", "w1"]),
    "multi_mp_sgd_mom": single("multi_mp_sgd_mom_update",
                               per_weight(2, lambda i: [A(f"w{i}", dtype="float16"), A(f"g{i}", "big", "float16"),
                                                        A(f"m{i}"), A(f"w32_{i}")]),
                               dict(lrs=(0.1, 0.2), wds=(0.01, 0.0), momentum=0.9, clip_gradient=0.3, num_weights=2),
                               out=["w0", "w1"]),
    "preloaded_sgd": single("preloaded_multi_sgd_update",
                            per_weight(2, lambda i: [A(f"w{i}"), A(f"g{i}", "big")])
                            + [A("lrs", "p", shape=(2,)), A("wds", "p", shape=(2,))],
                            dict(rescale_grad=0.8, clip_gradient=0.3, num_weights=2), out=["w0", "w1"]),
    "preloaded_sgd_mom": single("preloaded_multi_sgd_mom_update",
                                per_weight(2, lambda i: [A(f"w{i}"), A(f"g{i}", "big"), A(f"m{i}")])
                                + [A("lrs", "p", shape=(2,)), A("wds", "p", shape=(2,))],
                                dict(momentum=0.9, rescale_grad=0.8, num_weights=2), out=["w0", "w1"]),
    "preloaded_mp_sgd": single("preloaded_multi_mp_sgd_update",
                               per_weight(2, lambda i: [A(f"w{i}", dtype="float16"), A(f"g{i}", "big", "float16"),
                                                        A(f"w32_{i}")])
                               + [A("lrs", "p", shape=(2,)), A("wds", "p", shape=(2,))],
                               dict(clip_gradient=0.3, num_weights=2), out=["w0", "w1"]),
    "preloaded_mp_sgd_mom": single("preloaded_multi_mp_sgd_mom_update",
                                   per_weight(2, lambda i: [A(f"w{i}", dtype="float16"),
                                                            A(f"g{i}", "big", "float16"), A(f"m{i}"), A(f"w32_{i}")])
                                   + [A("lrs", "p", shape=(2,)), A("wds", "p", shape=(2,))],
                                   dict(momentum=0.9, rescale_grad=0.8, clip_gradient=0.3, num_weights=2),
                                   out=["w0", "w1"]),
    # contrib (MXNet 2.0's mx.nd.contrib front ends)
    "adamw": single("adamw_update", [A("weight"), A("grad", "big"), A("mean"), A("var", "p"), 0.8],
                    dict(lr=0.05, eta=0.7, beta1=0.8, beta2=0.99, epsilon=1e-6, wd=0.02, clip_gradient=0.3),
                    ns="contrib"),
    "adamw_nan_scale": single("adamw_update", [A("weight"), A("grad"), A("mean"), A("var", "p"), float("nan")],
                              dict(lr=0.05, eta=0.7), ns="contrib"),
    "mp_adamw": single("mp_adamw_update", [A("weight", dtype="float16"), A("grad", "big", "float16"), A("mean"),
                                           A("var", "p"), A("weight32"), 0.8],
                       dict(lr=0.05, eta=0.7, wd=0.02, clip_gradient=0.3), ns="contrib"),
    "adabelief": single("adabelief_update", [A("weight"), A("grad", "big"), A("mean"), A("var", "p"), 0.8],
                        dict(lr=0.05, eta=0.7, beta1=0.8, beta2=0.99, epsilon=1e-6, wd=0.02, clip_gradient=0.3),
                        ns="contrib"),
    "mp_adabelief": single("mp_adabelief_update", [A("weight", dtype="float16"), A("grad", "big", "float16"),
                                                   A("mean"), A("var", "p"), A("weight32"), 0.8],
                           dict(lr=0.05, eta=0.7, wd=0.02, clip_gradient=0.3), ns="contrib"),
}


def _lists(n, names, dtypes=None):
    dtypes = dtypes or {}
    return [[A(f"{k}{i}", "p" if k == "v" else "big" if k == "g" else "u", dtypes.get(k, "float32"))
             for i in range(n)] for k in names]


for _name, _op, _mp in (("multi_adamw", "multi_adamw_update", False), ("multi_mp_adamw", "multi_mp_adamw_update", True),
                        ("multi_adabelief", "multi_adabelief_update", False),
                        ("multi_mp_adabelief", "multi_mp_adabelief_update", True)):
    _keys = ["w", "g", "m", "v"] + (["w32_"] if _mp else [])
    _half = {"w": "float16", "g": "float16"} if _mp else {}
    CASES[_name] = single(_op, _lists(2, _keys, _half) + [0.8],
                          dict(lrs=(0.05, 0.1), wds=(0.02, 0.0), etas=(0.7, 1.0), beta1=0.8, clip_gradient=0.3),
                          out=["w0", "w1"], ns="contrib")
for _name, _op, _mp, _extra in (("multi_lamb", "multi_lamb_update", False, dict(lower_bound=0.2, upper_bound=2.0)),
                                ("multi_mp_lamb", "multi_mp_lamb_update", True, {}),
                                ("multi_lans", "multi_lans_update", False, dict(lower_bound=0.2)),
                                ("multi_mp_lans", "multi_mp_lans_update", True, {})):
    _keys = ["w", "g", "m", "v"] + (["w32_"] if _mp else [])
    _half = {"w": "float16", "g": "float16"} if _mp else {}
    CASES[_name] = single(_op, _lists(2, _keys, _half) + [[2, 5]],
                          dict(lrs=(0.05, 0.1), wds=(0.02, 0.0), beta1=0.8, beta2=0.99, epsilon=1e-6,
                               rescale_grad=0.8, clip_gradient=0.3, **_extra), out=["w0", "w1"], ns="contrib")


def make(spec, rng):
    kind, shape = spec["kind"], tuple(spec["shape"])
    if kind == "s":
        x = rng.uniform(-0.1, 0.1, shape)
    elif kind == "p":
        x = rng.uniform(0.1, 1.0, shape)
    elif kind == "big":
        x = rng.uniform(-1.5, 1.5, shape)
    else:
        x = rng.uniform(-1, 1, shape)
    return x.astype(spec["dtype"])


def arrays_of(args):
    for a in args:
        if isinstance(a, dict):
            yield a
        elif isinstance(a, list):
            yield from (x for x in a if isinstance(x, dict))


def main():
    saved, cases = {}, {}
    old = mx.__version__.startswith("1.")
    for name, case in CASES.items():
        if (case.get("ref") == "1.9") != old:
            continue
        rng = np.random.RandomState(sum(map(ord, name)))
        values = {spec["array"]: make(spec, rng) for spec in arrays_of(case["args"])}
        nds = {k: mx.nd.array(v, dtype=v.dtype) for k, v in values.items()}

        def resolve(a):
            if isinstance(a, dict):
                return nds[a["array"]]
            if isinstance(a, list) and a and isinstance(a[0], dict):
                return [nds[x["array"]] for x in a]
            return a
        args = [resolve(a) for a in case["args"]]
        out = case["out"]
        out_arg = None if out is None else nds[out] if isinstance(out, str) else [nds[o] for o in out]
        ns = mx.nd if case["ns"] == "nd" else mx.nd.contrib
        kwargs = {case.get("renames", {}).get(k, k) if old else k: v for k, v in case["kwargs"].items()}
        ret = getattr(ns, case["op"])(*args, out=out_arg, **kwargs)
        rets = ret if isinstance(ret, (list, tuple)) else [ret]
        for k, v in values.items():
            saved[f"{name}/in/{k}"] = v
            saved[f"{name}/after/{k}"] = nds[k].asnumpy()
        for i, r in enumerate(rets):
            saved[f"{name}/ret/{i}"] = r.asnumpy()
        cases[name] = dict(case, num_ret=len(rets), list_ret=isinstance(ret, (list, tuple)))
    suffix = "_1x" if old else ""
    np.savez_compressed(os.path.join(OUT, f"arrays{suffix}.npz"), **saved)
    with open(os.path.join(OUT, f"cases{suffix}.json"), "w") as f:
        json.dump({"mxnet": mx.__version__, "cases": cases}, f, sort_keys=True)


if __name__ == "__main__":
    main()
