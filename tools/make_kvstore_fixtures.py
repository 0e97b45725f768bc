"""Write the MXNet 2.0 kvstore fixtures that tests/test_kvstore.py compares mxjax against.

Run it with the Python of a real MXNet 2.0 (2.0.0b1, CPU build) install::

    python tools/make_kvstore_fixtures.py [OUTDIR]     # default: tests/fixtures/kvstore

It writes ``kvstore.npz`` (inputs and the values MXNet pulled back) and ``kvstore.json``
(types, ranks, capabilities, updater calls, and which misuses MXNet rejects).
"""
from __future__ import annotations

import json
import pathlib
import pickle
import sys
import tempfile

import mxnet as mx
import numpy as np

OUT = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else \
    pathlib.Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "kvstore"
RNG = np.random.default_rng(7)
SHAPE = (2, 3)
arrays: dict[str, np.ndarray] = {}
meta: dict = {}


def nd(x, dev=0):
    return mx.nd.array(x, ctx=mx.cpu(dev), dtype=x.dtype)


def pulled(kv, key, shape=SHAPE, dtype="float32"):
    out = mx.nd.zeros(shape, dtype=dtype)
    kv.pull(key, out=out)
    return out.asnumpy()


def raises(fn) -> str | None:
    """The exception type name MXNet raises (waiting for asynchronous errors), or None."""
    try:
        fn()
        mx.nd.waitall()
    except Exception as err:  # noqa: BLE001
        return type(err).__name__
    return None


# ---------------------------------------------------------------- types
meta["types"] = {}
for name in ["local", "device", "local_allreduce_cpu", "local_allreduce_device", "local_update_cpu", "LOCAL"]:
    kv = mx.kv.create(name)
    meta["types"][name] = [kv.type, kv.rank, kv.num_workers, kv.is_capable("optimizer"), kv.is_capable("OPTIMIZER")]
ts = mx.kv.create("teststore")
meta["teststore"] = [ts.type, ts.rank, ts.num_workers, ts.is_capable("optimizer")]
meta["registry"] = sorted(mx.kv.KVStoreBase.kv_registry)

# ---------------------------------------------------------------- push / pull without an updater
g = [RNG.normal(size=SHAPE).astype("float32") for _ in range(3)]
for i, x in enumerate(g):
    arrays[f"g{i}"] = x
kv = mx.kv.create("local")
kv.init(3, nd(g[0]))
arrays["init_pull"] = pulled(kv, 3)
kv.push(3, [nd(g[1]), nd(g[2])])
arrays["push_list_pull"] = pulled(kv, 3)
kv.push([3, 3], [nd(g[0]), nd(g[1])])  # one key twice in one call: summed
arrays["push_dup_pull"] = pulled(kv, 3)
c = nd(g[2])
kv.pushpull(3, c)  # in place
arrays["pushpull_inplace"] = c.asnumpy()
d = mx.nd.zeros(SHAPE)
kv.pushpull(3, [nd(g[0]), nd(g[1])], out=[d])
arrays["pushpull_out"] = d.asnumpy()
e = mx.nd.zeros(SHAPE)
kv.broadcast(9, nd(g[1]), out=e)
arrays["broadcast_out"] = e.asnumpy()
kv.push(3, mx.nd.array(g[0], dtype="float64"))  # cast to the stored dtype
arrays["push_f64_pull"] = pulled(kv, 3, dtype="float64")

kv = mx.kv.create("device")
kv.init(["w", "b"], [nd(g[0]), nd(g[1])])
outs = [[mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE)], [mx.nd.zeros(SHAPE)]]
kv.push(["w", "b"], [[nd(g[1]), nd(g[2], 1)], nd(g[0])])
kv.pull(["w", "b"], out=outs)
arrays["str_w0"], arrays["str_w1"], arrays["str_b"] = (o.asnumpy() for o in outs[0] + outs[1])
x = mx.np.zeros(SHAPE)
kv.pull("w", out=x)
meta["np_pull_class"] = type(x).__name__
arrays["np_pull"] = x.asnumpy()

# ---------------------------------------------------------------- a custom updater
calls = []


def update(key, inp, stored):
    calls.append([key.decode() if isinstance(key, bytes) else key, type(key).__name__, type(inp).__name__,
                  type(stored).__name__])
    stored += inp * 2


kv = mx.kv.create("local")
kv.init([5, 1], [nd(g[0]), nd(g[1])])
kv._set_updater(update)
kv.push([5, 1, 5], [nd(g[2]), nd(g[0]), nd(g[1])])
arrays["upd_5"], arrays["upd_1"] = pulled(kv, 5), pulled(kv, 1)
kv = mx.kv.create("local")
kv.init(["s", "r"], [nd(g[0]), nd(g[1])])
kv._set_updater(update)
kv.push(["r", "s"], [nd(g[2]), nd(g[0])])
arrays["upd_s"], arrays["upd_r"] = pulled(kv, "s"), pulled(kv, "r")
meta["updater_calls"] = calls

