"""Tests for mxjax.serialization: MXNet's NDArray list format and the npz/npy dispatch.

Fixture files were written by real MXNet 1.9.1 (see shared/formats/FORMATS.md,
section 4); copies live in tests/fixtures/formats (tools/make_format_fixtures.py wrote them).
"""
from __future__ import annotations

import io
import json
import struct
import zipfile
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from mxjax.base import MXNetError
from mxjax.serialization import (
    DTYPE_TO_FLAG, FLAG_TO_DTYPE, SparseRecord, detect_format, dumps_params, load, loads,
    loads_params, save, save_npy, savez,
)

NDARRAY_FIXTURES = ["dict_mixed", "list_mixed", "single", "empty", "np_semantics", "sparse",
                    "legacy_v0", "legacy_v1"]
MAGIC_TO_VERSION = {None: 0, "0xF993FAC8": 1, "0xF993FAC9": 2, "0xF993FACA": 3}
V1, V2, V3 = 0xF993FAC8, 0xF993FAC9, 0xF993FACA


def fixtures() -> Path:
    """The MXNet 1.9.1 format fixtures (tests/fixtures/formats, made by tools/make_format_fixtures.py)."""
    return Path(__file__).resolve().parent / "fixtures" / "formats"


def _bits(a: np.ndarray) -> np.ndarray:
    """Comparable bit patterns (bfloat16 as uint16) so NaNs and -0.0 compare exactly."""
    return a.view(np.uint16) if a.dtype == ml_dtypes.bfloat16 else a


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.tobytes() == want.tobytes()


def _list_file(records: list[bytes], names: list[str]) -> bytes:
    """Assemble a list file by hand (header, records, names)."""
    out = struct.pack("<QQQ", 0x112, 0, len(records)) + b"".join(records)
    out += struct.pack("<Q", len(names))
    for n in names:
        nb = n.encode()
        out += struct.pack("<Q", len(nb)) + nb
    return out


def _rec_v0(a: np.ndarray, flag: int) -> bytes:
    return (struct.pack(f"<I{a.ndim}I", a.ndim, *a.shape) + struct.pack("<iii", 1, 0, flag)
            + a.tobytes())


def _rec_v1(a: np.ndarray, flag: int) -> bytes:
    return (struct.pack(f"<Ii{a.ndim}q", V1, a.ndim, *a.shape) + struct.pack("<iii", 1, 0, flag)
            + a.tobytes())


def _rec_dense(magic: int, a: np.ndarray, flag: int) -> bytes:
    return (struct.pack(f"<Iii{a.ndim}q", magic, 0, a.ndim, *a.shape)
            + struct.pack("<iii", 1, 0, flag) + a.tobytes())


# ----------------------------------------------------------------------------- MXNet fixtures

@pytest.mark.parametrize("name", NDARRAY_FIXTURES)
def test_fixture_decodes_exactly(name: str) -> None:
    d = fixtures() / "ndarray"
    exp = json.loads((d / f"{name}.expected.json").read_text(encoding="utf-8"))
    npz = np.load(d / f"{name}.expected.npz")
    got, versions = loads_params((d / f"{name}.params").read_bytes(), return_versions=True)
    assert isinstance(got, dict) == exp["has_names"]
    values = list(got.values()) if isinstance(got, dict) else got
    assert len(values) == exp["count"] == len(versions)
    assert set(versions) <= {MAGIC_TO_VERSION[exp["record_magic"]]}
    if exp["has_names"]:
        assert list(got) == [e["name"] for e in exp["entries"]]
    for e, v in zip(exp["entries"], values):
        key = e["npz_key"]
        assert tuple(v.shape) == tuple(e["shape"])
        assert str(np.dtype(v.dtype)) == e["dtype"]
        assert DTYPE_TO_FLAG[np.dtype(v.dtype)] == e["type_flag"]
        if e["stype"] == "default":
            assert isinstance(v, np.ndarray)
            _same(_bits(v), npz[key])
        else:
            assert isinstance(v, SparseRecord) and v.stype == e["stype"]
            _same(v.data, npz[key + ".data"])
            _same(v.indices, npz[key + ".indices"])
            if v.stype == "csr":
                _same(v.indptr, npz[key + ".indptr"])
            else:
                assert v.indptr is None
            _same(v.todense(), npz[key])


