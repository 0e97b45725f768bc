"""python -m mxjax.tools.im2rec: lists from a folder, then .rec/.idx that read back image for image."""
import runpy
import sys

import numpy as np
import pytest
from PIL import Image

import mxjax.recordio as recordio
from mxjax.tools import im2rec


@pytest.fixture
def folder(tmp_path):
    """root/cat/{a,b}.png, root/dog/c.png (+ a text file that is not an image); RGB pixels."""
    rng = np.random.RandomState(0)
    root = tmp_path / "images"
    images = {}
    for rel, shape in [("cat/a.png", (6, 8)), ("cat/b.png", (5, 5)), ("dog/c.png", (9, 4))]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        yy, xx = np.mgrid[0:shape[0], 0:shape[1]]
        smooth = np.stack([xx * 20 + 10, yy * 15 + 30, (xx + yy) * 9 + 60], axis=-1)
        rgb = (smooth + rng.randint(0, 4, shape + (3,))).astype(np.uint8)   # JPEG-friendly
        Image.fromarray(rgb).save(root / rel)
        images[rel] = rgb
    (root / "dog" / "notes.txt").write_text("not an image")
    return tmp_path, root, images


def test_list_then_pack_png_reads_back_exactly(folder):
    tmp, root, images = folder
    prefix = str(tmp / "data")
    assert im2rec.main([prefix, str(root), "--list", "--recursive", "--no-shuffle"]) == 0
    lines = (tmp / "data.lst").read_text().splitlines()
    assert lines == ["0\t0.000000\tcat/a.png", "1\t0.000000\tcat/b.png", "2\t1.000000\tdog/c.png"]
    assert im2rec.main([prefix, str(root), "--encoding", ".png", "--quality", "3"]) == 0
    reader = recordio.MXRecordIO(str(tmp / "data.rec"), "r")
    for index, (rel, label) in enumerate([("cat/a.png", 0.0), ("cat/b.png", 0.0), ("dog/c.png", 1.0)]):
        header, img = recordio.unpack_img(reader.read(), 1)
        assert (header.flag, header.label, header.id) == (0, label, index)
        np.testing.assert_array_equal(img, images[rel][:, :, ::-1])   # BGR, as OpenCV reads
    assert reader.read() is None
    indexed = recordio.MXIndexedRecordIO(str(tmp / "data.idx"), str(tmp / "data.rec"), "r")
    assert indexed.keys == [0, 1, 2]
    _, img = recordio.unpack_img(indexed.read_idx(2), 1)
    np.testing.assert_array_equal(img, images["dog/c.png"][:, :, ::-1])


def test_resize_center_crop_jpeg_and_pass_through(folder):
    tmp, root, images = folder
    im2rec.make_list(str(tmp / "all"), str(root), recursive=True)
    items = list(im2rec.read_list(str(tmp / "all.lst")))
    assert sorted(i[1] for i in items) == ["cat/a.png", "cat/b.png", "dog/c.png"]
    assert im2rec.write_record(str(tmp / "all.lst"), str(root), resize=4) == 3
    reader = recordio.MXIndexedRecordIO(str(tmp / "all.idx"), str(tmp / "all.rec"), "r")
    shapes = {"cat/a.png": (4, 5, 3), "cat/b.png": (4, 4, 3), "dog/c.png": (9, 4, 3)}
    for index, rel, _ in items:
        header, img = recordio.unpack_img(reader.read_idx(index), 1)
        assert header.id == index and img.shape == shapes[rel]
    im2rec.write_record(str(tmp / "all.lst"), str(root), center_crop=True, num_thread=3)
    reader = recordio.MXIndexedRecordIO(str(tmp / "all.idx"), str(tmp / "all.rec"), "r")
    for index, rel, _ in items:
        _, img = recordio.unpack_img(reader.read_idx(index), 1)
        side = min(images[rel].shape[:2])
        assert img.shape == (side, side, 3)
        h, w = images[rel].shape[:2]
        top, left = (h - side) // 2, (w - side) // 2
        crop = images[rel][top:top + side, left:left + side, ::-1].astype(int)
        assert np.abs(img.astype(int) - crop).mean() < 8   # JPEG: close, not exact
    im2rec.write_record(str(tmp / "all.lst"), str(root), pass_through=True)
    reader = recordio.MXIndexedRecordIO(str(tmp / "all.idx"), str(tmp / "all.rec"), "r")
    for index, rel, _ in items:
        assert recordio.unpack(reader.read_idx(index))[1] == (root / rel).read_bytes()


def test_multi_label_list_and_bad_lines(tmp_path, folder, capsys):
    tmp, root, images = folder
    lst = tmp / "multi.lst"
    lst.write_text("5\t1.5\t2.5\tcat/a.png\nbroken line\n7\tx\tcat/b.png\n9\t3\tmissing.png\n")
    count = im2rec.write_record(str(lst), str(root), encoding=".png", pack_label=True)
    assert count == 1
    err = capsys.readouterr().err
    assert "multi.lst:2" in err and "multi.lst:3" in err and "missing.png" in err
    reader = recordio.MXRecordIO(str(tmp / "multi.rec"), "r")
    header, img = recordio.unpack_img(reader.read())
    assert header.flag == 2 and header.label.tolist() == [1.5, 2.5] and header.id == 5
    np.testing.assert_array_equal(img, images["cat/a.png"][:, :, ::-1])


@pytest.mark.filterwarnings("ignore:.*found in sys.modules:RuntimeWarning")
def test_command_line_module(folder, monkeypatch, capsys):
    """``python -m mxjax.tools.im2rec`` (run in this process: a new interpreter costs seconds)."""
    tmp, root, _ = folder
    prefix = str(tmp / "cli")
    for argv in ([prefix, str(root / "cat"), "--list"], [prefix, str(root / "cat")]):
        monkeypatch.setattr(sys, "argv", ["im2rec"] + argv)
        with pytest.raises(SystemExit) as done:
            runpy.run_module("mxjax.tools.im2rec", run_name="__main__")
        assert done.value.code == 0
    assert len((tmp / "cli.lst").read_text().splitlines()) == 2
    assert "wrote 2 images" in capsys.readouterr().out
    reader = recordio.MXRecordIO(prefix + ".rec", "r")
    assert sorted(recordio.unpack(reader.read())[0].id for _ in range(2)) == [0, 1]
    assert im2rec.main([str(tmp / "nothing"), str(root)]) == 1


def test_a_failed_list_write_keeps_the_old_list(tmp_path):
    path = tmp_path / "data.lst"
    im2rec.write_list(str(path), [[0, "a.png", 1.0]])
    old = path.read_bytes()

    class Broken:
        def __float__(self):
            raise ValueError("label unreadable")

    with pytest.raises(ValueError, match="label unreadable"):
        im2rec.write_list(str(path), [[0, "b.png", 2.0], [1, "c.png", Broken()]])
    assert path.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.lst"]
