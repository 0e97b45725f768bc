"""mx.kvstore (mx.kv) and mx.kvstore_server against MXNet 2.0.0b1 (fixtures written by
tools/make_kvstore_fixtures.py) and NumPy, plus the Trainer's use of a KVStore object."""
import builtins
import json
import pathlib
import pickle
import sys
import types
import warnings

import numpy as onp
import pytest

import mxjax as mx
from mxjax import autograd, gluon, profiler
from mxjax.base import MXNetError

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures" / "kvstore"
META = json.loads((FIXTURES / "kvstore.json").read_text())
ARR = dict(onp.load(FIXTURES / "kvstore.npz"))
SHAPE = (2, 3)
G = [ARR["g0"], ARR["g1"], ARR["g2"]]


@pytest.fixture(autouse=True)
def _restore_profiler_handle():
    handle = profiler.profiler_kvstore_handle
    yield
    profiler.set_kvstore_handle(handle)


def nd(x, dev=0):
    return mx.nd.array(x, ctx=mx.cpu(dev), dtype=x.dtype)


def pulled(kv, key, shape=SHAPE, dtype="float32"):
    out = mx.nd.zeros(shape, dtype=dtype)
    kv.pull(key, out=out)
    return out.asnumpy()


def close(a, b):
    onp.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- create, types, registry


def test_module_names():
    assert mx.kv is mx.kvstore
    assert mx.kvstore_server is mx.kvstore.kvstore_server
    assert mx.kvstore.create is mx.kvstore.base.create
    assert isinstance(mx.kv.create(), mx.kvstore.KVStore)


@pytest.mark.parametrize("name", sorted(META["types"]))
def test_types_match_mxnet(name):
    kv = mx.kv.create(name)
    assert [kv.type, kv.rank, kv.num_workers, kv.is_capable("optimizer"), kv.is_capable("OPTIMIZER")] == \
        META["types"][name]
    assert isinstance(kv, mx.kv.KVStoreBase)


def test_registry_and_teststore():
    assert set(META["registry"]) <= set(mx.kv.KVStoreBase.kv_registry)
    ts = mx.kv.create("TestStore")
    assert [ts.type, ts.rank, ts.num_workers, ts.is_capable("optimizer")] == META["teststore"]
    with pytest.raises(ValueError, match="Unknown capability: foo"):
        ts.is_capable("foo")
    out = mx.nd.zeros(SHAPE)
    ts.broadcast(0, nd(G[0]), out=[out])
    close(out.asnumpy(), G[0])
    a, b = nd(G[1]), nd(G[2])
    ts.pushpull(0, [a, b])  # in place: each gets the sum
    close(a.asnumpy(), G[1] + G[2])
    close(b.asnumpy(), G[1] + G[2])
    ts.pushpull(0, nd(G[0]), out=out)
    close(out.asnumpy(), G[0])
    for method in (ts.set_optimizer, ts.load_optimizer_states):
        with pytest.raises(NotImplementedError):
            method(None)


def test_register_custom_store_and_override_warning():
    @mx.kvstore.KVStoreBase.register
    class MyFancyStore(mx.kvstore.KVStoreBase):
        @property
        def type(self):
            return "fancy"

    try:
        kv = mx.kv.create("MyFancyStore")
        assert type(kv) is MyFancyStore and kv.type == "fancy"
        with pytest.warns(UserWarning, match="is overriding existing kvstore"):
            mx.kvstore.KVStoreBase.register(MyFancyStore)
        with pytest.raises(NotImplementedError):
            kv.rank  # noqa: B018  (the base class leaves it abstract)
        with pytest.raises(NotImplementedError):
            kv.pushpull(0, nd(G[0]))
    finally:
        del mx.kvstore.KVStoreBase.kv_registry["myfancystore"]
    with pytest.raises(AssertionError):
        mx.kvstore.KVStoreBase.register(3)


