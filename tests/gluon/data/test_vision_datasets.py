"""gluon.data.vision datasets: tiny files in the real on-disk formats, checked value by value
against NumPy / Pillow, and a RecordIO file packed and read back by MXNet 2.0 (fixtures).
"""
import gzip
import inspect
import os
import pickle
import struct
import tarfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import mxjax as mx
import mxjax.recordio as recordio
from mxjax import base
from mxjax.base import MXNetError
from mxjax.gluon.data import vision

FIXTURES = Path(__file__).parent / '../../fixtures/gluon_data'


def test_public_names_match_mxnet():
    assert vision.datasets.__all__ == ['MNIST', 'FashionMNIST', 'CIFAR10', 'CIFAR100',
                                       'ImageRecordDataset', 'ImageFolderDataset', 'ImageListDataset']
    for name in vision.datasets.__all__:
        assert getattr(vision, name) is getattr(vision.datasets, name)


def test_default_roots_are_under_mxnet_data_dir():
    for cls, sub in [(vision.MNIST, 'mnist'), (vision.FashionMNIST, 'fashion-mnist'),
                     (vision.CIFAR10, 'cifar10'), (vision.CIFAR100, 'cifar100')]:
        root = inspect.signature(cls).parameters['root'].default
        assert root == os.path.join(base.data_dir(), 'datasets', sub)
    params = inspect.signature(vision.CIFAR100).parameters
    assert list(params) == ['root', 'fine_label', 'train', 'transform']
    assert params['fine_label'].default is False


# ---- MNIST / FashionMNIST -------------------------------------------------------------------

def _write_idx(path, magic, dims, payload, compress=True):
    raw = struct.pack('>I', magic) + struct.pack(f'>{len(dims)}I', *dims) + payload
    if compress:
        with gzip.open(path, 'wb') as fout:
            fout.write(raw)
    else:
        Path(path).write_bytes(raw)


def _make_mnist(root, prefix, count, seed, compress=True):
    rng = np.random.RandomState(seed)
    images = rng.randint(0, 256, (count, 28, 28)).astype(np.uint8)
    labels = rng.randint(0, 10, count).astype(np.uint8)
    suffix = '.gz' if compress else ''
    _write_idx(root / f'{prefix}-images-idx3-ubyte{suffix}', 0x803, (count, 28, 28), images.tobytes(),
               compress)
    _write_idx(root / f'{prefix}-labels-idx1-ubyte{suffix}', 0x801, (count,), labels.tobytes(), compress)
    return images, labels


@pytest.mark.parametrize('cls', [vision.MNIST, vision.FashionMNIST])
def test_mnist_reads_idx_files(tmp_path, cls):
    images, labels = _make_mnist(tmp_path, 'train', 3, 0)
    test_images, test_labels = _make_mnist(tmp_path, 't10k', 2, 1)
    train = cls(root=str(tmp_path))
    assert len(train) == 3
    for i in range(3):
        x, y = train[i]
        assert isinstance(x, mx.np.ndarray) and x.dtype == np.uint8 and x.shape == (28, 28, 1)
        np.testing.assert_array_equal(x.asnumpy()[..., 0], images[i])
        assert isinstance(y, mx.np.ndarray) and y.dtype == np.int32 and y.shape == ()
        assert int(y) == labels[i]
    xs, ys = train[1:3]  # a slice gives the batch of samples, as MXNet's arrays do
    np.testing.assert_array_equal(xs.asnumpy()[..., 0], images[1:3])
    np.testing.assert_array_equal(ys.asnumpy(), labels[1:3].astype(np.int32))
    test = cls(root=str(tmp_path), train=False)
    assert len(test) == 2
    np.testing.assert_array_equal(test[1][0].asnumpy()[..., 0], test_images[1])
    assert int(test[1][1]) == test_labels[1]


def test_mnist_legacy_mode_types(tmp_path, nd_mode):
    images, labels = _make_mnist(tmp_path, 'train', 2, 3)
    x, y = vision.MNIST(root=str(tmp_path))[1]
    assert type(x) is mx.nd.NDArray and x.dtype == np.uint8
    assert type(y) is np.int32 and y == labels[1]


