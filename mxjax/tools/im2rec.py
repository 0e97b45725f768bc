"""``python -m mxjax.tools.im2rec``: MXNet's im2rec, image folders to ``.lst`` lists to ``.rec``/``.idx``.

Two steps, with MXNet's command line:

* ``im2rec PREFIX ROOT --list [--recursive] ...`` walks ROOT and writes ``PREFIX.lst`` (or
  chunked / train / val / test lists): ``index<TAB>label...<TAB>relative path`` per image; with
  ``--recursive`` each sub-folder is one label, in sorted folder order.
* ``im2rec PREFIX ROOT [--resize N] [--quality Q] [--encoding .jpg|.png] ...`` reads every list
  whose path starts with PREFIX and packs its images into ``<list>.rec`` + ``<list>.idx``.

Images are decoded and encoded with Pillow instead of OpenCV, so ``--resize`` (bilinear) and
JPEG output can differ from MXNet's by a few levels; ``--pass-through`` copies the file bytes.
Records are always written in list order, also with ``--num-thread`` > 1.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Iterator, List, Optional, Sequence

import numpy as np

from .. import recordio
from .._atomic import atomic_write

__all__ = ["list_images", "write_list", "make_list", "read_list", "encode_image",
           "write_record", "main"]


def list_images(root: str, recursive: bool, exts: Sequence[str]) -> List[list]:
    """``[index, relative path, label]`` for each image under ``root`` (sorted by name).

    Without ``recursive`` only the files directly in ``root`` count, all with label 0; with it
    every folder holding images gets the next label in walk order (sub-folders sorted).
    """
    exts = {e.lower() for e in exts}
    items: List[list] = []
    if not recursive:
        for name in sorted(os.listdir(root)):
            path = os.path.join(root, name)
            if os.path.isfile(path) and os.path.splitext(name)[1].lower() in exts:
                items.append([len(items), os.path.relpath(path, root), 0])
        return items
    labels: dict = {}
    for folder, subdirs, names in os.walk(root, followlinks=True):
        subdirs.sort()
        for name in sorted(names):
            path = os.path.join(folder, name)
            if os.path.isfile(path) and os.path.splitext(name)[1].lower() in exts:
                label = labels.setdefault(folder, len(labels))
                items.append([len(items), os.path.relpath(path, root), label])
    for folder, label in labels.items():
        print(os.path.relpath(folder, root), label)
    return items


def write_list(path: str, items: Sequence[Sequence]) -> None:
    """Write ``[index, path, label, ...]`` items as ``index\\tlabel\\t...\\tpath`` lines, all at once (a
    failure midway keeps the old list)."""
    with atomic_write(path, "w") as out:
        for item in items:
            labels = "".join(f"{float(v):f}\t" for v in item[2:])
            out.write(f"{int(item[0])}\t{labels}{item[1]}\n")


def make_list(prefix: str, root: str, recursive: bool = False,
              exts: Sequence[str] = (".jpeg", ".jpg", ".png"), chunks: int = 1,
              train_ratio: float = 1.0, test_ratio: float = 0.0, shuffle: bool = True) -> List[str]:
    """Write the list file(s) for the images under ``root``; returns their paths."""
    items = list_images(root, recursive, exts)
    if shuffle:
        random.Random(100).shuffle(items)
    size = -(-len(items) // chunks) if items else 0
    written = []
    for c in range(chunks):
        chunk = items[c * size:(c + 1) * size]
        stem = prefix + (f"_{c}" if chunks > 1 else "")
        n_train, n_test = int(size * train_ratio), int(size * test_ratio)
        if train_ratio == 1.0:
            parts = [(stem + ".lst", chunk)]
        else:
            parts = []
            if test_ratio:
                parts.append((stem + "_test.lst", chunk[:n_test]))
            if train_ratio + test_ratio < 1.0:
                parts.append((stem + "_val.lst", chunk[n_test + n_train:]))
            parts.append((stem + "_train.lst", chunk[n_test:n_test + n_train]))
        for path, part in parts:
            write_list(path, part)
            written.append(path)
    return written


def read_list(path: str) -> Iterator[list]:
    """``[index, path, label, ...]`` per valid line of a ``.lst`` file; bad lines are reported
    on stderr and skipped."""
    with open(path) as lines:
        for number, line in enumerate(lines, 1):
            fields = [f.strip() for f in line.strip().split("\t")]
            if len(fields) < 3:
                print(f"im2rec: {path}:{number}: expected index, label(s) and path, got {line!r}",
                      file=sys.stderr)
                continue
            try:
                yield [int(fields[0]), fields[-1]] + [float(v) for v in fields[1:-1]]
            except ValueError as err:
                print(f"im2rec: {path}:{number}: {err}", file=sys.stderr)


def _load(path: str, color: int) -> np.ndarray:
    """The image as OpenCV's ``imread(path, color)`` lays it out (BGR / gray HxW / unchanged)."""
    with open(path, "rb") as f:
        data = f.read()
    return recordio._imdecode(data, color, "im2rec")


def _resize(img: np.ndarray, width: int, height: int) -> np.ndarray:
    from PIL import Image
    resized = Image.fromarray(img).resize((width, height), Image.BILINEAR)
    return np.asarray(resized)


