"""test_utils' data helpers: local MNIST / CIFAR-10 / bz2 files (never downloaded), DummyIter, im2rec path."""
import bz2
import gzip
import os
import struct
import zipfile

import numpy as np
import pytest

from mxjax import io as mio
from mxjax import test_utils as tu


def _idx_bytes(arr):
    head = struct.pack(">iiii", 2051, *arr.shape) if arr.ndim == 3 else struct.pack(">ii", 2049, arr.shape[0])
    return head + arr.astype(np.uint8).tobytes()


@pytest.fixture
def mnist_dir(tmp_path):
    rng = np.random.RandomState(0)
    arrays = {"train-images-idx3-ubyte": rng.randint(0, 256, (6, 28, 28)), "train-labels-idx1-ubyte": np.arange(6),
              "t10k-images-idx3-ubyte": rng.randint(0, 256, (4, 28, 28)), "t10k-labels-idx1-ubyte": np.arange(4) + 5}
    for name, arr in arrays.items():
        with gzip.open(tmp_path / (name + ".gz"), "wb") as f:
            f.write(_idx_bytes(arr))
    return tmp_path, arrays


def test_get_mnist_reads_local_archives(mnist_dir):
    path, arrays = mnist_dir
    out = tu.get_mnist(str(path))
    assert out["train_data"].shape == (6, 1, 28, 28) and out["train_data"].dtype == np.float32
    np.testing.assert_allclose(out["test_data"][:, 0], arrays["t10k-images-idx3-ubyte"] / 255.0, rtol=1e-6)
    assert out["train_label"].dtype == np.int8 and out["test_label"].tolist() == [5, 6, 7, 8]


def test_get_mnist_ubyte_and_iterator(mnist_dir):
    path, arrays = mnist_dir
    tu.get_mnist_ubyte(str(path))
    for name, arr in arrays.items():
        assert (path / name).read_bytes() == _idx_bytes(arr)
    train, val = tu.get_mnist_iterator(2, (784,), path=str(path))
    assert isinstance(train, mio.MNISTIter) and train.provide_data[0].shape == (2, 784)
    assert sorted(v for b in train for v in b.label[0].asnumpy().tolist()) == list(range(6))
    train3, _ = tu.get_mnist_iterator(2, (1, 28, 28), path=str(path))
    assert train3.provide_data[0].shape == (2, 1, 28, 28)
    assert sum(len(b.label[0]) for b in val) == 4


def test_missing_files_are_named_not_downloaded(tmp_path):
    with pytest.raises(FileNotFoundError, match="train-labels-idx1-ubyte.gz"):
        tu.get_mnist(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="does not download"):
        tu.get_mnist_ubyte(str(tmp_path / "m"))
    with pytest.raises(FileNotFoundError, match="cifar10-b9ac2870.zip"):
        tu.get_cifar10(str(tmp_path / "c"))
    with pytest.raises(FileNotFoundError, match="kdda.t.bz2"):
        tu.get_bz2_data(str(tmp_path), "kdda.t", "https://example.invalid/kdda.t.bz2", "kdda.t.bz2")


def test_get_cifar10_extracts_local_zip(tmp_path):
    with zipfile.ZipFile(tmp_path / "cifar10-b9ac2870.zip", "w") as zf:
        for name in ("train.rec", "test.rec", "train.lst", "test.lst"):
            zf.writestr(f"cifar/{name}", name)
    tu.get_cifar10(str(tmp_path))
    assert (tmp_path / "cifar" / "test.lst").read_text() == "test.lst"


def test_get_bz2_data_decompresses_and_removes_archive(tmp_path):
    (tmp_path / "d.bz2").write_bytes(bz2.compress(b"1 2:3\n" * 100))
    tu.get_bz2_data(str(tmp_path), "d.txt", "https://example.invalid/d.bz2", "d.bz2")
    assert (tmp_path / "d.txt").read_bytes() == b"1 2:3\n" * 100 and not (tmp_path / "d.bz2").exists()
    tu.get_bz2_data(str(tmp_path), "d.txt", "https://example.invalid/d.bz2", "d.bz2")  # present: no-op


def test_dummy_iter_repeats_first_batch():
    real = mio.NDArrayIter(np.arange(10), batch_size=4)
    dummy = tu.DummyIter(real)
    assert dummy.batch_size == 4 and dummy.provide_data == real.provide_data
    batches = [next(dummy) for _ in range(7)]
    assert all(b is batches[0] for b in batches)
    assert batches[0].data[0].asnumpy().tolist() == [0, 1, 2, 3]


def test_get_im2rec_path(tmp_path, monkeypatch):
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "im2rec.py").write_text("")
    monkeypatch.setenv("MXNET_HOME", str(tmp_path))
    assert tu.get_im2rec_path() == os.path.join(str(tmp_path), "tools", "im2rec.py")
    monkeypatch.setenv("MY_HOME", str(tmp_path / "nowhere"))
    with pytest.raises(IOError, match="im2rec.py"):
        tu.get_im2rec_path("MY_HOME")
    monkeypatch.delenv("MXNET_HOME")
    own = os.path.join(os.path.dirname(tu.__file__), "tools", "im2rec.py")
    if os.path.isfile(own):
        assert tu.get_im2rec_path() == own
    else:
        with pytest.raises(IOError, match="im2rec.py"):
            tu.get_im2rec_path()