# ---------------------------------------------------------------- set_optimizer
OPTIMIZERS = {"sgd": {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01}, "adam": {"learning_rate": 0.01},
              "rmsprop": {"learning_rate": 0.01, "centered": True}}
meta["optimizers"] = OPTIMIZERS
meta["opt_state_keys"] = {}
for oname, kw in OPTIMIZERS.items():
    kv = mx.kv.create("device")
    kv.init(0, nd(g[0]))
    kv.set_optimizer(mx.optimizer.create(oname, **kw))
    for step in range(3):
        kv.push(0, [nd(g[1] * (step + 1)), nd(g[2], 1)])
    arrays[f"opt_{oname}"] = pulled(kv, 0)
    with tempfile.TemporaryDirectory() as tmp:
        kv.save_optimizer_states(f"{tmp}/s")
        meta["opt_state_keys"][oname] = sorted(pickle.loads(open(f"{tmp}/s", "rb").read()))

# ---------------------------------------------------------------- gradient compression
gc = [np.array([0.3, -0.3, 0.6, -0.7, 0.1, 2.0], "float32"), np.array([0.2, -0.25, 0.1, 0.0, -1.0, 0.4], "float32")]
arrays["gc0"], arrays["gc1"] = gc
for ctype in ["2bit", "1bit"]:
    for ndev in [1, 2]:
        kv = mx.kv.create("device")
        kv.set_gradient_compression({"type": ctype, "threshold": 0.5})
        kv.init(0, mx.nd.zeros((6,)))
        steps = []
        for _ in range(3):
            kv.push(0, [nd(gc[dev], dev) for dev in range(ndev)])
            steps.append(pulled(kv, 0, (6,)))
        arrays[f"gc_{ctype}_{ndev}"] = np.stack(steps)

# ---------------------------------------------------------------- what MXNet rejects
errors = {}
errors["create_int"] = raises(lambda: mx.kv.create(3))
errors["create_horovod"] = raises(lambda: mx.kv.create("horovod"))
errors["create_byteps"] = raises(lambda: mx.kv.create("byteps"))
errors["create_nccl"] = raises(lambda: mx.kv.create("nccl"))
kv = mx.kv.create("local")
kv.init(1, mx.nd.ones(SHAPE))
errors["pull_uninit"] = raises(lambda: kv.pull(2, out=mx.nd.zeros(SHAPE)))
errors["push_uninit"] = raises(lambda: kv.push(4, mx.nd.ones(SHAPE)))
errors["init_twice"] = raises(lambda: kv.init(1, mx.nd.ones(SHAPE)))
errors["broadcast_twice"] = raises(lambda: kv.broadcast(1, mx.nd.ones(SHAPE), out=mx.nd.zeros(SHAPE)))
errors["pull_no_out"] = raises(lambda: kv.pull(1))
errors["pull_shape"] = raises(lambda: kv.pull(1, out=mx.nd.zeros((3, 3))))
errors["mixed_keys"] = raises(lambda: kv.init("a", mx.nd.ones(SHAPE)))
errors["mixed_keys_one_call"] = raises(lambda: kv.init([7, "b"], [mx.nd.ones(SHAPE)] * 2))
errors["float_key"] = raises(lambda: kv.init(3.5, mx.nd.ones(SHAPE)))
errors["len_mismatch"] = raises(lambda: kv.init([7, 8], [mx.nd.ones(SHAPE)]))
errors["capability"] = raises(lambda: kv.is_capable("foo"))
errors["save_no_updater"] = raises(lambda: kv.save_optimizer_states("never_written"))
errors["gc_local"] = raises(lambda: kv.set_gradient_compression({"type": "2bit"}))
errors["row_sparse_pull_dense"] = raises(lambda: kv.row_sparse_pull(1, out=mx.nd.zeros(SHAPE),
                                                                    row_ids=mx.nd.array([0])))
dkv = mx.kv.create("device")
errors["gc_unknown"] = raises(lambda: dkv.set_gradient_compression({"type": "3bit"}))
errors["gc_no_type"] = raises(lambda: dkv.set_gradient_compression({"threshold": 0.5}))
errors["gc_threshold"] = raises(lambda: dkv.set_gradient_compression({"type": "2bit", "threshold": -1}))
errors["gc_not_dict"] = raises(lambda: dkv.set_gradient_compression("2bit"))
errors["gc_unknown_key"] = raises(lambda: dkv.set_gradient_compression({"type": "2bit", "foo": 1}))
errors["gc_1bit_negative"] = raises(lambda: dkv.set_gradient_compression({"type": "1bit", "threshold": -1}))
meta["errors"] = errors
meta["barrier"] = [kv._barrier(), kv._send_command_to_servers(0, "")]

# the profiler's kvstore handle: set by create
meta["profiler_handle_is_kv_handle"] = mx.profiler.profiler_kvstore_handle is dkv.handle

OUT.mkdir(parents=True, exist_ok=True)
np.savez(OUT / "kvstore.npz", **arrays)
(OUT / "kvstore.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
print(f"wrote {len(arrays)} arrays and {len(meta)} entries to {OUT}")
