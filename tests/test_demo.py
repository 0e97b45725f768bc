"""``python -m mxjax.demo`` (issue 22): digits through RecordIO, gluon.data, a hybridized CNN, export.

Oracles: scikit-learn's digits (the records must hold exactly them), the records read back with
``mx.recordio`` alone and scored by a re-imported model with host NumPy (the printed accuracy must
be that score), hand-computed gradients of the mined loss, and the exit codes and messages.
"""
from __future__ import annotations

import collections
import contextlib
import io
import os
import pathlib
import re
import subprocess
import sys

import numpy as onp
import pytest

pytest.importorskip("sklearn", reason="the demo's data come from scikit-learn (pip install -e '.[demo]')")

import mxjax as mx  # noqa: E402
from mxjax import autograd, demo  # noqa: E402
from mxjax.demo import model, options  # noqa: E402

FILES = ("train.rec", "train.idx", "test.rec", "test.idx", "digits-cnn-symbol.json", "digits-cnn-0000.params")
# one epoch with the default seed measured 0.88 test accuracy (0.70-0.87 over seeds 0-3); chance is 0.10
ONE_EPOCH_FLOOR = 0.5


@pytest.fixture(scope="module")
def one_epoch(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "run"
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = demo.main(["--epochs", "1", "--batch-size", "64", "--out", str(out), "--quiet"])
    return code, out, stdout.getvalue()


def _records(path) -> list[tuple[onp.ndarray, int]]:
    reader = mx.recordio.MXIndexedRecordIO(str(path.with_suffix(".idx")), str(path), "r")
    try:
        found = []
        for key in reader.keys:
            header, image = mx.recordio.unpack_img(reader.read_idx(key), 0)
            found.append((image, int(header.label)))
        return found
    finally:
        reader.close()


def test_run_writes_every_file(one_epoch):
    code, out, text = one_epoch
    assert code == 0, text
    for name in FILES:
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
        assert name in text


def test_records_hold_the_digits(one_epoch):
    from sklearn.datasets import load_digits

    _, out, _ = one_epoch
    digits = load_digits()
    expected = collections.Counter(
        (onp.round(image * 255 / 16).astype(onp.uint8).tobytes(), int(label))
        for image, label in zip(digits.images, digits.target, strict=True))
    found = collections.Counter((image.tobytes(), label)
                                for name in ("train.rec", "test.rec") for image, label in _records(out / name))
    assert found == expected


def test_printed_accuracy_is_the_exported_models(one_epoch):
    _, out, text = one_epoch
    printed = float(re.search(r"test accuracy (\d\.\d+)", text).group(1))
    assert printed > ONE_EPOCH_FLOOR
    train = onp.stack([image for image, _ in _records(out / "train.rec")]).astype(onp.float64) / 255
    test = _records(out / "test.rec")
    images = (onp.stack([image for image, _ in test]).astype(onp.float64) / 255 - train.mean()) / train.std()
    labels = onp.array([label for _, label in test])
    net = mx.gluon.SymbolBlock.imports(str(out / "digits-cnn-symbol.json"), ["data"],
                                       str(out / "digits-cnn-0000.params"))
    logits = net(mx.np.array(images[:, None].astype(onp.float32))).asnumpy()
    assert abs((logits.argmax(1) == labels).mean() - printed) < 1e-4


def test_mined_loss_value_and_gradient():
    for values in ([0.5, 2.0, 1.0, 3.0], [4.0, 1.0, 3.0, 0.0, 2.0]):
        ref = onp.array(values)
        hard = ref >= onp.median(ref)
        x = mx.np.array(values)
        x.attach_grad()
        with autograd.record():
            loss = model.mined_loss(x)
        loss.backward()
        assert float(loss) == pytest.approx(ref.mean() + ref[hard].mean())
        onp.testing.assert_allclose(x.grad.asnumpy(), 1 / len(ref) + hard / hard.sum(), rtol=1e-6)


def _fails(argv, capsys) -> str:
    assert demo.main(argv) == 1
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mxjax.demo: error: "), captured.err
    return lines[0]


def test_output_directory_under_a_file(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    line = _fails(["--epochs", "1", "--out", str(blocker / "out")], capsys)
    assert "--out" in line and "not a writable directory" in line


def test_unknown_device(tmp_path, capsys):
    line = _fails(["--device", "tpu(3)", "--out", str(tmp_path / "out")], capsys)
    assert "'tpu(3)' is not a device: use cpu or gpu(N)" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(mx.device.num_gpus() > 0, reason="needs a machine without a GPU")
def test_gpu_without_one(tmp_path, capsys):
    line = _fails(["--device", "gpu(0)", "--out", str(tmp_path / "out")], capsys)
    assert "sees 0 GPU(s); use --device cpu" in line


def test_scikit_learn_missing(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    line = _fails(["--out", str(tmp_path / "out")], capsys)
    assert "scikit-learn is not installed" in line and "pip install -e '.[demo]'" in line
    assert not (tmp_path / "out").exists()


def test_usage_errors_return_2(capsys):
    assert demo.main(["--epochs", "0"]) == 2
    assert "--epochs and --batch-size must be at least 1" in capsys.readouterr().err
    assert demo.main(["--device"]) == 2


def test_parse_device():
    assert options.parse_device("cpu") == mx.cpu(0)
    assert options.parse_device(" CPU(1) ") == mx.cpu(1)
    with pytest.raises(options.DemoError, match="'gpu0' is not a device"):
        options.parse_device("gpu0")


def test_module_entry_point_reports_without_traceback(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "mxjax.demo", "--device", "tpu(3)", "--out", str(tmp_path)],
                          cwd=pathlib.Path(__file__).resolve().parents[1], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 1
    assert proc.stderr.strip() == ("mxjax.demo: error: --device 'tpu(3)' is not a device: "
                                   "use cpu or gpu(N), e.g. --device gpu(0)")