def test_create_rejects_bad_names():
    assert META["errors"]["create_int"] == "TypeError"
    with pytest.raises(TypeError, match="name must be a string"):
        mx.kv.create(3)
    with pytest.raises(ValueError, match="unknown kvstore type 'devcie'.*'local', 'device'"):
        mx.kv.create("devcie")
    for name in ("dist_sync", "dist_device_sync", "dist_async", "dist"):
        with pytest.raises(MXNetError, match=f"'{name}'.*DMLC_ROLE.*one process.*'local' or 'device'"):
            mx.kv.create(name)
    with pytest.raises(MXNetError, match="USE_NCCL=1.*use 'device'"):
        mx.kv.create("nccl")


# ---------------------------------------------------------------- push / pull


def test_push_pull_without_updater_matches_mxnet():
    kv = mx.kv.create("local")
    kv.init(3, nd(G[0]))
    close(pulled(kv, 3), ARR["init_pull"])
    kv.push(3, [nd(G[1]), nd(G[2])], priority=2)
    close(pulled(kv, 3), ARR["push_list_pull"])
    close(ARR["push_list_pull"], G[1] + G[2])
    kv.push([3, 3], [nd(G[0]), nd(G[1])])
    close(pulled(kv, 3), ARR["push_dup_pull"])
    c = nd(G[2])
    kv.pushpull(3, c)
    close(c.asnumpy(), ARR["pushpull_inplace"])
    d = mx.nd.zeros(SHAPE)
    kv.pushpull(3, [nd(G[0]), nd(G[1])], out=[d])
    close(d.asnumpy(), ARR["pushpull_out"])
    e = mx.nd.zeros(SHAPE)
    kv.broadcast(9, nd(G[1]), out=e)
    close(e.asnumpy(), ARR["broadcast_out"])
    kv.push(3, mx.nd.array(G[0], dtype="float64"))
    got = mx.nd.zeros(SHAPE, dtype="float64")
    kv.pull(3, out=got)
    assert got.dtype == onp.float64
    close(got.asnumpy(), ARR["push_f64_pull"])


def test_str_keys_lists_and_np_arrays():
    kv = mx.kv.create("device")
    kv.init(["w", "b"], [nd(G[0]), nd(G[1])])
    outs = [[mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE)], [mx.nd.zeros(SHAPE)]]
    assert kv.push(["w", "b"], [[nd(G[1]), nd(G[2], 1)], nd(G[0])]) is None
    assert kv.pull(["w", "b"], out=outs) is None
    for got, want in zip([o.asnumpy() for o in outs[0] + outs[1]], [ARR["str_w0"], ARR["str_w1"], ARR["str_b"]]):
        close(got, want)
    x = mx.np.zeros(SHAPE)
    kv.pull("w", out=x)
    assert type(x).__name__ == META["np_pull_class"] and isinstance(x, mx.np.ndarray)
    close(x.asnumpy(), ARR["np_pull"])
    kv.init("n", mx.np.array(G[0]))  # np values in, np and nd out
    kv.pushpull("n", [mx.np.array(G[1]), mx.np.array(G[2])])
    kv.pull("n", out=x)
    close(x.asnumpy(), G[1] + G[2])


def test_stored_value_is_a_copy():
    kv = mx.kv.create("local")
    a = nd(G[0])
    kv.init(0, a)
    a[:] = 5
    close(pulled(kv, 0), G[0])
    out = mx.nd.zeros(SHAPE)
    kv.pull(0, out=out)
    out += 1  # writing the pulled array leaves the store alone
    close(pulled(kv, 0), G[0])


# ---------------------------------------------------------------- updaters and optimizers


def test_custom_updater_matches_mxnet():
    calls = []

    def update(key, inp, stored):
        calls.append([key.decode() if isinstance(key, bytes) else key, type(key).__name__, type(inp).__name__,
                      type(stored).__name__])
        stored += inp * 2

    kv = mx.kv.create("local")
    kv.init([5, 1], [nd(G[0]), nd(G[1])])
    kv._set_updater(update)
    kv.push([5, 1, 5], [nd(G[2]), nd(G[0]), nd(G[1])])
    close(pulled(kv, 5), ARR["upd_5"])
    close(pulled(kv, 1), ARR["upd_1"])
    close(ARR["upd_5"], G[0] + 2 * (G[2] + G[1]))
    kv = mx.kv.create("local")
    kv.init(["s", "r"], [nd(G[0]), nd(G[1])])
    kv._set_updater(update)
    kv.push(["r", "s"], [nd(G[2]), nd(G[0])])
    close(pulled(kv, "s"), ARR["upd_s"])
    close(pulled(kv, "r"), ARR["upd_r"])
    assert calls == META["updater_calls"]  # int keys ascending, str keys (as bytes) in init order
    with pytest.raises(TypeError, match="must be callable"):
        kv._set_updater(3)


