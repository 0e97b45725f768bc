"""Files that lie, on the Gluon side: ``load_parameters``' dtype policy (MXNet 2.0's ``cast_dtype`` /
``dtype_source``) and corrupt ``.params``, model-structure and trainer-states files, which must give
an MXNetError naming the file and change nothing."""
from __future__ import annotations

import os
import pickle

import numpy as onp
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import mxjax as mx
from mxjax.base import MXNetError
from mxjax.gluon import nn

W64 = onp.arange(12, dtype=onp.float64).reshape(3, 4) / 7 + 1e-9   # needs float64 to round-trip
B64 = onp.array([0.1, 0.2, 0.3], dtype=onp.float64)


@pytest.fixture
def f64_file(tmp_path):
    path = str(tmp_path / "f64.params")
    mx.npx.save(path, {"weight": mx.np.array(W64, dtype="float64"), "bias": mx.np.array(B64, dtype="float64")})
    return path


def _net(**kwargs):
    net = nn.Dense(3, **kwargs)
    net.initialize(mx.init.Constant(5.0))
    return net


def test_float64_file_into_float32_net_is_refused(f64_file):
    net = _net(in_units=4)
    before = {k: v.data().asnumpy() for k, v in net.collect_params().items()}
    with pytest.raises(AssertionError, match="cast_dtype=True") as info:  # MXNet 2.0: AssertionError
        net.load_parameters(f64_file)
    assert isinstance(info.value, MXNetError) and f64_file in str(info.value)
    assert "float32" in str(info.value) and "float64" in str(info.value)
    # nothing was loaded: both parameters keep their values
    for k, v in net.collect_params().items():
        onp.testing.assert_array_equal(v.data().asnumpy(), before[k])
        assert v.data().dtype == onp.float32
    with pytest.raises(AssertionError, match="cast_dtype"):  # dtype_source alone changes nothing
        net.load_parameters(f64_file, dtype_source="saved")


def test_cast_dtype_current_converts_to_the_parameter_dtype(f64_file):
    net = _net(in_units=4)
    net.load_parameters(f64_file, cast_dtype=True)
    assert net.weight.dtype == onp.float32 and net.weight.data().dtype == onp.float32
    onp.testing.assert_array_equal(net.weight.data().asnumpy(), W64.astype(onp.float32))
    onp.testing.assert_array_equal(net.bias.data().asnumpy(), B64.astype(onp.float32))


@pytest.mark.parametrize("in_units", [4, 0])  # initialized, and deferred (shape from the file)
def test_cast_dtype_saved_takes_the_file_dtype(f64_file, in_units):
    net = _net(in_units=in_units)
    net.load_parameters(f64_file, cast_dtype=True, dtype_source="saved")
    assert net.weight.dtype == onp.float64 and net.weight.data().dtype == onp.float64
    onp.testing.assert_array_equal(net.weight.data().asnumpy(), W64)  # exact: no float32 on the way
    onp.testing.assert_array_equal(net.bias.data().asnumpy(), B64)


def test_bad_dtype_source_is_refused(f64_file):
    with pytest.raises(ValueError, match="dtype_source must be 'current' or 'saved'"):
        _net(in_units=4).load_parameters(f64_file, cast_dtype=True, dtype_source="file")


def test_matching_dtypes_need_no_cast(tmp_path):
    path = str(tmp_path / "p.params")
    src = _net(in_units=4)
    src.weight.set_data(mx.np.array(W64.astype(onp.float32)))
    src.save_parameters(path)
    net = _net(in_units=4)
    net.load_parameters(path)
    onp.testing.assert_array_equal(net.weight.data().asnumpy(), W64.astype(onp.float32))


def test_load_dict_follows_the_same_policy():
    arrays = {"weight": W64, "bias": B64}  # NumPy float64 values
    with pytest.raises(AssertionError, match="param_dict holds float64"):
        _net(in_units=4).load_dict(arrays)
    net = _net(in_units=4)
    net.load_dict(arrays, cast_dtype=True, dtype_source="saved")
    onp.testing.assert_array_equal(net.weight.data().asnumpy(), W64)