@pytest.mark.parametrize("name", [n for n in NDARRAY_FIXTURES if not n.startswith("legacy")])
def test_fixture_reencodes_byte_for_byte(name: str) -> None:
    raw = (fixtures() / "ndarray" / f"{name}.params").read_bytes()
    value, versions = loads_params(raw, return_versions=True)
    assert dumps_params(value, np_semantics=3 in versions) == raw


def test_single_array_is_written_as_one_element_list() -> None:
    raw = (fixtures() / "ndarray" / "single.params").read_bytes()
    (arr,) = loads_params(raw)
    assert dumps_params(arr) == raw
    assert dumps_params((arr,)) == raw


def test_empty_list_and_dict_give_same_32_bytes() -> None:
    raw = (fixtures() / "ndarray" / "empty.params").read_bytes()
    assert len(raw) == 32 and dumps_params([]) == dumps_params({}) == raw
    assert loads_params(raw) == []


@pytest.mark.parametrize("fname,key_list,np_sem", [
    ("tiny-0000.params", "export_param_keys", False),
    ("tiny.save_parameters.params", "save_parameters_keys", False),
    ("tiny_np-0003.params", "export_param_keys", True),
])
def test_gluon_params(fname: str, key_list: str, np_sem: bool) -> None:
    g = fixtures() / "gluon"
    exp_name = "tiny_np.expected.json" if fname.startswith("tiny_np") else "tiny.expected.json"
    exp = json.loads((g / exp_name).read_text())
    raw = (g / fname).read_bytes()
    params, versions = loads_params(raw, return_versions=True)
    assert list(params) == exp[key_list]
    assert set(versions) == {3 if np_sem else 2}
    assert all(isinstance(v, np.ndarray) and v.dtype == np.float32 for v in params.values())
    if "export_param_shapes" in exp and key_list == "export_param_keys":
        assert {k: list(v.shape) for k, v in params.items()} == exp["export_param_shapes"]
    assert dumps_params(params, np_semantics=np_sem) == raw


def test_gluon_save_parameters_matches_export_values() -> None:
    g = fixtures() / "gluon"
    exp = json.loads((g / "tiny.expected.json").read_text())
    structural = loads_params((g / "tiny.save_parameters.params").read_bytes())
    exported = loads_params((g / "tiny-0000.params").read_bytes())
    for k, ek in exp["save_parameters_to_export"].items():
        _same(structural[k], exported[ek])
        assert list(structural[k].shape) == exp["export_param_shapes"][ek]


# ----------------------------------------------------------------------------- hand-built files

def test_worked_example_105_bytes() -> None:
    want = bytes.fromhex(
        "1201000000000000" "0000000000000000" "0100000000000000"
        "c9fa93f9" "00000000" "02000000" "0200000000000000" "0300000000000000"
        "01000000" "00000000" "00000000")
    want += np.arange(6, dtype="<f4").tobytes() + bytes.fromhex("0100000000000000"
                                                                "0100000000000000") + b"w"
    assert len(want) == 105 and want[64:72] == bytes.fromhex("000000000000803f")
    got = dumps_params({"w": np.arange(6, dtype=np.float32).reshape(2, 3)})
    assert got == want
    back = loads_params(got)
    assert list(back) == ["w"]
    _same(back["w"], np.arange(6, dtype=np.float32).reshape(2, 3))


def test_legacy_none_records_end_after_shape() -> None:
    a = np.arange(3, dtype=np.int32)
    recs = [struct.pack("<I", 0),                      # v0 none: ndim 0, nothing else
            _rec_v0(a, 4),
            struct.pack("<Ii", V1, 0),                 # v1 none: magic, ndim 0
            _rec_v1(a, 4),
            struct.pack("<Iii", V2, 0, 0),             # v2 none: ndim 0
            struct.pack("<Iii", V3, 0, -1),            # v3 none: unknown ndim
            struct.pack("<Iiiqq", V3, 0, 2, 3, -1),    # v3 none: an unknown dim
            _rec_dense(V2, a, 4)]
    got, versions = loads_params(_list_file(recs, []), return_versions=True)
    assert versions == [0, 0, 1, 1, 2, 3, 3, 2]
    assert [g is None for g in got] == [True, False, True, False, True, True, True, False]
    for g in (got[1], got[3], got[7]):
        _same(g, a)