@pytest.mark.parametrize("oname", sorted(META["optimizers"]))
def test_set_optimizer_matches_mxnet_and_the_optimizer(oname, tmp_path):
    kw = META["optimizers"][oname]
    kv = mx.kv.create("device")
    kv.init(0, nd(G[0]))
    kv.set_optimizer(mx.optimizer.create(oname, **kw))
    for step in range(3):
        kv.push(0, [nd(G[1] * (step + 1)), nd(G[2], 1)])
    close(pulled(kv, 0), ARR[f"opt_{oname}"])
    updater, w = mx.optimizer.get_updater(mx.optimizer.create(oname, **kw)), nd(G[0])
    for step in range(3):
        updater(0, nd(G[1] * (step + 1) + G[2]), w)
    close(pulled(kv, 0), w.asnumpy())
    kv.save_optimizer_states(str(tmp_path / "s"))
    assert sorted(pickle.loads((tmp_path / "s").read_bytes())) == META["opt_state_keys"][oname]


def test_save_load_optimizer_states(tmp_path):
    def store(weight, states=None):
        kv = mx.kv.create("local")
        kv.init("w", nd(weight))
        kv.set_optimizer(mx.optimizer.Adam(learning_rate=0.1))
        if states:
            kv.load_optimizer_states(states)
        return kv

    kv = store(G[0])
    kv.push("w", nd(G[1]))
    after_one = pulled(kv, "w")
    kv.save_optimizer_states(str(tmp_path / "st"), dump_optimizer=True)
    kept, optimizer = pickle.loads((tmp_path / "st").read_bytes())
    assert list(kept) == ["w"] and isinstance(optimizer, mx.optimizer.Adam)
    kv.push("w", nd(G[2]))
    resumed, fresh = store(after_one, str(tmp_path / "st")), store(after_one)
    resumed.push("w", nd(G[2]))
    fresh.push("w", nd(G[2]))
    close(pulled(resumed, "w"), pulled(kv, "w"))  # Adam's moments came back with the states
    assert not onp.allclose(pulled(fresh, "w"), pulled(kv, "w"))
    with pytest.raises(AssertionError, match="no optimizer"):
        mx.kv.create().load_optimizer_states(str(tmp_path / "st"))


def test_set_optimizer_rejects_non_optimizer():
    with pytest.raises(TypeError, match="expected an mx.optimizer.Optimizer, got str"):
        mx.kv.create().set_optimizer("sgd")


# ---------------------------------------------------------------- gradient compression


def _numpy_compression(ctype, grads, steps, threshold=0.5):
    residual = [onp.zeros_like(g) for g in grads]
    out = []
    for _ in range(steps):
        total = onp.zeros_like(grads[0])
        for i, g in enumerate(grads):
            r = residual[i] + g
            if ctype == "2bit":
                q = onp.where(r >= threshold, threshold, onp.where(r <= -threshold, -threshold, 0)).astype(r.dtype)
            else:
                q = onp.where(r > threshold, 1, -1).astype(r.dtype)
            residual[i] = r - q
            total = total + q
        out.append(total)
    return onp.stack(out)


@pytest.mark.parametrize("ctype", ["2bit", "1bit"])
@pytest.mark.parametrize("ndev", [1, 2])
def test_gradient_compression_matches_mxnet(ctype, ndev):
    gc = [ARR["gc0"], ARR["gc1"]]
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": ctype, "threshold": 0.5})
    kv.init(0, mx.nd.zeros((6,)))
    steps = []
    for _ in range(3):
        kv.push(0, [nd(gc[d], d) for d in range(ndev)])
        steps.append(pulled(kv, 0, (6,)))
    close(onp.stack(steps), ARR[f"gc_{ctype}_{ndev}"])
    close(onp.stack(steps), _numpy_compression(ctype, gc[:ndev], 3))


