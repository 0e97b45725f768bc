"""mx.io's Python iterators and the CSV / MNIST file iterators, checked against NumPy and the
batches MXNet 2.0 produced for the same inputs (written out by hand below)."""
import struct
import warnings

import numpy as np
import pytest

import mxjax as mx
from mxjax import io as mio
from mxjax.base import MXNetError


def _rows(batch):
    return [d.asnumpy().tolist() for d in batch.data], [lbl.asnumpy().tolist() for lbl in batch.label]


def _epochs(it, n):
    out = []
    for _ in range(n):
        out.append([(b.pad, *_rows(b)) for b in it])
        it.reset()
    return out


# ----------------------------------------------------------------------------- DataDesc / DataBatch / DataIter

def test_data_desc_fields_and_helpers():
    desc = mio.DataDesc("x", (4, 3), np.int32, "NTC")
    assert tuple(desc) == ("x", (4, 3)) and desc.name == "x" and desc.shape == (4, 3)
    assert desc.dtype is np.int32 and desc.layout == "NTC"
    assert repr(desc) == "DataDesc[x,(4, 3),<class 'numpy.int32'>,NTC]"
    default = mio.DataDesc("y", (2,))
    assert default.dtype is np.float32 and default.layout == "NCHW"
    assert mio.DataDesc.get_batch_axis("TNC") == 1 and mio.DataDesc.get_batch_axis(None) == 0
    assert mio.DataDesc.get_batch_axis("CHW") == -1
    listed = mio.DataDesc.get_list([("a", (1, 2)), ("b", (3,))], [("a", np.float16), ("b", np.int8)])
    assert [(d.name, d.shape, d.dtype) for d in listed] == [("a", (1, 2), np.float16), ("b", (3,), np.int8)]
    assert [d.dtype for d in mio.DataDesc.get_list([("a", (1,))], None)] == [np.float32]


def test_data_batch_str_and_checks():
    batch = mio.DataBatch([mx.nd.zeros((2, 3))], [mx.nd.zeros((2,))], pad=1, index=np.arange(2), bucket_key=5)
    assert str(batch) == "DataBatch: data shapes: [(2, 3)] label shapes: [(2,)]"
    assert batch.pad == 1 and batch.bucket_key == 5 and batch.provide_data is None
    assert str(mio.DataBatch([mx.nd.zeros((1,))])) == "DataBatch: data shapes: [(1,)] label shapes: None"
    with pytest.raises(AssertionError, match="list"):
        mio.DataBatch(mx.nd.zeros((2,)))
    with pytest.raises(AssertionError, match="label"):
        mio.DataBatch([mx.nd.zeros((2,))], label=mx.nd.zeros((2,)))


def test_data_iter_base_is_empty_and_subclassable():
    assert list(mio.DataIter()) == []

    class Count(mio.DataIter):
        def __init__(self):
            super().__init__(batch_size=2)
            self.i = 0

        def iter_next(self):
            self.i += 1
            return self.i <= 2

        def getdata(self):
            return [mx.nd.full((2,), self.i)]

        def getlabel(self):
            return []

        def getpad(self):
            return 0

    got = [(b.data[0].asnumpy().tolist(), b.pad, b.index) for b in Count()]
    assert got == [([1.0, 1.0], 0, None), ([2.0, 2.0], 0, None)]


# ----------------------------------------------------------------------------- NDArrayIter

DATA = np.arange(10)


@pytest.mark.parametrize("policy, expected", [
    ("pad", [[(0, [[0, 1, 2, 3]]), (0, [[4, 5, 6, 7]]), (2, [[8, 9, 0, 1]])]] * 3),
    ("discard", [[(0, [[0, 1, 2, 3]]), (0, [[4, 5, 6, 7]])]] * 3),
    # the tail [8, 9] opens the next epoch (pad reports the carried count), which then ends exactly
    ("roll_over", [[(0, [[0, 1, 2, 3]]), (0, [[4, 5, 6, 7]])],
                   [(2, [[8, 9, 0, 1]]), (0, [[2, 3, 4, 5]]), (0, [[6, 7, 8, 9]])],
                   [(0, [[0, 1, 2, 3]]), (0, [[4, 5, 6, 7]])]]),
])
def test_ndarray_iter_last_batch_policies(policy, expected):
    it = mio.NDArrayIter(DATA, DATA * 10, batch_size=4, last_batch_handle=policy)
    got = _epochs(it, 3)
    assert [[(pad, data) for pad, data, _ in epoch] for epoch in got] == expected
    for epoch in got:
        for _, data, label in epoch:
            assert label == [[10 * v for v in data[0]]]