def test_mixed_v1_v2_v3_in_one_file() -> None:
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    s = np.array(7.5, dtype=np.float32)
    raw = _list_file([_rec_v1(a, 1), _rec_dense(V2, a, 1), _rec_dense(V3, s, 0),
                      _rec_v0(a, 1)], ["v1", "v2", "v3", "v0"])
    got, versions = loads_params(raw, return_versions=True)
    assert versions == [1, 2, 3, 0] and list(got) == ["v1", "v2", "v3", "v0"]
    for k in ("v1", "v2", "v0"):
        _same(got[k], a)
    _same(got["v3"], s)


def test_duplicate_names_last_wins_and_trailing_bytes_ignored() -> None:
    recs = [_rec_dense(V2, np.full(2, i, np.int32), 4) for i in range(3)]
    got = loads_params(_list_file(recs, ["a", "b", "a"]) + b"trailing garbage")
    assert list(got) == ["a", "b"]
    _same(got["a"], np.full(2, 2, np.int32))


def test_v2_zero_size_and_v3_scalar_round_trip() -> None:
    vals = {"z": np.zeros((2, 0), np.int32), "z2": np.zeros((0, 3), np.float32)}
    for k, v in loads_params(dumps_params(vals)).items():
        _same(v, vals[k])
    v3 = {"s": np.array(3, np.int64), "z": np.zeros((0,), np.bool_)}
    for k, v in loads_params(dumps_params(v3, np_semantics=True)).items():
        _same(v, v3[k])


def test_writer_normalises_inputs() -> None:
    be = np.arange(4, dtype=">f4")
    assert dumps_params([be]) == dumps_params([np.arange(4, dtype=np.float32)])
    fortran = np.asfortranarray(np.arange(6, dtype=np.int64).reshape(2, 3))
    _same(loads_params(dumps_params([fortran]))[0], np.ascontiguousarray(fortran))
    assert dumps_params([[1.0, 2.0]]) == dumps_params([np.array([1.0, 2.0])])   # array-likes
    mx_bf16 = np.array([0x3F80, 0x4000], np.uint16).view([("bfloat16", np.uint16)])
    (back,) = loads_params(dumps_params([mx_bf16]))
    assert back.dtype == ml_dtypes.bfloat16 and back.tolist() == [1.0, 2.0]


def test_writer_errors() -> None:
    with pytest.raises(MXNetError, match="0-d"):
        dumps_params({"s": np.float32(1)})
    with pytest.raises(MXNetError, match="v2"):
        dumps_params([SparseRecord("row_sparse", (2,), np.ones(1), np.zeros(1))],
                     np_semantics=True)
    with pytest.raises(MXNetError, match="None"):
        dumps_params([None])
    with pytest.raises(MXNetError, match="complex64"):
        dumps_params([np.zeros(2, np.complex64)])
    with pytest.raises(MXNetError, match="str"):
        dumps_params({1: np.zeros(2)})
    with pytest.raises(MXNetError, match="indptr"):
        dumps_params([SparseRecord("csr", (2, 2), np.ones(1), np.zeros(1), np.array([0, 1]))])


def test_sparse_todense_and_round_trip() -> None:
    rsp = SparseRecord("row_sparse", (4, 2), np.array([[1, 2], [3, 4]], np.float32),
                       np.array([1, 3]))
    csr = SparseRecord("csr", (2, 3), np.array([5.0, 6.0]), np.array([2, 0]),
                       np.array([0, 1, 2]))
    empty_csr = SparseRecord("csr", (3, 2), np.zeros(0, np.float16), np.zeros(0, np.int64),
                             np.zeros(0, np.int64))
    assert rsp.todense().tolist() == [[0, 0], [1, 2], [0, 0], [3, 4]]
    assert csr.todense().tolist() == [[0, 0, 5], [6, 0, 0]]
    _same(empty_csr.todense(), np.zeros((3, 2), np.float16))
    back = loads_params(dumps_params([rsp, csr, empty_csr]))
    for orig, got in zip([rsp, csr, empty_csr], back):
        assert got.stype == orig.stype and got.shape == orig.shape
        _same(got.todense(), orig.todense())
        assert got.indices.dtype == np.int64


# ----------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("name", ["sparse", "dict_mixed", "np_semantics", "legacy_v0",
                                  "legacy_v1", "empty"])
def test_every_truncation_raises(name: str) -> None:
    raw = (fixtures() / "ndarray" / f"{name}.params").read_bytes()
    for n in range(len(raw)):
        with pytest.raises(MXNetError):
            loads_params(raw[:n])


