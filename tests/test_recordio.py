"""mx.recordio against files written by MXNet 1.9.1 (tests/fixtures/formats/recordio, FORMATS.md section 3)."""
import base64
import io
import json
import os
import pickle
import shutil
import struct
import threading
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import mxjax.recordio as recordio
from mxjax.base import MXNetError

FIX = Path(__file__).parent / "fixtures" / "formats" / "recordio"
MIXED = json.loads((FIX / "mixed.expected.json").read_text())
RECORDS = MIXED["records"]
MAGIC = struct.pack("<I", 0xCED7230A)


def payload(rec):
    return base64.b64decode(rec["payload_b64"])


def parse_parts(data, offset):
    """Hand parser of one record's parts: [(cflag, length)], end offset."""
    parts = []
    while True:
        magic, lrec = struct.unpack_from("<II", data, offset)
        assert magic == 0xCED7230A
        cflag, length = lrec >> 29, lrec & ((1 << 29) - 1)
        parts.append([cflag, length])
        offset += 8 + (length + 3) // 4 * 4
        if cflag in (0, 3):
            return parts, offset


# ---------------------------------------------------------------- reading MXNet's files

def test_read_every_record_of_mixed_rec():
    reader = recordio.MXRecordIO(str(FIX / "mixed.rec"), "r")
    for rec in RECORDS:
        assert reader.read() == payload(rec), rec["name"]
    assert reader.read() is None
    assert reader.read() is None
    reader.close()


def test_fixture_parts_are_what_the_format_says():
    data = (FIX / "mixed.rec").read_bytes()
    for rec in RECORDS:
        parts, end = parse_parts(data, rec["offset"])
        assert parts == rec["parts"] and end == rec["end"], rec["name"]


def test_reader_reset_and_reopen():
    reader = recordio.MXRecordIO(FIX / "mixed.rec", "r")
    first = [reader.read() for _ in range(5)]
    reader.reset()
    assert [reader.read() for _ in range(5)] == first
    reader.close()
    reader.close()
    assert not reader.is_open
    reader.open()
    assert reader.read() == payload(RECORDS[0])


def test_indexed_reader_by_key():
    reader = recordio.MXIndexedRecordIO(str(FIX / "mixed.idx"), str(FIX / "mixed.rec"), "r")
    assert reader.keys == [r["key"] for r in RECORDS]
    assert reader.idx == {r["key"]: r["offset"] for r in RECORDS}
    for rec in reversed(RECORDS):
        assert reader.read_idx(rec["key"]) == payload(rec)
    reader.seek(RECORDS[7]["key"])
    assert reader.read() == payload(RECORDS[7])
    assert reader.read() == payload(RECORDS[8])  # reading continues after a seek
    with pytest.raises(KeyError):
        reader.read_idx(7)
    reader.close()


def test_indexed_reader_string_keys(tmp_path):
    writer = recordio.MXIndexedRecordIO(tmp_path / "s.idx", tmp_path / "s.rec", "w", key_type=str)
    writer.write_idx("cat", b"meow")
    writer.write_idx("dog", b"woof")
    writer.close()
    assert (tmp_path / "s.idx").read_text() == "cat\t0\ndog\t12\n"
    reader = recordio.MXIndexedRecordIO(tmp_path / "s.idx", tmp_path / "s.rec", "r", key_type=str)
    assert reader.read_idx("dog") == b"woof" and reader.keys == ["cat", "dog"]