def test_ndarray_iter_pad_longer_than_data_tiles():
    (batch,) = list(mio.NDArrayIter(np.arange(3), batch_size=8))
    assert batch.pad == 5 and batch.data[0].asnumpy().tolist() == [0, 1, 2, 0, 1, 2, 0, 1]


def test_ndarray_iter_hard_reset_drops_roll_over():
    it = mio.NDArrayIter(DATA, batch_size=4, last_batch_handle="roll_over")
    list(it)
    it.hard_reset()
    assert next(it).data[0].asnumpy().tolist() == [0, 1, 2, 3]


def test_ndarray_iter_names_order_and_descs():
    it = mio.NDArrayIter({"b": np.ones((5, 2)), "a": np.zeros((5,), np.int64)},
                         [np.ones(5), np.zeros(5)], batch_size=2)
    assert [(d.name, d.shape, d.dtype) for d in it.provide_data] == [("a", (2,), np.float32),
                                                                     ("b", (2, 2), np.float32)]
    assert [d.name for d in it.provide_label] == ["_0_softmax_label", "_1_softmax_label"]
    batch = next(it)
    assert [d.shape for d in batch.data] == [(2,), (2, 2)]
    assert type(batch.data[0]) is mx.nd.NDArray and batch.data[0].dtype == np.float32
    named = mio.NDArrayIter(np.zeros((3, 1)), np.zeros(3), data_name="img", label_name="y")
    assert [d.name for d in named.provide_data + named.provide_label] == ["img", "y"]


def test_ndarray_iter_keeps_np_arrays_and_dtype():
    src = mx.np.array(np.arange(6, dtype=np.float64).reshape(3, 2), dtype="float64")
    batch = next(mio.NDArrayIter(src, batch_size=2))
    assert isinstance(batch.data[0], mx.np.ndarray) and batch.data[0].dtype == np.float64
    tail = list(mio.NDArrayIter(src, batch_size=2))[-1]
    assert isinstance(tail.data[0], mx.np.ndarray) and tail.data[0].asnumpy().tolist() == [[4, 5], [0, 1]]


def test_ndarray_iter_shuffle_composes_numpy_permutations():
    data = np.arange(5)
    np.random.seed(3)
    it = mio.NDArrayIter(data, data * 2, batch_size=5, shuffle=True)
    first = next(it)
    it.reset()
    second = next(it)
    np.random.seed(3)
    idx = np.arange(5)
    np.random.shuffle(idx)
    order1 = data[idx]
    np.random.shuffle(idx)
    order2 = order1[idx]
    assert first.data[0].asnumpy().tolist() == order1.tolist()
    assert first.label[0].asnumpy().tolist() == (2 * order1).tolist()
    assert second.data[0].asnumpy().tolist() == order2.tolist()


def test_ndarray_iter_bad_input():
    with pytest.raises(ValueError, match="batch_size"):
        mio.NDArrayIter(DATA, batch_size=0)
    with pytest.raises(ValueError, match="last_batch_handle"):
        mio.NDArrayIter(DATA, batch_size=2, last_batch_handle="wrap")
    with pytest.raises(ValueError, match="'softmax_label' has 3 examples"):
        mio.NDArrayIter(DATA, np.zeros(3), batch_size=2)
    with pytest.raises(TypeError, match="str"):
        mio.NDArrayIter("abc", batch_size=2)
    with pytest.raises(AssertionError):
        mio.NDArrayIter(None)


# ----------------------------------------------------------------------------- ResizeIter / PrefetchingIter

