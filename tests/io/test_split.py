"""RecordSplit: part k of n of RecordIO files, as MXNet 1.9.1's ImageRecordIter partitions them."""
import json
import os
import pickle
import shutil
import struct
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import mxjax.recordio as recordio
from mxjax.base import MXNetError
from mxjax.io._split import RecordSplit, expand_uri

FIX = Path(__file__).parent / ".." / "fixtures" / "formats" / "recordio"
IMAGES = json.loads((FIX / "images.expected.json").read_text())
MAGIC = struct.pack("<I", 0xCED7230A)


def labels(split):
    return [recordio.unpack(payload)[0].label for payload in split]


MODES = {
    "byte_range_single_file": lambda: dict(uri=str(FIX / "images0.rec")),
    "byte_range_two_files": lambda: dict(uri=f"{FIX / 'images0.rec'};{FIX / 'images1.rec'}"),
    "indexed_single_file": lambda: dict(uri=str(FIX / "images0.rec"), index_path=str(FIX / "images0.idx")),
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("n", range(1, 9))
def test_partitions_match_mxnet(mode, n):
    expected = IMAGES["partitions"][mode][str(n)]
    assert len(expected) == n
    for k, want in enumerate(expected):
        split = RecordSplit(part_index=k, num_parts=n, **MODES[mode]())
        assert labels(split) == want, (mode, n, k)
        assert len(split) == len(want)
        split.reset()
        assert labels(split) == want  # the next epoch is the same part again
        split.close()


def test_worked_example_offsets():
    split = RecordSplit(str(FIX / "images0.rec"), part_index=4, num_parts=6)
    assert split.locations() == [(str(FIX / "images0.rec"), 1076)]
    assert RecordSplit(str(FIX / "images0.rec"), part_index=3, num_parts=6).locations() == []
    everything = RecordSplit(str(FIX / "images0.rec"))
    offsets = [r["offset"] for r in IMAGES["files"]["images0"]["records"]]
    assert [off for _, off in everything.locations()] == offsets
    assert recordio.unpack(everything.read_at(str(FIX / "images0.rec"), 328))[0].label == 2.0


@pytest.mark.parametrize("indexed", [False, True])
def test_pickled_split_continues_at_the_same_record(indexed):
    kw = dict(index_path=f"{FIX / 'images0.idx'};{FIX / 'images1.idx'}") if indexed else {}
    split = RecordSplit(f"{FIX / 'images0.rec'};{FIX / 'images1.rec'}", 0, 1, **kw)
    head = [recordio.unpack(split.next())[0].label for _ in range(8)]
    assert len(split) == 12                       # asking for the length mid-epoch changes nothing
    copy = pickle.loads(pickle.dumps(split))
    assert labels(copy) == labels(split) == [8.0, 9.0, 10.0, 11.0]
    assert head == [float(i) for i in range(8)]
    copy.reset()
    assert labels(copy) == [float(i) for i in range(12)]


def test_next_returns_none_at_end():
    split = RecordSplit(str(FIX / "images1.rec"), part_index=1, num_parts=2)
    got = []
    while True:
        record = split.next()
        if record is None:
            break
        got.append(recordio.unpack(record)[0].label)
    assert got == [10.0, 11.0]  # two-file 'n=2' puts all of images1 in part 1; alone it splits
    assert split.next() is None


def test_directory_regex_and_empty_files(tmp_path):
    shutil.copy(FIX / "images0.rec", tmp_path / "a0.rec")
    shutil.copy(FIX / "images1.rec", tmp_path / "a1.rec")
    (tmp_path / "a2.rec").write_bytes(b"")
    (tmp_path / "b.txt").write_bytes(b"1234")
    all_labels = [float(i) for i in range(12)]
    regex = RecordSplit(str(tmp_path / r"a\d\.rec"))
    assert [os.path.basename(p) for p, _ in regex.files] == ["a0.rec", "a1.rec"] or \
        [os.path.basename(p) for p, _ in regex.files] == ["a1.rec", "a0.rec"]
    assert sorted(labels(regex)) == all_labels
    listed = RecordSplit(f"{tmp_path / 'a0.rec'};{tmp_path / 'a2.rec'};{tmp_path / 'a1.rec'}")
    assert [os.path.basename(p) for p, _ in listed.files] == ["a0.rec", "a1.rec"]  # empty file dropped
    assert labels(listed) == all_labels
    sub = tmp_path / "d"
    sub.mkdir()
    shutil.copy(FIX / "images1.rec", sub / "x.rec")
    (sub / "empty.rec").write_bytes(b"")
    assert labels(RecordSplit(str(sub))) == [7.0, 8.0, 9.0, 10.0, 11.0]
    assert expand_uri(str(sub)) == [(str(sub / "x.rec"), 1088)]


def test_bad_inputs(tmp_path):
    (tmp_path / "odd.rec").write_bytes(b"12345")
    with pytest.raises(MXNetError, match="5 bytes, not a multiple of 4"):
        RecordSplit(str(tmp_path / "odd.rec"))
    (tmp_path / "empty.rec").write_bytes(b"")
    with pytest.raises(MXNetError, match="cannot find any non-empty file"):
        RecordSplit(str(tmp_path / "empty.rec"))
    with pytest.raises(FileNotFoundError, match="missing.rec"):
        RecordSplit(str(tmp_path) + "/missing.rec;" + str(FIX / "images0.rec"))
    with pytest.raises(ValueError, match="part_index=2 with num_parts=2"):
        RecordSplit(str(FIX / "images0.rec"), part_index=2, num_parts=2)
    with pytest.raises(ValueError, match="num_parts=0"):
        RecordSplit(str(FIX / "images0.rec"), num_parts=0)
    with pytest.raises(ValueError, match="one per file"):
        RecordSplit(f"{FIX / 'images0.rec'};{FIX / 'images1.rec'}", index_path=str(FIX / "images0.idx"))


def test_indexed_two_files_and_shuffle():
    uri = f"{FIX / 'images0.rec'};{FIX / 'images1.rec'}"
    idx = f"{FIX / 'images0.idx'};{FIX / 'images1.idx'}"
    parts = [labels(RecordSplit(uri, k, 3, index_path=idx)) for k in range(3)]
    assert parts == [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]
    split = RecordSplit(uri, 1, 2, index_path=idx, shuffle=True, seed=3)
    epochs = []
    for _ in range(4):
        epochs.append(labels(split))
        split.reset()
    assert all(sorted(e) == [6.0, 7.0, 8.0, 9.0, 10.0, 11.0] for e in epochs)
    assert len({tuple(e) for e in epochs}) > 1  # reshuffled per epoch
    again = RecordSplit(uri, 1, 2, index_path=idx, shuffle=True, seed=3)
    assert labels(again) == epochs[0]            # seeded


def test_byte_range_shuffle_is_a_permutation():
    split = RecordSplit(str(FIX / "images0.rec"), shuffle=True, seed=1)
    got = labels(split)
    assert sorted(got) == [float(i) for i in range(7)]


def _write_files(folder, sizes_per_file, magic_at):
    """Record i's payload: i as 4 bytes then filler; magic words at the chosen aligned slots."""
    paths, payloads, counter = [], [], 0
    for f, sizes in enumerate(sizes_per_file):
        path = os.path.join(folder, f"f{f}.rec")
        with recordio.MXRecordIO(path, "w") as writer:
            for size in sizes:
                filler = bytes(range(256)) * (size // 256 + 1)
                body = bytearray(struct.pack("<I", counter) + filler)[:size + 4]
                for slot in magic_at:
                    at = 4 * slot
                    if at + 4 <= len(body):
                        body[at:at + 4] = MAGIC
                writer.write(bytes(body))
                payloads.append(bytes(body))
                counter += 1
        paths.append(path)
    return paths, payloads


@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.lists(st.integers(0, 300), min_size=0, max_size=12), min_size=1, max_size=3),
       magic_at=st.sets(st.integers(0, 60), max_size=4))
def test_every_partition_covers_each_record_once_in_order(sizes, magic_at):
    if not any(sizes):
        sizes = [[1]]
    with tempfile.TemporaryDirectory() as folder:
        paths, payloads = _write_files(folder, sizes, magic_at)
        uri = ";".join(paths)
        for n in range(1, 9):
            joined = []
            for k in range(n):
                joined.extend(RecordSplit(uri, k, n))
            assert joined == payloads, n
        idx_paths = []
        for path in paths:   # an index per file, written by reading the file sequentially
            idx = path[:-4] + ".idx"
            with recordio.MXRecordIO(path, "r") as reader, open(idx, "w") as out:
                key = 0
                while True:
                    pos = reader.tell()
                    if reader.read() is None:
                        break
                    out.write(f"{key}\t{pos}\n")
                    key += 1
            idx_paths.append(idx)
        kept = [(p, i) for p, i, s in zip(paths, idx_paths, sizes) if s]
        for n in (1, 3, 8):
            joined = []
            for k in range(n):
                joined.extend(RecordSplit(";".join(p for p, _ in kept), k, n,
                                          index_path=";".join(i for _, i in kept)))
            assert joined == payloads, n