def test_threads_sharing_an_indexed_reader_each_get_their_record(tmp_path, threads_switch_often):
    """A thread-pool DataLoader's workers share one reader: each read_idx is a seek and a read that
    another thread must not split (MXNet's reader gives the wrong record, or a torn one, then)."""
    writer = recordio.MXIndexedRecordIO(tmp_path / "t.idx", tmp_path / "t.rec", "w")
    want = [b"%05d" % i * (1 + 7 * (i % 37)) for i in range(400)]  # records of many lengths
    for i, record in enumerate(want):
        writer.write_idx(i, record)
    writer.close()
    reader = recordio.MXIndexedRecordIO(tmp_path / "t.idx", tmp_path / "t.rec", "r")
    got, errors = {}, []

    def read(keys):
        try:
            for key in keys:
                got[key] = reader.read_idx(key)
        except Exception as err:  # (reported by the test's thread)
            errors.append(err)
    threads = [threading.Thread(target=read, args=(range(t, 400, 8),), daemon=True) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors[0]
    assert [got[i] for i in range(400)] == want


def test_irheader_records_unpack_as_mxnet_wrote_them():
    checked = 0
    for rec in RECORDS:
        if "irheader" not in rec:
            continue
        expect = rec["irheader"]
        header, body = recordio.unpack(payload(rec))
        assert body == base64.b64decode(rec["body_b64"])
        assert (header.flag, header.id, header.id2) == (expect["flag"], expect["id"], expect["id2"])
        if expect["flag"] == 0:
            assert isinstance(header.label, float)
            assert struct.unpack("<I", struct.pack("<f", header.label))[0] == expect["label_float32_bits"]
        else:
            assert header.label.dtype == np.float32 and header.label.shape == (expect["flag"],)
            assert header.label.view(np.uint32).tolist() == expect["label_float32_bits"]
        # pack() rebuilds the same payload from the decoded values
        label = header.label if expect["flag"] == 0 else np.array(expect["label"], np.float32)
        rebuilt = recordio.pack(recordio.IRHeader(0, label, expect["id"], expect["id2"]), body)
        assert rebuilt == payload(rec), rec["name"]
        checked += 1
    assert checked == 5


# ---------------------------------------------------------------- writing like MXNet

def test_rewrite_reproduces_mixed_rec_and_idx_bytes(tmp_path):
    rec, idx = tmp_path / "m.rec", tmp_path / "m.idx"
    with recordio.MXIndexedRecordIO(str(idx), str(rec), "w") as writer:
        assert writer.tell() == 0
        for r in RECORDS:
            assert writer.tell() == r["offset"]
            writer.write_idx(r["key"], payload(r))
        assert writer.tell() == MIXED["file_size"]
    assert rec.read_bytes() == (FIX / "mixed.rec").read_bytes()
    assert idx.read_bytes() == (FIX / "mixed.idx").read_bytes()


def test_plain_writer_reproduces_bytes(tmp_path):
    writer = recordio.MXRecordIO(str(tmp_path / "p.rec"), "w")
    for r in RECORDS:
        writer.write(payload(r))
    writer.close()
    assert (tmp_path / "p.rec").read_bytes() == (FIX / "mixed.rec").read_bytes()


@pytest.mark.parametrize("data, parts", [
    (b"abc", [[0, 3]]),
    (MAGIC, [[1, 0], [3, 0]]),
    (b"head" + MAGIC, [[1, 4], [3, 0]]),
    (b"xyzw" + MAGIC + MAGIC + b"end!!", [[1, 4], [2, 0], [3, 5]]),
    (b"u" + MAGIC + b"nal", [[0, 8]]),
    (b"ab" + MAGIC + b"cd" + MAGIC, [[1, 8], [3, 0]]),
])
def test_magic_at_aligned_offsets_splits_records(tmp_path, data, parts):
    path = tmp_path / "one.rec"
    with recordio.MXRecordIO(path, "w") as writer:
        writer.write(data)
    raw = path.read_bytes()
    assert parse_parts(raw, 0) == (parts, len(raw))
    assert len(raw) % 4 == 0
    with recordio.MXRecordIO(path, "r") as reader:
        assert reader.read() == data and reader.read() is None


def test_unclosed_writers_are_flushed_at_exit(tmp_path):
    writer = recordio.MXIndexedRecordIO(str(tmp_path / "x.idx"), str(tmp_path / "x.rec"), "w")
    writer.write_idx(3, b"kept")
    assert (tmp_path / "x.rec").read_bytes() == b""      # still buffered
    recordio._flush_at_exit()                           # what atexit runs
    assert (tmp_path / "x.rec").read_bytes() == MAGIC + struct.pack("<I", 4) + b"kept"
    assert (tmp_path / "x.idx").read_text() == "3\t0\n"
    writer.close()


def test_writer_reset_truncates(tmp_path):
    path = tmp_path / "t.rec"
    writer = recordio.MXRecordIO(str(path), "w")
    writer.write(b"12345678")
    writer.reset()
    writer.write(b"z")
    writer.close()
    assert path.read_bytes() == MAGIC + struct.pack("<I", 1) + b"z\0\0\0"


def test_large_record_crosses_chunks(tmp_path):
    rng = np.random.RandomState(0)
    big = [rng.bytes(n) for n in (70000, 5, 300000, 1 << 21)]
    with recordio.MXRecordIO(tmp_path / "b.rec", "w") as writer:
        for b in big:
            writer.write(b)
    with recordio.MXRecordIO(tmp_path / "b.rec", "r") as reader:
        assert [reader.read() for _ in big] == big and reader.read() is None


# ---------------------------------------------------------------- IRHeader pack / unpack

def test_pack_layout_single_and_multi_label():
    single = recordio.pack(recordio.IRHeader(7, 2.5, 3, 4), b"body")
    assert single == struct.pack("<IfQQ", 0, 2.5, 3, 4) + b"body"   # flag forced to 0
    multi = recordio.pack(recordio.IRHeader(0, [1, 2, 3.5], 9, 0), b"xy")
    assert multi == struct.pack("<IfQQ", 3, 0.0, 9, 0) + struct.pack("<3f", 1, 2, 3.5) + b"xy"
    one = recordio.pack((0, np.array([-4.0]), 5, 0), b"")
    assert one[:4] == struct.pack("<I", 1)  # a one-element array still counts as multi-label
    header, rest = recordio.unpack(multi)
    assert header.flag == 3 and header.label.tolist() == [1.0, 2.0, 3.5] and rest == b"xy"
    assert not header.label.flags.writeable
    scalar = recordio.unpack(recordio.pack((0, np.int64(3), 1, 0), b""))
    assert scalar == (recordio.IRHeader(0, 3.0, 1, 0), b"")
    assert recordio.IRHeader(0, 1, 2, 3)._fields == ("flag", "label", "id", "id2")
    assert repr(recordio.IRHeader(0, 1, 2, 3)) == "HEADER(flag=0, label=1, id=2, id2=3)"
    copy = pickle.loads(pickle.dumps(header))
    assert type(copy) is recordio.IRHeader and copy.label.tolist() == [1.0, 2.0, 3.5]


def test_label_bits_equal_to_magic_are_split(tmp_path):
    magic_float = np.frombuffer(MAGIC, np.float32)
    packed = recordio.pack(recordio.IRHeader(0, np.concatenate([magic_float, [1.0]]), 17, 0), b"lbl")
    expected = payload(next(r for r in RECORDS if r["name"] == "ir_label_bits_are_magic"))
    assert packed == expected
    with recordio.MXRecordIO(tmp_path / "l.rec", "w") as writer:
        writer.write(packed)
    assert parse_parts((tmp_path / "l.rec").read_bytes(), 0)[0] == [[1, 24], [3, 7]]
    with recordio.MXRecordIO(tmp_path / "l.rec", "r") as reader:
        header, body = recordio.unpack(reader.read())
    assert header.label.view(np.uint32)[0] == 0xCED7230A and body == b"lbl"


def test_unpack_too_short_raises():
    with pytest.raises(struct.error):
        recordio.unpack(b"abc")
    with pytest.raises(ValueError):
        recordio.unpack(recordio.pack((0, [1, 2, 3], 1, 0), b"")[:28])


# ---------------------------------------------------------------- images

def _pillow_decode(data):
    return np.asarray(Image.open(io.BytesIO(data)))


def test_pack_img_png_round_trip_and_bgr_order():
    rng = np.random.RandomState(1)
    bgr = rng.randint(0, 256, (5, 7, 3)).astype(np.uint8)
    packed = recordio.pack_img(recordio.IRHeader(0, 3, 11, 0), bgr, quality=3, img_fmt=".png")
    header, body = recordio.unpack(packed)
    assert header == recordio.IRHeader(0, 3.0, 11, 0)
    np.testing.assert_array_equal(_pillow_decode(body), bgr[:, :, ::-1])  # stored as RGB
    for flag in (-1, 1):
        h, img = recordio.unpack_img(packed, flag)
        assert img.dtype == np.uint8
        np.testing.assert_array_equal(img, bgr)
    _, gray = recordio.unpack_img(packed, 0)
    rgb = bgr[:, :, ::-1].astype(np.int64)
    expect = (rgb[..., 0] * 9798 + rgb[..., 1] * 19235 + rgb[..., 2] * 3735) >> 15
    np.testing.assert_array_equal(gray, expect)


def test_pack_img_png_gray_alpha_and_16bit():
    rng = np.random.RandomState(2)
    gray = rng.randint(0, 256, (4, 6)).astype(np.uint8)
    _, img = recordio.unpack_img(recordio.pack_img((0, 1, 0, 0), gray, img_fmt=".png"))
    assert img.shape == (4, 6)
    np.testing.assert_array_equal(img, gray)
    _, img = recordio.unpack_img(recordio.pack_img((0, 1, 0, 0), gray, img_fmt=".png"), 1)
    np.testing.assert_array_equal(img, np.repeat(gray[:, :, None], 3, axis=2))
    bgra = rng.randint(0, 256, (3, 3, 4)).astype(np.uint8)
    packed = recordio.pack_img((0, 1, 0, 0), bgra, img_fmt=".PNG")
    np.testing.assert_array_equal(_pillow_decode(recordio.unpack(packed)[1]), bgra[:, :, [2, 1, 0, 3]])
    np.testing.assert_array_equal(recordio.unpack_img(packed)[1], bgra)
    deep = rng.randint(0, 65536, (3, 5)).astype(np.uint16)
    _, img = recordio.unpack_img(recordio.pack_img((0, 1, 0, 0), deep, img_fmt=".png"))
    assert img.dtype == np.uint16
    np.testing.assert_array_equal(img, deep)


def test_pack_img_jpeg_close():
    yy, xx = np.mgrid[0:32, 0:32]
    bgr = np.stack([xx * 8, yy * 8, (xx + yy) * 4], axis=-1).astype(np.uint8)
    packed = recordio.pack_img(recordio.IRHeader(0, [1, 2], 4, 0), bgr, quality=95)
    header, body = recordio.unpack(packed)
    assert body[:2] == b"\xff\xd8" and header.label.tolist() == [1.0, 2.0]
    _, img = recordio.unpack_img(packed, 1)
    assert img.shape == (32, 32, 3)
    assert np.abs(img.astype(int) - bgr).mean() < 3
    low = recordio.unpack(recordio.pack_img((0, 0, 0, 0), bgr, quality=10))[1]
    assert len(low) < len(body)


def test_pack_img_bad_input():
    with pytest.raises(ValueError, match="pack_img"):
        recordio.pack_img((0, 0, 0, 0), np.zeros((2, 2, 2), np.uint8), img_fmt=".png")
    with pytest.raises(ValueError, match="unknown image format"):
        recordio.pack_img((0, 0, 0, 0), np.zeros((2, 2, 3), np.uint8), img_fmt=".nope")
    with pytest.raises(ValueError, match="float"):
        recordio.pack_img((0, 0, 0, 0), np.zeros((2, 2, 3), np.float32))
    with pytest.raises(MXNetError, match="not a valid image"):
        recordio.unpack_img(recordio.pack((0, 0, 0, 0), b"not an image"))


# ---------------------------------------------------------------- pickling and processes

def test_pickled_reader_resumes_at_same_position():
    reader = recordio.MXRecordIO(str(FIX / "mixed.rec"), "r")
    for _ in range(9):
        reader.read()
    copy = pickle.loads(pickle.dumps(reader))
    assert copy.read() == payload(RECORDS[9])
    assert reader.read() == payload(RECORDS[9])   # the original is untouched
    assert copy.read() == payload(RECORDS[10])
    closed = pickle.loads(pickle.dumps(recordio.MXRecordIO(str(FIX / "mixed.rec"), "r")))
    assert closed.read() == payload(RECORDS[0])


def test_pickled_indexed_reader():
    reader = recordio.MXIndexedRecordIO(FIX / "mixed.idx", FIX / "mixed.rec", "r")
    reader.read_idx(130)
    copy = pickle.loads(pickle.dumps(reader))
    assert copy.keys == reader.keys and copy.read() == payload(RECORDS[11])
    assert copy.read_idx(100) == b""


def test_pickled_writer_appends_instead_of_truncating(tmp_path):
    writer = recordio.MXIndexedRecordIO(tmp_path / "w.idx", tmp_path / "w.rec", "w")
    writer.write_idx(1, b"one")
    copy = pickle.loads(pickle.dumps(writer))
    assert not writer.is_open            # as in MXNet, the pickled writer is closed
    copy.write_idx(2, b"two!")
    copy.close()
    reader = recordio.MXIndexedRecordIO(tmp_path / "w.idx", tmp_path / "w.rec", "r")
    assert reader.read_idx(1) == b"one" and reader.read_idx(2) == b"two!"
    assert reader.keys == [1, 2]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_reads_its_own_position():
    reader = recordio.MXRecordIO(str(FIX / "mixed.rec"), "r")
    reader.read()
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: read the rest while the parent reads too
        try:
            ok = [reader.read() for _ in RECORDS[1:]] == [payload(r) for r in RECORDS[1:]]
            os.write(wfd, b"1" if ok else b"0")
        finally:
            os._exit(0)
    got = [reader.read() for _ in RECORDS[1:]]
    os.waitpid(pid, 0)
    assert os.read(rfd, 1) == b"1"
    assert got == [payload(r) for r in RECORDS[1:]]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_cannot_write_or_duplicate_pending_records(tmp_path):
    path = tmp_path / "f.rec"
    writer = recordio.MXRecordIO(str(path), "w")
    writer.write(b"first")                 # still buffered in this process
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            try:
                writer.write(b"child")
                os.write(wfd, b"0")
            except RuntimeError:
                os.write(wfd, b"1")
            writer.close()                 # must not flush the parent's buffered record
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(rfd, 1) == b"1"
    writer.write(b"second")
    writer.close()
    assert _read_all(path) == [b"first", b"second"]


# ---------------------------------------------------------------- errors

def _read_all(path):
    out = []
    with recordio.MXRecordIO(str(path), "r") as reader:
        while True:
            record = reader.read()
            if record is None:
                return out
            out.append(record)


def test_every_truncation_raises_or_ends_at_a_record_boundary(tmp_path):
    data = (FIX / "mixed.rec").read_bytes()
    boundaries = {r["offset"] for r in RECORDS} | {len(data)}
    # every residue mod 4 (stride 3) plus the bytes around each record and part header
    cuts = set(range(1, len(data), 3)) | {b + d for b in boundaries for d in (-1, 1, 4, 7, 8, 9)}
    for cut in sorted(c for c in cuts if 0 < c < len(data)):
        path = tmp_path / f"cut{cut}.rec"
        path.write_bytes(data[:cut])
        if cut in boundaries:
            got = _read_all(path)
            assert got == [payload(r) for r in RECORDS if r["end"] <= cut]
            continue
        good = [payload(r) for r in RECORDS if r["end"] <= cut]
        with recordio.MXRecordIO(str(path), "r") as reader:
            got = [reader.read() for _ in good]
            assert got == good
            with pytest.raises(MXNetError, match=r"cut\d+\.rec.*byte offset \d+"):
                reader.read()


def test_truncation_error_names_file_and_offset(tmp_path):
    data = (FIX / "mixed.rec").read_bytes()
    path = tmp_path / "t.rec"
    path.write_bytes(data[:100])  # inside "magic_then_tail", after its first part
    with pytest.raises(MXNetError, match=r"'.*t\.rec' at byte offset 100: file ends inside the "
                                         r"multi-part record that starts at 92"):
        _read_all(path)
    path.write_bytes(data[:830])  # inside the data of the record at 816
    with pytest.raises(MXNetError, match=r"byte offset 816: part of 500 bytes"):
        _read_all(path)


def test_corrupt_magic_and_flags(tmp_path):
    data = bytearray((FIX / "mixed.rec").read_bytes())
    path = tmp_path / "bad.rec"
    bad = bytearray(data)
    bad[20:24] = b"\0\0\0\0"
    path.write_bytes(bad)
    with pytest.raises(MXNetError, match=r"bad\.rec' at byte offset 20: expected magic "
                                         r"0xCED7230A, found 0x00000000"):
        _read_all(path)
    bad = bytearray(data)
    bad[27] |= 0x80  # cflag 4 in the record at 20
    path.write_bytes(bad)
    with pytest.raises(MXNetError, match="byte offset 20: part flag 4"):
        _read_all(path)
    bad = bytearray(data)
    bad[8 + 7] |= 0x40  # cflag 2 (a continuation) where a record must start
    path.write_bytes(bad)
    with pytest.raises(MXNetError, match="byte offset 8: part flag 2"):
        _read_all(path)


def test_wrong_mode_and_bad_arguments(tmp_path):
    reader = recordio.MXRecordIO(str(FIX / "mixed.rec"), "r")
    with pytest.raises(AssertionError):
        reader.write(b"x")
    writer = recordio.MXRecordIO(str(tmp_path / "w.rec"), "w")
    with pytest.raises(AssertionError):
        writer.read()
    with pytest.raises(TypeError, match="expected bytes, got str"):
        writer.write("text")

    class Huge(bytes):
        def __len__(self):
            return 1 << 29

    with pytest.raises(MXNetError, match="2\\*\\*29"):
        writer.write(Huge(b"x"))
    writer.close()
    with pytest.raises(MXNetError, match="closed"):
        writer.write(b"x")
    with pytest.raises(ValueError, match="Invalid flag"):
        recordio.MXRecordIO(str(tmp_path / "w.rec"), "a")
    with pytest.raises(MXNetError, match="nope.rec") as info:
        recordio.MXRecordIO(str(tmp_path / "nope.rec"), "r")
    assert isinstance(info.value, FileNotFoundError)
    with pytest.raises(FileNotFoundError):
        recordio.MXIndexedRecordIO(str(tmp_path / "nope.idx"), str(FIX / "mixed.rec"), "r")


def test_bad_index_line(tmp_path):
    shutil.copy(FIX / "mixed.rec", tmp_path / "m.rec")
    (tmp_path / "m.idx").write_text("100\t0\n200\t4096\n")
    reader = recordio.MXIndexedRecordIO(str(tmp_path / "m.idx"), str(tmp_path / "m.rec"), "r")
    with pytest.raises(MXNetError, match="key 200 points to byte offset 4096, past the end"):
        reader.read_idx(200)
    (tmp_path / "m.idx").write_text("100\t0\n\nxyz\n")
    with pytest.raises(ValueError, match="line 3 .*'xyz'"):
        recordio.MXIndexedRecordIO(str(tmp_path / "m.idx"), str(tmp_path / "m.rec"), "r")
    (tmp_path / "m.idx").write_text("100 0\n103 8\n")  # whitespace instead of tabs also works
    reader = recordio.MXIndexedRecordIO(str(tmp_path / "m.idx"), str(tmp_path / "m.rec"), "r")
    assert reader.read_idx(103) == b"a"