def test_missing_values_and_set_data_of_another_shape_are_assertion_errors_as_in_mxnet():
    """MXNet 2.0 asserts for a dict without a parameter's value (load_dict) and for set_data with another
    shape (checked there): the errors are AssertionErrors as well as MXNetErrors (ValueErrors)."""
    with pytest.raises(AssertionError, match=r"no values for parameters \['bias'\]") as info:
        _net(in_units=4).load_dict({"weight": onp.ones((3, 4), "float32")})
    assert isinstance(info.value, MXNetError) and isinstance(info.value, ValueError)
    net = _net(in_units=4)
    with pytest.raises(AssertionError, match=r"set_data with shape \(4, 4\), expected \(3, 4\)"):
        net.weight.set_data(mx.np.zeros((4, 4)))
    onp.testing.assert_array_equal(net.weight.data().asnumpy(), onp.full((3, 4), 5.0))  # unchanged


def test_shape_mismatch_names_the_file(tmp_path):
    path = str(tmp_path / "p.params")
    _net(in_units=5).save_parameters(path)
    with pytest.raises(AssertionError, match="shape") as info:
        _net(in_units=4).load_parameters(path)
    assert isinstance(info.value, MXNetError) and path in str(info.value)


def test_unnamed_list_is_not_parameters(tmp_path):
    path = str(tmp_path / "list.params")
    mx.nd.save(path, [mx.nd.ones(3)])
    with pytest.raises(ValueError, match="list.params holds an unnamed list"):
        _net(in_units=4).load_parameters(path)


# ----------------------------------------------------------------------------- corrupt files

def _good_params(tmp_path) -> tuple[bytes, dict]:
    net = _net(in_units=4)
    net.weight.set_data(mx.np.array(W64.astype(onp.float32)))
    path = tmp_path / "good.params"
    net.save_parameters(str(path))
    return path.read_bytes(), {k: v.data().asnumpy() for k, v in net.collect_params().items()}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_corrupt_params_load_or_raise_naming_the_file(tmp_path, data):
    good, values = _good_params(tmp_path)
    blob = bytearray(good)
    if data.draw(st.booleans(), label="truncate"):
        blob = blob[:data.draw(st.integers(0, len(blob)), label="length")]
    for _ in range(data.draw(st.integers(0, 4), label="flips")):
        if blob:
            at = data.draw(st.integers(0, len(blob) - 1), label="at")
            blob[at] = data.draw(st.integers(0, 255), label="byte")
    path = tmp_path / "bad.params"
    path.write_bytes(bytes(blob))
    net = _net(in_units=4)
    try:
        net.load_parameters(str(path))
    except MXNetError as err:
        assert str(path) in str(err)
        return
    loaded = {k: v.data().asnumpy() for k, v in net.collect_params().items()}
    assert {k: v.shape for k, v in loaded.items()} == {k: v.shape for k, v in values.items()}
    if bytes(blob) == good:
        for k in values:
            onp.testing.assert_array_equal(loaded[k], values[k])


def _loaders(tmp_path):
    """Every file loader of this part: (name, path it reads, load(path))."""
    net = _net(in_units=4)
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    return [
        ("load_parameters", "x.params", lambda p: net.load_parameters(p)),
        ("Block.load", "x-model.json", lambda p: net.load(p[:-len("-model.json")])),
        ("sym.load", "x.json", lambda p: mx.sym.load(p)),
        ("SymbolBlock.imports", "x-symbol.json", lambda p: mx.gluon.SymbolBlock.imports(p, ["data"])),
        ("Trainer.load_states", "x.states", lambda p: trainer.load_states(p)),
        ("serialization.load", "x.bin", lambda p: mx.serialization.load(p)),
    ]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blob=st.one_of(st.binary(max_size=300), st.sampled_from([b"\xff\xfe\x00", b"{", b"[]", b"null", b"{}",
                                                                b"\x12\x01" + b"\x00" * 6, b"PK\x03\x04junk"])))
def test_random_bytes_give_mxnet_error_naming_the_file(tmp_path, blob):
    for name, fname, load in _loaders(tmp_path):
        path = str(tmp_path / fname)
        with open(path, "wb") as f:
            f.write(blob)
        with pytest.raises(MXNetError) as info:
            load(path)
        assert path in str(info.value), (name, str(info.value))


def test_load_parameters_error_class_matches_mxnet(tmp_path):
    path = tmp_path / "junk.params"
    path.write_bytes(bytes(range(256)) * 3)  # MXNet 2.0: ValueError("... Invalid NDArray file format")
    with pytest.raises(ValueError, match="junk.params"):
        _net(in_units=4).load_parameters(str(path))