def test_gradient_compression_arguments():
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "foo": 1})  # unknown keys are accepted, as in MXNet
    kv.set_gradient_compression({"type": "1bit", "threshold": -1})
    with pytest.raises(MXNetError, match="Unknown type for gradient compression 3bit"):
        kv.set_gradient_compression({"type": "3bit"})
    with pytest.raises(MXNetError, match="Required parameter type"):
        kv.set_gradient_compression({"threshold": 0.5})
    with pytest.raises(MXNetError, match="threshold must be greater than 0 for two bit"):
        kv.set_gradient_compression({"type": "2bit", "threshold": -1})
    with pytest.raises(MXNetError, match="threshold expect float but value='abc'"):
        kv.set_gradient_compression({"type": "2bit", "threshold": "abc"})
    with pytest.raises(AssertionError, match="unexpected type for param_dict"):
        kv.set_gradient_compression("2bit")
    with pytest.raises(MXNetError, match="not supported for this type of kvstore"):
        mx.kv.create("local").set_gradient_compression({"type": "2bit"})


# ---------------------------------------------------------------- misuse


def _error_cases():
    kv = mx.kv.create("local")
    kv.init(1, mx.nd.ones(SHAPE))
    dkv = mx.kv.create("device")
    return {
        "pull_uninit": (lambda: kv.pull(2, out=mx.nd.zeros(SHAPE)), "key 2 has not been inited"),
        "push_uninit": (lambda: kv.push(4, mx.nd.ones(SHAPE)), "key 4 has not been inited"),
        "init_twice": (lambda: kv.init(1, mx.nd.ones(SHAPE)), "duplicate init of key 1"),
        "broadcast_twice": (lambda: kv.broadcast(1, mx.nd.ones(SHAPE), out=mx.nd.zeros(SHAPE)), "duplicate init"),
        "pull_no_out": (lambda: kv.pull(1), "out is required"),
        "pull_shape": (lambda: kv.pull(1, out=mx.nd.zeros((3, 3))), r"out for key 1 has shape \(3, 3\), but the "
                                                                       r"stored value has shape \(2, 3\)"),
        "mixed_keys": (lambda: kv.init("a", mx.nd.ones(SHAPE)), "Mixed key types are not allowed: this store "
                                                               "uses int keys, got str key 'a'"),
        "mixed_keys_one_call": (lambda: kv.init([7, "b"], [mx.nd.ones(SHAPE)] * 2), "inconsistent types of keys"),
        "float_key": (lambda: kv.init(3.5, mx.nd.ones(SHAPE)), "unexpected type for keys: <class 'float'>"),
        "len_mismatch": (lambda: kv.init([7, 8], [mx.nd.ones(SHAPE)]), "2 keys need a list of 2 values"),
        "capability": (lambda: kv.is_capable("foo"), "Unknown capability: foo"),
        "save_no_updater": (lambda: kv.save_optimizer_states("never_written"), "no optimizer"),
        "gc_local": (lambda: kv.set_gradient_compression({"type": "2bit"}), "not supported"),
        "row_sparse_pull_dense": (lambda: kv.row_sparse_pull(1, out=mx.nd.zeros(SHAPE), row_ids=mx.nd.array([0])),
                                  "row_sparse_pull: mxjax arrays are dense only"),
        "gc_unknown": (lambda: dkv.set_gradient_compression({"type": "3bit"}), "3bit"),
    }


@pytest.mark.parametrize("case", sorted(_error_cases()))
def test_misuse_raises_what_mxnet_raises(case):
    fn, message = _error_cases()[case]
    expected = MXNetError if META["errors"][case] == "MXNetError" else getattr(builtins, META["errors"][case])
    with pytest.raises(expected, match=message) as info:
        fn()
    assert isinstance(info.value, MXNetError) or case == "capability"