def test_truncation_of_hand_built_file() -> None:
    raw = dumps_params({"w": np.arange(6, dtype=np.float32).reshape(2, 3)})
    for n in range(len(raw)):
        with pytest.raises(MXNetError, match="truncated|bad NDArray|not an MXNet"):
            loads_params(raw[:n])


def test_unknown_type_flag_message() -> None:
    a = np.zeros(2, np.float32)
    raw = _list_file([_rec_dense(V2, a, 0), _rec_dense(V2, a, 0), _rec_dense(V2, a, 13)], [])
    with pytest.raises(MXNetError, match="unknown type flag 13 in record 2; expected 0-12"):
        loads_params(raw)


def test_bad_list_magic_shows_bytes() -> None:
    raw = bytearray(dumps_params([np.zeros(1)]))
    raw[0] = 0x13
    with pytest.raises(MXNetError, match="list magic 0x112.*found 13 01 00 00 00 00 00 00"):
        loads_params(bytes(raw))
    with pytest.raises(MXNetError, match="list magic"):
        loads_params(b"PK\x03\x04" + bytes(40))


def test_names_count_mismatch() -> None:
    a = np.zeros(1, np.float32)
    raw = _list_file([_rec_dense(V2, a, 0)] * 2, ["only_one"])
    raw = raw.replace(struct.pack("<Q", 1) + struct.pack("<Q", 8), struct.pack("<Q", 1) * 2)
    with pytest.raises(MXNetError, match="name count 1 is neither 0 nor the array count 2"):
        loads_params(raw)


@pytest.mark.parametrize("record,match", [
    (struct.pack("<Iiiq", V2, 0, 1, -5) + struct.pack("<iii", 1, 0, 0), "negative dim"),
    (struct.pack("<Iii", V2, 0, -1), "ndim -1 out of range"),
    (struct.pack("<Iii", V2, 0, 1000), "ndim 1000 out of range"),
    (struct.pack("<Iiiq", V2, 0, 1, 2**40) + struct.pack("<iii", 1, 0, 0), "truncated.*data"),
    (struct.pack("<Iiiqq", V2, 0, 2, 0, 2**62) + struct.pack("<iii", 1, 0, 1),
     "not representable"),
    (struct.pack("<Iii", V2, 7, 0), "storage type 7"),
    (struct.pack("<I", 0xDEADBEEF), "neither a record magic"),
    (struct.pack("<Iiiqiq", V2, 1, 1, 0, 1, 3) + struct.pack("<iii", 1, 0, 0)
     + struct.pack("<iiq", 6, 1, 1), "row_sparse"),   # indices (1,) but no stored rows
])
def test_malformed_records(record: bytes, match: str) -> None:
    with pytest.raises(MXNetError, match=match) as info:
        loads_params(_list_file([record], []))
    assert "record 0" in str(info.value)


def test_huge_array_count_and_bad_utf8_name() -> None:
    with pytest.raises(MXNetError, match="array count"):
        loads_params(struct.pack("<QQQ", 0x112, 0, 2**60) + bytes(16))
    raw = _list_file([_rec_dense(V2, np.zeros(1, np.int8), 5)], ["x"]).replace(b"x", b"\xff")
    with pytest.raises(MXNetError, match="UTF-8"):
        loads_params(raw)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_corrupted_bytes_load_or_raise_mxneterror(data: st.DataObject) -> None:
    base = dumps_params({"a": np.arange(6, dtype=np.float32).reshape(2, 3),
                         "b": SparseRecord("csr", (2, 3), np.array([5.0, 6.0]),
                                           np.array([2, 0]), np.array([0, 1, 2]))})
    raw = bytearray(base)
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(raw) - 1))
        raw[pos] = data.draw(st.integers(0, 255))
    try:
        loads_params(bytes(raw))
    except MXNetError:
        pass


# ----------------------------------------------------------------------------- round trips

_DTYPES = list(FLAG_TO_DTYPE.values())


@st.composite
def _arrays(draw: st.DrawFn, min_dims: int) -> np.ndarray:
    dtype = draw(st.sampled_from(_DTYPES))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=4, min_side=0, max_side=4))
    n = int(np.prod(shape))
    raw = draw(st.binary(min_size=n * dtype.itemsize, max_size=n * dtype.itemsize))
    if dtype == np.bool_:
        return (np.frombuffer(raw, np.uint8) % 2).astype(np.bool_).reshape(shape)
    return np.frombuffer(raw, dtype).reshape(shape)   # any bit pattern, NaNs included