def test_mnist_accepts_uncompressed_files(tmp_path):
    images, labels = _make_mnist(tmp_path, 'train', 2, 4, compress=False)
    d = vision.MNIST(root=str(tmp_path))
    np.testing.assert_array_equal(d[0][0].asnumpy()[..., 0], images[0])


def test_mnist_missing_file_names_it_and_never_downloads(tmp_path):
    with pytest.raises(FileNotFoundError) as err:
        vision.MNIST(root=str(tmp_path / 'empty'))
    message = str(err.value)
    assert 'train-images-idx3-ubyte.gz' in message and str(tmp_path / 'empty') in message
    assert 'does not download' in message and 'gluon/dataset/mnist/' in message
    _make_mnist(tmp_path, 'train', 1, 0)
    with pytest.raises(FileNotFoundError, match='t10k-images-idx3-ubyte.gz'):
        vision.MNIST(root=str(tmp_path), train=False)


def test_mnist_rejects_inconsistent_files(tmp_path):
    _make_mnist(tmp_path, 'train', 3, 0)
    _write_idx(tmp_path / 'train-labels-idx1-ubyte.gz', 0x801, (2,), b'\x01\x02')
    with pytest.raises(ValueError, match='has 3 images but'):
        vision.MNIST(root=str(tmp_path))
    _write_idx(tmp_path / 'train-labels-idx1-ubyte.gz', 0x801, (5,), b'\x01\x02')
    with pytest.raises(ValueError, match='holds 2 bytes of data'):
        vision.MNIST(root=str(tmp_path))
    _write_idx(tmp_path / 'train-labels-idx1-ubyte.gz', 0x803, (1, 1, 1), b'\x01')
    with pytest.raises(ValueError, match='magic number 2049'):
        vision.MNIST(root=str(tmp_path))


def test_transform_argument_is_deprecated(tmp_path):
    _make_mnist(tmp_path, 'train', 1, 0)
    with pytest.raises(DeprecationWarning, match='dataset.transform_first'):
        vision.MNIST(root=str(tmp_path), transform=lambda x, y: (x, y))
    with pytest.raises(DeprecationWarning):
        vision.ImageFolderDataset(str(tmp_path), transform=lambda x, y: (x, y))


# ---- CIFAR ----------------------------------------------------------------------------------

def _cifar_rows(rng, count, label_bytes):
    labels = rng.randint(0, 100, (count, label_bytes)).astype(np.uint8)
    chw = rng.randint(0, 256, (count, 3, 32, 32)).astype(np.uint8)
    rows = np.concatenate([labels, chw.reshape(count, -1)], axis=1)
    return rows.tobytes(), chw.transpose(0, 2, 3, 1), labels.astype(np.int32)


def _make_cifar10(folder, seed=0):
    rng = np.random.RandomState(seed)
    folder.mkdir(parents=True, exist_ok=True)
    train = []
    for i in range(1, 6):
        raw, hwc, lab = _cifar_rows(rng, i % 2 + 1, 1)
        (folder / f'data_batch_{i}.bin').write_bytes(raw)
        train.append((hwc, lab[:, 0]))
    raw, hwc, lab = _cifar_rows(rng, 2, 1)
    (folder / 'test_batch.bin').write_bytes(raw)
    images = np.concatenate([t[0] for t in train])
    labels = np.concatenate([t[1] for t in train])
    return (images, labels), (hwc, lab[:, 0])


def _check_pairs(dataset, images, labels):
    assert len(dataset) == len(labels)
    for i in range(len(labels)):
        x, y = dataset[i]
        assert isinstance(x, mx.np.ndarray) and x.dtype == np.uint8 and x.shape == (32, 32, 3)
        np.testing.assert_array_equal(x.asnumpy(), images[i])
        assert isinstance(y, mx.np.ndarray) and y.dtype == np.int32 and int(y) == labels[i]


def test_cifar10_flat_layout(tmp_path):
    train, test = _make_cifar10(tmp_path)
    _check_pairs(vision.CIFAR10(root=str(tmp_path)), *train)
    _check_pairs(vision.CIFAR10(root=str(tmp_path), train=False), *test)