def encode_image(item: Sequence, root: str, color: int = 1, resize: int = 0,
                 center_crop: bool = False, quality: int = 95, encoding: str = ".jpg",
                 pass_through: bool = False, pack_label: bool = False) -> Optional[bytes]:
    """The packed record for one list item, or None (with a message) if it cannot be read."""
    path = os.path.join(root, item[1])
    label = list(item[2:]) if len(item) > 3 and pack_label else item[2]
    header = recordio.IRHeader(0, label, int(item[0]), 0)
    try:
        if pass_through:
            with open(path, "rb") as f:
                return recordio.pack(header, f.read())
        img = _load(path, color)
        height, width = img.shape[:2]
        if center_crop:
            side = min(height, width)
            top, left = (height - side) // 2, (width - side) // 2
            img = img[top:top + side, left:left + side]
            height = width = side
        if resize:
            if height > width:
                img = _resize(img, resize, height * resize // width)
            else:
                img = _resize(img, width * resize // height, resize)
        return recordio.pack_img(header, img, quality=quality, img_fmt=encoding)
    except Exception as err:  # one unreadable image must not stop the whole conversion
        print(f"im2rec: skipping {path}: {type(err).__name__}: {err}", file=sys.stderr)
        return None


def write_record(lst_path: str, root: str, num_thread: int = 1, **options) -> int:
    """Pack the images of one ``.lst`` file into ``.rec``/``.idx`` next to it; returns the count."""
    stem = os.path.splitext(lst_path)[0]
    items = list(read_list(lst_path))
    written = 0
    with recordio.MXIndexedRecordIO(stem + ".idx", stem + ".rec", "w") as record:
        with ThreadPoolExecutor(max(1, num_thread)) as pool:
            packed = pool.map(lambda item: encode_image(item, root, **options), items)
            for item, data in zip(items, packed):
                if data is not None:
                    record.write_idx(item[0], data)
                    written += 1
    return written


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mxjax.tools.im2rec", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        description="Create an image list, or pack the images of a list into a RecordIO file.")
    parser.add_argument("prefix", help="prefix of the .lst files to write or to read")
    parser.add_argument("root", help="folder holding the images")
    lists = parser.add_argument_group("making lists")
    lists.add_argument("--list", action="store_true", help="write PREFIX.lst instead of packing")
    lists.add_argument("--exts", nargs="+", default=[".jpeg", ".jpg", ".png"],
                       help="image file extensions to include")
    lists.add_argument("--chunks", type=int, default=1, help="number of list chunks")
    lists.add_argument("--train-ratio", type=float, default=1.0, help="share of images for training")
    lists.add_argument("--test-ratio", type=float, default=0, help="share of images for testing")
    lists.add_argument("--recursive", action="store_true",
                       help="walk sub-folders, one label per folder (else ROOT only, label 0)")
    lists.add_argument("--no-shuffle", dest="shuffle", action="store_false",
                       help="keep the sorted order instead of shuffling (seed 100)")
    packing = parser.add_argument_group("packing records")
    packing.add_argument("--pass-through", action="store_true", help="store the files' bytes as they are")
    packing.add_argument("--resize", type=int, default=0, help="resize the shorter edge to this size")
    packing.add_argument("--center-crop", action="store_true", help="crop the central square first")
    packing.add_argument("--quality", type=int, default=95,
                         help="JPEG quality 1-100, or PNG compression level 1-9")
    packing.add_argument("--num-thread", type=int, default=1, help="encoding threads")
    packing.add_argument("--color", type=int, default=1, choices=[-1, 0, 1],
                         help="1: color (drops alpha), 0: grayscale, -1: as stored")
    packing.add_argument("--encoding", type=str, default=".jpg", choices=[".jpg", ".png"],
                         help="how images are stored")
    packing.add_argument("--pack-label", action="store_true",
                         help="store all labels of a multi-label list line")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the tool; returns the process exit status."""
    args = _parser().parse_args(argv)
    prefix, root = os.path.abspath(args.prefix), os.path.abspath(args.root)
    if args.list:
        make_list(prefix, root, args.recursive, args.exts, args.chunks, args.train_ratio,
                  args.test_ratio, args.shuffle)
        return 0
    folder = prefix if os.path.isdir(prefix) else os.path.dirname(prefix)
    lists = sorted(os.path.join(folder, name) for name in os.listdir(folder)
                   if os.path.isfile(os.path.join(folder, name)) and name.endswith(".lst")
                   and os.path.join(folder, name).startswith(prefix))
    if not lists:
        print(f"im2rec: no .lst file with prefix {prefix}", file=sys.stderr)
        return 1
    for lst in lists:
        count = write_record(lst, root, args.num_thread, color=args.color, resize=args.resize,
                             center_crop=args.center_crop, quality=args.quality,
                             encoding=args.encoding, pass_through=args.pass_through,
                             pack_label=args.pack_label)
        print(f"im2rec: wrote {count} images from {lst} to {os.path.splitext(lst)[0]}.rec")
    return 0


if __name__ == "__main__":
    sys.exit(main())