def test_push_shape_mismatch_is_an_error():
    # MXNet silently replaces the stored (2, 3) value with the (3, 3) one here; mxjax says what was expected
    kv = mx.kv.create("local")
    kv.init(0, mx.nd.ones(SHAPE))
    with pytest.raises(ValueError, match=r"push: value for key 0 has shape \(3, 3\), but the stored value has "
                                         r"shape \(2, 3\)"):
        kv.push(0, mx.nd.ones((3, 3)))
    with pytest.raises(ValueError, match="push: value for key 0 has shape"):
        kv.pushpull(0, [mx.nd.ones(SHAPE), mx.nd.ones((3,))])
    close(pulled(kv, 0), onp.ones(SHAPE))
    with pytest.raises(TypeError, match="value for key 0 must be an NDArray or a list of NDArrays"):
        kv.push(0, 3.0)


def test_single_worker_calls():
    kv = mx.kv.create("local")
    assert [kv._barrier(), kv._send_command_to_servers(0, "")] == META["barrier"]
    with pytest.raises(TypeError, match="head must be an int"):
        kv._send_command_to_servers("x", "")
    assert mx.kvstore.kvstore._get_kvstore_server_command_type("kController") == 0


# ---------------------------------------------------------------- Horovod, BytePS


def test_horovod_and_byteps_without_their_libraries(capsys):
    assert META["errors"]["create_horovod"] == META["errors"]["create_byteps"] == "ModuleNotFoundError"
    with pytest.raises(ModuleNotFoundError, match="horovod"):
        mx.kv.create("horovod")
    with pytest.raises(ModuleNotFoundError, match="byteps"):
        mx.kv.create("byteps")
    assert "Did not find BytePS library. Please install BytePS first" in capsys.readouterr().out
    assert mx.kv.Horovod.is_capable("optimizer") is False and mx.kv.BytePS.is_capable("optimizer") is False


class _FakeHorovod(types.ModuleType):
    def __init__(self):
        super().__init__("horovod.mxnet")
        self.calls = []

    def init(self):
        self.calls.append("init")

    def broadcast(self, tensor, root_rank, name, priority):
        self.calls.append(("broadcast", root_rank, name, priority))
        return tensor * 1

    def allreduce(self, v, average, name, priority):
        self.calls.append(("allreduce", average, name))
        return v * 4  # as if four workers pushed the same value

    def allreduce_(self, v, average, name, priority):
        v[:] = v * 4

    def rank(self):
        return 2

    def local_rank(self):
        return 1

    def size(self):
        return 4


def test_horovod_store_through_a_fake_library(monkeypatch):
    hvd = _FakeHorovod()
    monkeypatch.setitem(sys.modules, "horovod", types.ModuleType("horovod"))
    monkeypatch.setitem(sys.modules, "horovod.mxnet", hvd)
    kv = mx.kv.create("horovod")
    assert kv.type == "horovod" and (kv.rank, kv.local_rank, kv.num_workers) == (2, 1, 4)
    out = mx.nd.zeros(SHAPE)
    kv.broadcast(7, nd(G[0]), out=out)
    close(out.asnumpy(), G[0])
    a = nd(G[1])
    kv.pushpull("k", a)
    close(a.asnumpy(), 4 * G[1])
    kv.pushpull("k", [nd(G[2])], out=[out])
    close(out.asnumpy(), 4 * G[2])
    assert hvd.calls == ["init", ("broadcast", 0, "7", 0), ("allreduce", False, "k")]
    assert [kv.set_optimizer(None), kv.save_optimizer_states("x"), kv.load_optimizer_states("x")] == [None] * 3


def test_byteps_store_through_a_fake_library(monkeypatch):
    bps = types.SimpleNamespace(init=lambda: None, rank=lambda: 0, local_rank=lambda: 0, size=lambda: 3)
    monkeypatch.setitem(sys.modules, "byteps", types.ModuleType("byteps"))
    monkeypatch.setitem(sys.modules, "byteps.mxnet", bps)
    kv = mx.kv.create("byteps")
    assert (kv.type, kv.rank, kv.local_rank, kv.num_workers) == ("byteps", 0, 0, 3)
    with pytest.raises(AssertionError, match="only support GPU context for pushpull"):
        kv.pushpull(0, nd(G[0]))
    with pytest.raises(AssertionError, match="only support GPU context for broadcast"):
        kv.broadcast(0, [nd(G[0])], out=mx.nd.zeros(SHAPE))
    for call in (lambda: kv.set_optimizer(None), lambda: kv.save_optimizer_states("x"),
                 lambda: kv.load_optimizer_states("x")):
        with pytest.raises(NotImplementedError):
            call()