def test_cifar10_batches_bin_folder_and_archive(tmp_path):
    sub = tmp_path / 'src' / 'cifar-10-batches-bin'
    train, test = _make_cifar10(sub, seed=5)
    _check_pairs(vision.CIFAR10(root=str(tmp_path / 'src'), train=False), *test)
    root = tmp_path / 'home'
    root.mkdir()
    with tarfile.open(root / 'cifar-10-binary.tar.gz', 'w:gz') as tar:
        tar.add(sub, arcname='cifar-10-batches-bin')
    _check_pairs(vision.CIFAR10(root=str(root)), *train)
    assert (root / 'cifar-10-batches-bin' / 'data_batch_5.bin').is_file()


def test_cifar_missing_and_corrupt_files(tmp_path):
    with pytest.raises(FileNotFoundError) as err:
        vision.CIFAR10(root=str(tmp_path))
    assert 'data_batch_1.bin' in str(err.value) and 'cifar-10-binary.tar.gz' in str(err.value)
    (tmp_path / 'test.bin').write_bytes(b'\x00' * 3075)
    with pytest.raises(ValueError, match='not a multiple of the 3074-byte record size'):
        vision.CIFAR100(root=str(tmp_path), train=False)


@pytest.mark.parametrize('fine', [False, True])
def test_cifar100_coarse_and_fine_labels(tmp_path, fine):
    rng = np.random.RandomState(2)
    raw, hwc, labels = _cifar_rows(rng, 3, 2)
    (tmp_path / 'train.bin').write_bytes(raw)
    d = vision.CIFAR100(root=str(tmp_path), fine_label=fine)
    _check_pairs(d, hwc, labels[:, 1 if fine else 0])


def test_cifar_legacy_mode_types(tmp_path, nd_mode):
    _make_cifar10(tmp_path)
    x, y = vision.CIFAR10(root=str(tmp_path), train=False)[0]
    assert type(x) is mx.nd.NDArray and type(y) is np.int32


# ---- RecordIO / folder / list image datasets ------------------------------------------------

def test_image_record_dataset_matches_mxnet():
    expected = np.load(FIXTURES / 'expected.npz')
    rgb = vision.ImageRecordDataset(str(FIXTURES / 'images.rec'))
    gray = vision.ImageRecordDataset(str(FIXTURES / 'images.rec'), flag=0)
    assert len(rgb) == 3
    for i in range(3):
        x, label = rgb[i]
        assert isinstance(x, mx.np.ndarray) and x.dtype == np.uint8
        np.testing.assert_array_equal(x.asnumpy(), expected[f'rec_flag1_{i}'])
        np.testing.assert_array_equal(gray[i][0].asnumpy(), expected[f'rec_flag0_{i}'])
        np.testing.assert_array_equal(np.asarray(label, np.float32), expected[f'rec_label_{i}'])
    assert type(rgb[0][1]) is float and isinstance(rgb[1][1], np.ndarray)
    again = pickle.loads(pickle.dumps(rgb))
    np.testing.assert_array_equal(again[2][0].asnumpy(), expected['rec_flag1_2'])


def test_image_record_dataset_over_pack_img(tmp_path):
    rng = np.random.RandomState(9)
    imgs = [rng.randint(0, 256, (3, 4, 3)).astype(np.uint8) for _ in range(2)]
    writer = recordio.MXIndexedRecordIO(str(tmp_path / 'p.idx'), str(tmp_path / 'p.rec'), 'w')
    for i, img in enumerate(imgs):
        # pack_img takes BGR (OpenCV order); the dataset decodes to RGB.
        writer.write_idx(i, recordio.pack_img(recordio.IRHeader(0, float(i), i, 0), img[..., ::-1],
                                              img_fmt='.png'))
    writer.close()
    d = vision.ImageRecordDataset(str(tmp_path / 'p.rec'))
    for i, img in enumerate(imgs):
        x, y = d[i]
        np.testing.assert_array_equal(x.asnumpy(), img)
        assert y == float(i)


def _save_png(path, pixels):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(path, format='PNG')