def test_resize_iter_cycles_the_inner_iterator():
    it = mio.ResizeIter(mio.NDArrayIter(DATA, batch_size=3), 5)
    assert it.batch_size == 3 and it.provide_data[0].shape == (3,)
    got = [(pad, data[0]) for pad, data, _ in _epochs(it, 2)[1]]
    assert got == [(0, [0, 1, 2]), (0, [3, 4, 5]), (0, [6, 7, 8]), (2, [9, 0, 1]), (0, [0, 1, 2])]


def test_prefetching_iter_joins_and_renames():
    it = mio.PrefetchingIter([mio.NDArrayIter(DATA, batch_size=3), mio.NDArrayIter(DATA + 100, batch_size=3)],
                             rename_data=[{"data": "x"}, {"data": "y"}])
    assert [(d.name, d.shape) for d in it.provide_data] == [("x", (3,)), ("y", (3,))]
    assert it.batch_size == 3
    for epoch in _epochs(it, 2):
        assert [(pad, data) for pad, data, _ in epoch] == [
            (0, [[0, 1, 2], [100, 101, 102]]), (0, [[3, 4, 5], [103, 104, 105]]),
            (0, [[6, 7, 8], [106, 107, 108]]), (2, [[9, 0, 1], [109, 100, 101]])]
    it.close()


def test_prefetching_iter_reports_errors():
    class Broken(mio.NDArrayIter):
        def next(self):
            raise RuntimeError("disk gone")

    it = mio.PrefetchingIter(Broken(DATA, batch_size=2))
    with pytest.raises(RuntimeError, match="disk gone"):
        next(it)
    uneven = mio.PrefetchingIter([mio.NDArrayIter(DATA, batch_size=5), mio.NDArrayIter(DATA[:5], batch_size=5)])
    next(uneven)
    with pytest.raises(AssertionError, match="different numbers"):
        next(uneven)


# ----------------------------------------------------------------------------- CSVIter

@pytest.fixture
def csv_files(tmp_path):
    data = tmp_path / "d.csv"
    np.savetxt(data, np.arange(30).reshape(10, 3), delimiter=",", fmt="%g")
    label = tmp_path / "l.csv"
    np.savetxt(label, np.arange(10), delimiter=",", fmt="%g")
    return str(data), str(label)


def test_csv_iter_round_batch_matches_mxnet(csv_files):
    data, label = csv_files
    it = mio.CSVIter(data_csv=data, data_shape=(3,), label_csv=label, batch_size=4)
    assert [(d.name, d.shape, d.dtype) for d in it.provide_data] == [("data", (4, 3), np.float32)]
    assert [(d.name, d.shape) for d in it.provide_label] == [("softmax_label", (4,))]
    got = []
    for _ in range(3):
        got.append([(b.pad, b.index.tolist(), b.label[0].asnumpy().tolist()) for b in it])
        it.reset()
    # MXNet 2.0: the wrapped rows 0, 1 are consumed, so the second epoch starts at row 2.
    assert got[0] == [(0, [0, 1, 2, 3], [0, 1, 2, 3]), (0, [4, 5, 6, 7], [4, 5, 6, 7]),
                      (2, [8, 9, 0, 1], [8, 9, 0, 1])]
    assert got[1] == [(0, [2, 3, 4, 5], [2, 3, 4, 5]), (0, [6, 7, 8, 9], [6, 7, 8, 9])]
    assert got[2] == got[0]
    it.reset()
    first = next(it)
    assert isinstance(first.data[0], mx.np.ndarray) and first.index.dtype == np.uint64
    np.testing.assert_array_equal(first.data[0].asnumpy(), np.arange(12).reshape(4, 3))


def test_csv_iter_without_round_batch_keeps_previous_rows(csv_files):
    it = mio.CSVIter(data_csv=csv_files[0], data_shape=(3,), batch_size=4, round_batch=False)
    last = list(it)[-1]
    assert last.pad == 2 and last.index.tolist() == [8, 9, 6, 7]
    assert last.data[0].asnumpy()[:, 0].tolist() == [24, 27, 18, 21]
    assert last.label[0].asnumpy().tolist() == [0, 0, 0, 0]