# ---------------------------------------------------------------- kvstore_server and the profiler


def test_kvstore_server(capsys, monkeypatch):
    kv = mx.kv.create("local")
    server = mx.kvstore_server.KVStoreServer(kv)
    assert server.kvstore is kv and server.handle is kv.handle and server.init_logginig is False
    assert server.run() is None  # no server loop for a local store (MXNet returns at once too)
    controller = server._controller()
    controller(1, b"hello", None)
    assert "server 0, unknown command (1, b'hello')" in capsys.readouterr().out
    controller(0, pickle.dumps(mx.optimizer.SGD(learning_rate=0.5), 0), None)
    assert kv._updater.optimizer.learning_rate == 0.5
    assert mx.kvstore_server.create is mx.kv.create
    mx.kvstore_server._init_kvstore_server_module()  # a worker: nothing to start
    monkeypatch.setenv("DMLC_ROLE", "server")
    with pytest.raises(MXNetError, match="launched as a kvstore server.*single process"):
        mx.kvstore_server._init_kvstore_server_module()


def test_profiler_kvstore_handle():
    profiler.set_kvstore_handle(None)
    with pytest.raises(MXNetError, match="KVStoreHandle passed to the profiler is null"):
        profiler.set_state("run", profile_process="server")
    kv = mx.kv.create("device")
    assert META["profiler_handle_is_kv_handle"] and profiler.profiler_kvstore_handle is kv.handle
    with pytest.warns(UserWarning, match="no server process to profile"):
        profiler.set_config(profile_process="server", filename="never_written.json")
    with pytest.warns(UserWarning, match="no server process to profile"):
        profiler.pause(profile_process="server")
    assert profiler._state.config["filename"] != "never_written.json" and not profiler._state.paused


# ---------------------------------------------------------------- gluon.Trainer with a KVStore object


def _train(kvstore, steps=3, **kwargs):
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize(mx.init.Constant(0.5))
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.1}, kvstore=kvstore, **kwargs)
    x = mx.np.array(onp.arange(12, dtype="float32").reshape(4, 3) / 10)
    for _ in range(steps):
        with autograd.record():
            loss = (net(x) ** 2).sum()
        loss.backward()
        trainer.step(4)
    return net, trainer


def test_trainer_with_a_kvstore_object(tmp_path):
    reference, _ = _train("device")
    kv = mx.kv.create("local")
    net, trainer = _train(kv)
    assert trainer._update_on_kvstore is True
    close(net.weight.data().asnumpy(), reference.weight.data().asnumpy())
    close(pulled(kv, 0, (2, 3)), net.weight.data().asnumpy())  # the store holds the updated weights
    with pytest.raises(MXNetError, match="update\\(\\) when parameters are updated on kvstore"):
        trainer.update(4)
    trainer.save_states(str(tmp_path / "t"))
    trainer.load_states(str(tmp_path / "t"))
    assert trainer.optimizer is kv._updater.optimizer
    for store, kwargs in ((mx.kv.create("teststore"), {}), (mx.kv.create("device"), {"update_on_kvstore": False})):
        net, trainer = _train(store, **kwargs)
        assert trainer._update_on_kvstore is False
        close(net.weight.data().asnumpy(), reference.weight.data().asnumpy())
    with pytest.raises(ValueError, match="Please set update_on_kvstore=False"):
        _train(mx.kv.create("teststore"), steps=1, update_on_kvstore=True)
    with pytest.raises(TypeError, match="kvstore must be KVStore, str or None"):
        gluon.Trainer(gluon.nn.Dense(2, in_units=3).collect_params(), "sgd", kvstore=3)


def test_no_warnings_from_plain_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kv = mx.kv.create("device")
        kv.init(0, mx.nd.ones(SHAPE))
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1))
        kv.pushpull(0, [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE)])
