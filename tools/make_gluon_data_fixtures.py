"""Write tests/fixtures/gluon_data/: an image RecordIO file packed by MXNet 2.0 and what MXNet's
``gluon.data.vision.ImageRecordDataset`` / ``ImageListDataset`` read back from it.

Run with the MXNet 2.0 interpreter (it needs no Pillow: the PNGs are encoded here with zlib):

    python tools/make_gluon_data_fixtures.py
"""
from __future__ import annotations

import json
import os
import struct
import zlib

import numpy as np

import mxnet as mx
from mxnet.gluon.data.vision import ImageListDataset, ImageRecordDataset

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures', 'gluon_data')


def png_bytes(pixels: np.ndarray) -> bytes:
    """A minimal 8-bit PNG (gray for 2-d input, RGB for HxWx3), no filtering."""
    height, width = pixels.shape[:2]
    colour = 0 if pixels.ndim == 2 else 2
    raw = b''.join(b'\x00' + pixels[row].tobytes() for row in range(height))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack('>I', len(body)) + kind + body + struct.pack('>I', zlib.crc32(kind + body))
    header = struct.pack('>IIBBBBB', width, height, 8, colour, 0, 0, 0)
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', header) + chunk(b'IDAT', zlib.compress(raw))
            + chunk(b'IEND', b''))


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.RandomState(20)
    images = [rng.randint(0, 256, (4, 6, 3)).astype(np.uint8),
              rng.randint(0, 256, (5, 3, 3)).astype(np.uint8),
              rng.randint(0, 256, (3, 4)).astype(np.uint8)]
    labels = [3.0, [1.0, 2.5], 0.5]
    rec, idx = os.path.join(OUT, 'images.rec'), os.path.join(OUT, 'images.idx')
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, 'w')
    for i, (img, label) in enumerate(zip(images, labels)):
        flag = 0 if np.isscalar(label) else len(label)
        writer.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(flag, label, i, 0), png_bytes(img)))
    writer.close()

    expected = {}
    for flag in (1, 0):
        dataset = ImageRecordDataset(rec, flag=flag)
        for i in range(len(dataset)):
            pixels, label = dataset[i]
            expected[f'rec_flag{flag}_{i}'] = pixels.asnumpy()
            expected[f'rec_label_{i}'] = np.asarray(label, dtype=np.float32)
    for i, img in enumerate(images):
        with open(os.path.join(OUT, f'img{i}.png'), 'wb') as fout:
            fout.write(png_bytes(img))
    with open(os.path.join(OUT, 'images.lst'), 'w') as fout:
        fout.write('0\t4\timg0.png\n7\t1.5\t-2\timg2.png\n')
    listed = ImageListDataset(OUT, 'images.lst', flag=1)
    for i in range(len(listed)):
        pixels, label = listed[i]
        expected[f'lst_{i}'] = pixels.asnumpy()
        expected[f'lst_label_{i}'] = label.asnumpy()
    np.savez(os.path.join(OUT, 'expected.npz'), **expected)
    with open(os.path.join(OUT, 'README.json'), 'w') as fout:
        json.dump({'mxnet': mx.__version__, 'generator': 'tools/make_gluon_data_fixtures.py'}, fout)


if __name__ == '__main__':
    main()