def test_csv_iter_shapes_dtype_and_directory(tmp_path):
    (tmp_path / "dir").mkdir()
    np.savetxt(tmp_path / "dir" / "a.csv", [[1, 2, 3], [4, 5, 6]], delimiter=",", fmt="%g")
    np.savetxt(tmp_path / "dir" / "b.csv", [[7, 8, 9]], delimiter=",", fmt="%g")
    np.savetxt(tmp_path / "lab.csv", [[1, 2], [3, 4], [5, 6]], delimiter=",", fmt="%g")
    it = mio.CSVIter(data_csv=str(tmp_path / "dir"), data_shape=(1, 3), label_csv=str(tmp_path / "lab.csv"),
                     label_shape=(2,), batch_size=2, dtype="int32")
    batches = list(it)
    assert batches[0].data[0].shape == (2, 1, 3) and batches[0].data[0].dtype == np.int32
    assert batches[0].label[0].dtype == np.int32
    assert batches[1].data[0].asnumpy().ravel().tolist() == [7, 8, 9, 1, 2, 3]
    assert batches[1].label[0].asnumpy().tolist() == [[5, 6], [1, 2]] and batches[1].pad == 1


def test_csv_iter_bad_input(tmp_path, csv_files):
    data, label = csv_files
    with pytest.raises(FileNotFoundError, match="nofile.csv"):
        mio.CSVIter(data_csv=str(tmp_path / "nofile.csv"), data_shape=(3,), batch_size=1)
    with pytest.raises(MXNetError, match="row 1 .* has 3 values but the data shape needs 2"):
        mio.CSVIter(data_csv=data, data_shape=(2,), batch_size=1)
    short = tmp_path / "short.csv"
    short.write_text("1\n2\n")
    with pytest.raises(MXNetError, match="has 2 rows but data_csv"):
        mio.CSVIter(data_csv=data, data_shape=(3,), label_csv=str(short), batch_size=2)
    with pytest.raises(MXNetError, match="batch_size"):
        mio.CSVIter(data_csv=data, data_shape=(3,), batch_size=0)
    with pytest.raises(MXNetError, match="data_shape"):
        mio.CSVIter(data_csv=data, data_shape=(0,), batch_size=2)
    bad = tmp_path / "bad.csv"
    bad.write_text("1,x,3\n")
    with pytest.raises(MXNetError, match="not a number"):
        mio.CSVIter(data_csv=str(bad), data_shape=(3,), batch_size=1)


def test_csv_iter_wraps_more_than_once_when_data_is_short(tmp_path):
    path = tmp_path / "d3.csv"
    path.write_text("1,2,3\n4,5,6\n7,8,9\n")
    it = mio.CSVIter(data_csv=str(path), data_shape=(3,), batch_size=5)
    (batch,) = list(it)
    assert batch.pad == 2 and batch.index.tolist() == [0, 1, 2, 0, 1]
    it.reset()
    (again,) = list(it)  # MXNet fails a check here; mxjax keeps cycling over the rows
    assert again.index.tolist() == [2, 0, 1, 2, 0] and again.pad == 4


def test_legacy_arrays_when_numpy_semantics_are_off(csv_files):
    mx.util.reset_np()
    batch = next(mio.CSVIter(data_csv=csv_files[0], data_shape=(3,), batch_size=4))
    assert type(batch.data[0]) is mx.nd.NDArray and type(batch.label[0]) is mx.nd.NDArray


def test_libsvm_iter_is_unsupported():
    with pytest.raises(MXNetError, match="sparse CSRNDArray"):
        mio.LibSVMIter(data_libsvm="x.libsvm", data_shape=(10,), batch_size=2)


# ----------------------------------------------------------------------------- MNISTIter

def _write_idx(path, arr):
    with open(path, "wb") as f:
        if arr.ndim == 3:
            f.write(struct.pack(">iiii", 2051, *arr.shape))
        else:
            f.write(struct.pack(">ii", 2049, arr.shape[0]))
        f.write(arr.astype(np.uint8).tobytes())


@pytest.fixture
def mnist_files(tmp_path):
    images = np.random.RandomState(0).randint(0, 256, (10, 4, 5))
    _write_idx(tmp_path / "img", images)
    _write_idx(tmp_path / "lab", np.arange(10) % 10)
    return str(tmp_path / "img"), str(tmp_path / "lab"), images