def test_image_folder_dataset(tmp_path):
    rng = np.random.RandomState(4)
    pics = {name: rng.randint(0, 256, (3, 5, 3)).astype(np.uint8)
            for name in ['cat/b.png', 'cat/a.PNG', 'dog/c.png']}
    for name, px in pics.items():
        _save_png(tmp_path / name, px)
    (tmp_path / 'dog' / 'notes.txt').write_text('x')
    (tmp_path / 'readme.md').write_text('x')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        d = vision.ImageFolderDataset(str(tmp_path))
    messages = [str(w.message) for w in caught]
    assert any('readme.md, which is not a directory' in m for m in messages)
    assert any('notes.txt of type .txt. Only support .jpg, .jpeg, .png' in m for m in messages)
    assert d.synsets == ['cat', 'dog']
    assert d.items == [(str(tmp_path / 'cat' / 'a.PNG'), 0), (str(tmp_path / 'cat' / 'b.png'), 0),
                       (str(tmp_path / 'dog' / 'c.png'), 1)]
    x, y = d[1]
    assert isinstance(x, mx.np.ndarray) and x.dtype == np.uint8 and type(y) is int and y == 0
    np.testing.assert_array_equal(x.asnumpy(), pics['cat/b.png'])
    with pytest.warns(UserWarning, match='Ignoring'):
        g = vision.ImageFolderDataset(str(tmp_path), flag=0)[2][0]
    assert g.shape == (3, 5, 1)
    pil_gray = np.asarray(Image.fromarray(pics['dog/c.png']).convert('L'), dtype=np.int16)
    assert np.abs(g.asnumpy()[..., 0].astype(np.int16) - pil_gray).max() <= 1
    with pytest.raises(FileNotFoundError, match='is not a directory'):
        vision.ImageFolderDataset(str(tmp_path / 'nope'))


def test_image_list_dataset_from_lst_file_matches_mxnet():
    expected = np.load(FIXTURES / 'expected.npz')
    d = vision.ImageListDataset(str(FIXTURES), 'images.lst')
    assert len(d) == 2 and d._imgkeys == [0, 7]
    for i in range(2):
        x, label = d[i]
        np.testing.assert_array_equal(x.asnumpy(), expected[f'lst_{i}'])
        assert isinstance(label, mx.np.ndarray) and label.dtype == np.float32
        np.testing.assert_array_equal(label.asnumpy(), expected[f'lst_label_{i}'])


def test_image_list_dataset_from_entries(tmp_path):
    px = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    _save_png(tmp_path / 'a.png', px)
    d = vision.ImageListDataset(str(tmp_path), [[0, 'a.png'], [1.5, 2, 'a.png'], [[3, 4], 'a.png']])
    assert len(d) == 3
    labels = [d[i][1] for i in range(3)]
    for label, want in zip(labels, [[0.0], [1.5, 2.0], [3.0, 4.0]]):
        assert isinstance(label, mx.np.ndarray) and label.dtype == np.float32
        np.testing.assert_array_equal(label.asnumpy(), np.array(want, np.float32))
    np.testing.assert_array_equal(d[0][0].asnumpy(), px)
    with pytest.raises(ValueError, match="must be filename or list of valid entries, given <class 'int'>"):
        vision.ImageListDataset(str(tmp_path), 3)
    with pytest.raises(AssertionError, match='must be the image path'):
        vision.ImageListDataset(str(tmp_path), [[0, 1]])


def test_image_list_dataset_legacy_mode(tmp_path, nd_mode):
    _save_png(tmp_path / 'a.png', np.zeros((2, 2, 3), np.uint8))
    (tmp_path / 'l.lst').write_text('3\t2\t5\ta.png\n\n')
    x, label = vision.ImageListDataset(str(tmp_path), 'l.lst')[0]
    assert type(x) is mx.nd.NDArray and type(label) is mx.nd.NDArray
    np.testing.assert_array_equal(label.asnumpy(), np.array([2, 5], np.float32))


def test_corrupt_image_record_names_the_record(tmp_path):
    rec_path, idx_path = str(tmp_path / 'bad.rec'), str(tmp_path / 'bad.idx')
    writer = recordio.MXIndexedRecordIO(idx_path, rec_path, 'w')
    writer.write_idx(0, recordio.pack(recordio.IRHeader(0, 1.0, 0, 0), b'not an image at all'))
    writer.close()
    with pytest.raises(MXNetError, match=r"ImageRecordDataset: record 0 of .*bad\.rec"):
        vision.ImageRecordDataset(rec_path)[0]
