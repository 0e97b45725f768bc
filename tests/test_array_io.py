"""mx.nd.save/load and npx.save/savez/load: MXNet 1.9.1's fixtures decode and re-save byte for byte."""
import json
import pathlib

import numpy as onp
import pytest

import mxjax as mx

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures" / "formats"
REWRITABLE = ["dict_mixed", "list_mixed", "single", "empty", "np_semantics"]


def _expected(name):
    meta = json.loads((FIXTURES / "ndarray" / f"{name}.expected.json").read_text())
    values = onp.load(FIXTURES / "ndarray" / f"{name}.expected.npz")
    return meta, values



@pytest.mark.parametrize("name", REWRITABLE + ["legacy_v0", "legacy_v1", "sparse"])
def test_fixture_values(name):
    meta, values = _expected(name)
    loaded = mx.nd.load(str(FIXTURES / "ndarray" / f"{name}.params"))
    assert isinstance(loaded, dict) == bool(meta["has_names"])
    items = list(loaded.values()) if isinstance(loaded, dict) else loaded
    assert len(items) == meta["count"]
    for entry, array in zip(meta["entries"], items):
        assert isinstance(array, mx.nd.NDArray)
        assert array.shape == tuple(entry["shape"])
        want = values[entry["npz_key"]]
        got = array.asnumpy()
        if entry["dtype"] == "bfloat16":
            got = got.view(onp.uint16)
        else:
            assert got.dtype == onp.dtype(entry["dtype"])
        onp.testing.assert_array_equal(got, want)



@pytest.mark.parametrize("name", REWRITABLE)
def test_fixtures_resave_to_mxnet_bytes(name, tmp_path):
    path = FIXTURES / "ndarray" / f"{name}.params"
    out = tmp_path / "out.params"
    mx.nd.save(str(out), mx.nd.load(str(path)))
    assert out.read_bytes() == path.read_bytes()



def test_v3_records_load_as_np_arrays():
    loaded = mx.nd.load(str(FIXTURES / "ndarray" / "np_semantics.params"))
    assert all(type(v) is mx.np.ndarray for v in loaded.values())
    assert any(v.ndim == 0 for v in loaded.values())
    via_npx = mx.npx.load(str(FIXTURES / "ndarray" / "np_semantics.params"))
    assert set(via_npx) == set(loaded)


def test_legacy_round_trip(tmp_path):
    data = {"w": mx.nd.array(onp.arange(6).reshape(2, 3)), "b": mx.nd.array(onp.ones(3), dtype="int64")}
    mx.nd.save(str(tmp_path / "a.params"), data)
    back = mx.nd.load(str(tmp_path / "a.params"))
    assert list(back) == ["w", "b"] and back["b"].dtype == onp.int64
    mx.nd.save(str(tmp_path / "l.params"), [data["w"]])
    assert len(mx.nd.load(str(tmp_path / "l.params"))) == 1
    # the worked example of FORMATS.md 1.10 is 105 bytes
    mx.nd.save(str(tmp_path / "w.params"), {"w": mx.nd.array(onp.arange(6, dtype=onp.float32).reshape(2, 3))})
    assert len((tmp_path / "w.params").read_bytes()) == 105


def test_npx_save_load(tmp_path):
    x = mx.np.array(onp.arange(4, dtype=onp.float32))
    mx.npx.save(str(tmp_path / "x.npy"), x)
    assert onp.load(tmp_path / "x.npy").tolist() == [0, 1, 2, 3]
    back = mx.npx.load(str(tmp_path / "x.npy"))
    assert type(back) is mx.np.ndarray and back.tolist() == [0, 1, 2, 3]
    mx.npx.savez(str(tmp_path / "z.npz"), x, y=x * 2)
    z = mx.npx.load(str(tmp_path / "z.npz"))
    assert sorted(z) == ["arr_0", "y"] and z["y"].tolist() == [0, 2, 4, 6]
    mx.npx.save(str(tmp_path / "d.npz"), {"a": x})
    assert mx.npx.load(str(tmp_path / "d.npz"))["a"].tolist() == [0, 1, 2, 3]


def test_bad_files_are_clear_errors(tmp_path):
    path = tmp_path / "bad.params"
    good = tmp_path / "good.params"
    mx.nd.save(str(good), {"w": mx.nd.ones((3, 3))})
    path.write_bytes(good.read_bytes()[:-20])
    with pytest.raises(mx.MXNetError):
        mx.nd.load(str(path))
    path.write_bytes(b"not a params file at all")
    with pytest.raises(mx.MXNetError, match="magic"):
        mx.nd.load(str(path))
    with pytest.raises(TypeError, match="keys must be strings"):
        mx.nd.save(str(path), {1: mx.nd.ones(1)})
    with pytest.raises(TypeError, match="must be an NDArray"):
        mx.nd.save(str(path), [onp.ones(2).tolist()])