def test_mnist_iter_batches(mnist_files):
    img, lab, pixels = mnist_files
    it = mio.MNISTIter(image=img, label=lab, batch_size=3, shuffle=False, silent=True)
    batches = list(it)
    assert len(batches) == 3  # the tenth image would start a short batch: dropped, as MXNet does
    assert [d.shape for d in it.provide_data] == [(3, 1, 4, 5)] and it.provide_label[0].shape == (3,)
    np.testing.assert_array_equal(batches[1].data[0].asnumpy(), pixels[3:6, None].astype(np.float32) / 256)
    assert batches[1].label[0].asnumpy().tolist() == [3, 4, 5] and batches[1].pad == 0
    assert batches[1].index.tolist() == [3, 4, 5]
    flat = next(mio.MNISTIter(image=img, label=lab, batch_size=3, shuffle=False, flat=True, silent=True))
    assert flat.data[0].shape == (3, 20)


def test_mnist_iter_parts_and_shuffle(mnist_files):
    img, lab, _ = mnist_files
    part = mio.MNISTIter(image=img, label=lab, batch_size=2, shuffle=False, num_parts=3, part_index=2)
    assert [b.label[0].asnumpy().tolist() for b in part] == [[6, 7], [8, 9]]
    shuffled = mio.MNISTIter(image=img, label=lab, batch_size=5, seed=1, silent=True)
    epoch1 = sum((b.label[0].asnumpy().tolist() for b in shuffled), [])
    shuffled.reset()
    epoch2 = sum((b.label[0].asnumpy().tolist() for b in shuffled), [])
    assert sorted(epoch1) == list(range(10)) and epoch1 == epoch2 and epoch1 != list(range(10))


def test_mnist_iter_bad_input(tmp_path, mnist_files):
    img, lab, _ = mnist_files
    with pytest.raises(FileNotFoundError, match="missing-images"):
        mio.MNISTIter(image=str(tmp_path / "missing-images"), label=lab)
    with pytest.raises(MXNetError, match="magic number"):
        (tmp_path / "junk").write_bytes(b"\x00" * 16)
        mio.MNISTIter(image=str(tmp_path / "junk"), label=lab)
    with pytest.raises(MXNetError, match="holds labels"):
        mio.MNISTIter(image=lab, label=lab)
    with pytest.raises(MXNetError, match="fewer than batch_size"):
        mio.MNISTIter(image=img, label=lab, batch_size=11)
    with pytest.raises(MXNetError, match="part_index"):
        mio.MNISTIter(image=img, label=lab, num_parts=2, part_index=2)


def test_native_iter_next_protocol_without_next(csv_files):
    it = mio.CSVIter(data_csv=csv_files[0], data_shape=(3,), batch_size=4)
    firsts = []
    while it.iter_next():
        firsts.append(it.getdata().asnumpy()[0, 0])
        assert it.getpad() in (0, 2) and it.getlabel().shape == (4,)
    assert firsts == [0, 12, 24]
    assert len(it) == 0  # unknown in advance, as MXNet reports


def test_native_iters_warn_about_unknown_arguments(csv_files, mnist_files):
    with pytest.warns(UserWarning, match="CSVIter: ignoring unknown arguments \\['colour'\\]"):
        mio.CSVIter(data_csv=csv_files[0], data_shape=(3,), batch_size=4, colour=1)
    img, lab, _ = mnist_files
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # input_shape is accepted silently, as MXNet's helpers pass it
        mio.MNISTIter(image=img, label=lab, batch_size=2, input_shape=(1, 4, 5), silent=True)


def test_csv_iter_reset_mid_epoch_starts_from_the_first_row(csv_files):
    it = mio.CSVIter(data_csv=csv_files[0], data_shape=(3,), batch_size=4)
    next(it)  # the prefetch thread has read the wrapped last batch already; it was not handed out
    it.reset()
    assert [b.index.tolist() for b in it] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]
    it.reset()
    it.reset()  # a second reset with nothing consumed rewinds fully
    assert next(it).index.tolist() == [0, 1, 2, 3]