@settings(max_examples=150, deadline=None)
@given(st.lists(_arrays(1), max_size=5), st.booleans())
def test_round_trip_v2(arrays: list[np.ndarray], as_dict: bool) -> None:
    value = {f"k{i}": a for i, a in enumerate(arrays)} if as_dict else arrays
    got, versions = loads_params(dumps_params(value), return_versions=True)
    assert versions == [2] * len(arrays)
    assert isinstance(got, dict) == (as_dict and bool(arrays))
    for g, a in zip(got.values() if isinstance(got, dict) else got, arrays):
        _same(g, a)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(max_size=8), _arrays(0), max_size=5))
def test_round_trip_v3(arrays: dict[str, np.ndarray]) -> None:
    got, versions = loads_params(dumps_params(arrays, np_semantics=True), return_versions=True)
    assert versions == [3] * len(arrays)
    assert list(got) == list(arrays) if arrays else got == []
    for k, a in arrays.items():
        _same(got[k], a)


# ----------------------------------------------------------------------------- files and dispatch

def test_save_load_params_file(tmp_path: Path) -> None:
    vals = {"w": np.arange(4, dtype=np.float16), "é": np.ones((1, 2), np.uint64)}
    save(tmp_path / "x.params", vals)
    got = load(tmp_path / "x.params")
    assert list(got) == ["w", "é"]
    for k in vals:
        _same(got[k], vals[k])
    save(str(tmp_path / "y.params"), np.array(1.5, np.float32), np_semantics=True)
    (scalar,) = load(str(tmp_path / "y.params"))
    _same(scalar, np.array(1.5, np.float32))
    buf = io.BytesIO()
    save(buf, [np.zeros(2)])
    buf.seek(0)
    assert len(load(buf)) == 1


def test_npz_round_trip_and_dispatch(tmp_path: Path) -> None:
    a, b = np.arange(6).reshape(2, 3), np.array([1.0, -2.5], ml_dtypes.bfloat16)
    savez(tmp_path / "x.npz", a, bf=b, flag=np.array(True))
    raw = (tmp_path / "x.npz").read_bytes()
    assert detect_format(raw) == "npz"
    got = load(tmp_path / "x.npz")
    assert set(got) == {"arr_0", "bf", "flag"}
    _same(got["arr_0"], a)
    _same(got["flag"], np.array(True))
    assert got["bf"].dtype == ml_dtypes.bfloat16 and _bits(got["bf"]).tolist() == \
        _bits(b).tolist()
    with np.load(tmp_path / "x.npz") as z:   # a standard npz that NumPy reads
        _same(z["arr_0"], a)
    assert zipfile.ZipFile(tmp_path / "x.npz").namelist() == ["bf.npy", "flag.npy", "arr_0.npy"]
    np.savez(tmp_path / "np.npz", q=np.ones(3, np.int8))   # written by NumPy itself
    _same(load(tmp_path / "np.npz")["q"], np.ones(3, np.int8))
    savez(tmp_path / "empty.npz")
    assert detect_format((tmp_path / "empty.npz").read_bytes()) == "npz"
    assert load(tmp_path / "empty.npz") == {}
    with pytest.raises(MXNetError, match="arr_0"):
        savez(tmp_path / "bad.npz", a, arr_0=a)


def test_npy_round_trip_and_dispatch(tmp_path: Path) -> None:
    a = np.arange(12, dtype=">i4").reshape(3, 4)
    save_npy(tmp_path / "a.npy", a)
    assert detect_format((tmp_path / "a.npy").read_bytes()) == "npy"
    got = load(tmp_path / "a.npy")
    assert isinstance(got, np.ndarray)
    assert np.array_equal(got, a) and got.dtype == a.dtype
    _same(np.load(tmp_path / "a.npy"), a)
    bf = np.array([[0.5, 3.0]], ml_dtypes.bfloat16)
    save_npy(tmp_path / "bf.npy", bf)
    got = load(tmp_path / "bf.npy")
    assert got.dtype == ml_dtypes.bfloat16 and got.tolist() == bf.tolist()
    np.save(tmp_path / "np.npy", np.zeros((0, 2)))
    _same(load(tmp_path / "np.npy"), np.zeros((0, 2)))
    with pytest.raises(MXNetError, match="object"):
        save_npy(tmp_path / "o.npy", np.array([object()]))
    with pytest.raises(MXNetError):
        loads(b"\x93NUMPY\x01\x00garbage")
    with pytest.raises(MXNetError):
        loads(b"PK\x03\x04garbage")