def test_missing_file_is_still_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        _net(in_units=4).load_parameters(str(tmp_path / "absent.params"))
    with pytest.raises(FileNotFoundError):
        mx.sym.load(str(tmp_path / "absent.json"))


def test_corrupt_trainer_states_leave_the_trainer_working(tmp_path):
    net = _net(in_units=4)
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    path = tmp_path / "bad.states"
    path.write_bytes(pickle.dumps(["not", "states"]))  # unpickles fine, but is not a states file
    with pytest.raises(MXNetError, match="Trainer.load_states: .*bad.states is not an optimizer states file"):
        trainer.load_states(str(path))
    assert trainer.learning_rate == 0.5
    with mx.autograd.record():
        loss = net(mx.np.ones((1, 4))).sum()
    loss.backward()
    trainer.step(1)  # weight 5 - 0.5 * d(sum)/dw (= 1 for every weight)
    onp.testing.assert_allclose(net.weight.data().asnumpy(), onp.full((3, 4), 4.5), rtol=1e-6)


def test_model_structure_of_wrong_shape_names_the_file(tmp_path):
    prefix = str(tmp_path / "m")
    _net(in_units=4).save(prefix)
    with open(prefix + "-model.json", "w") as f:
        f.write('{"dense0": ["not", "an", "object"]}')
    with pytest.raises(MXNetError, match="m-model.json: entry 'dense0' must be an object"):
        _net(in_units=4).load(prefix)
    assert os.path.exists(prefix + "-model.params")


def test_a_refused_file_loads_nothing(tmp_path):
    """The weight fits, the bias does not: the weight must not be half-loaded either."""
    path = str(tmp_path / "mixed.params")
    mx.npx.save(path, {"weight": mx.np.array(W64.astype(onp.float32)), "bias": mx.np.array(B64, dtype="float64")})
    net = _net(in_units=4)
    with pytest.raises(AssertionError, match="'bias'"):
        net.load_parameters(path)
    onp.testing.assert_array_equal(net.weight.data().asnumpy(), onp.full((3, 4), 5.0, onp.float32))


def test_imports_takes_the_saved_dtypes(tmp_path):
    """MXNet 2.0's SymbolBlock.imports loads with cast_dtype=True, dtype_source='saved'."""
    net = nn.HybridSequential()
    net.add(nn.Dense(3, in_units=4, dtype="float64"))
    net.initialize()
    net[0].weight.set_data(mx.np.array(W64, dtype="float64"))
    net.hybridize()
    x = onp.linspace(0, 1, 8).reshape(2, 4)
    net(mx.np.array(x, dtype="float64"))
    sym_file, params_file = net.export(str(tmp_path / "f64"))
    block = mx.gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    weight = block.collect_params()["0.weight"]
    assert weight.dtype == onp.float64
    onp.testing.assert_array_equal(weight.data().asnumpy(), W64)
    out = block(mx.np.array(x, dtype="float64")).asnumpy()
    onp.testing.assert_allclose(out, x @ W64.T, rtol=1e-12)  # NumPy float64 oracle (bias 0)


@pytest.mark.parametrize("load", [mx.nd.load, mx.npx.load])
def test_array_file_of_random_bytes_names_the_file(load, tmp_path):
    path = tmp_path / "junk.params"
    path.write_bytes(bytes(range(7, 207)))
    with pytest.raises(MXNetError, match="junk.params"):
        load(str(path))


def test_kvstore_optimizer_states_of_garbage_name_the_file_and_keep_the_states(tmp_path):
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
    kv.init(0, mx.nd.ones((2,)))
    kv.push(0, mx.nd.ones((2,)))
    good = str(tmp_path / "good.states")
    kv.save_optimizer_states(good)
    path = tmp_path / "bad.states"
    path.write_bytes(b"\x80\x04garbage")
    with pytest.raises(MXNetError, match="KVStore.load_optimizer_states: .*bad.states"):
        kv.load_optimizer_states(str(path))
    kv.load_optimizer_states(good)  # still usable
    kv.push(0, mx.nd.ones((2,)))
    out = mx.nd.zeros((2,))
    kv.pull(0, out=out)
    # two momentum-SGD steps from 1 with gradient 1: 1 - 0.1 = 0.9, then 0.9 - (0.9 * 0.1 + 0.1) = 0.71
    onp.testing.assert_allclose(out.asnumpy(), [0.71, 0.71], rtol=1e-6)
