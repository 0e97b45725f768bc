"""Atomic saves: a save that fails at any point leaves the previous file byte-identical and
no partial or temporary file behind, for every writer mxjax has (faults are injected into
the file writes, into fsync and into the rename)."""
from __future__ import annotations

import errno
import os
import stat

import numpy as onp
import pytest

import mxjax as mx
from mxjax import _atomic
from mxjax.gluon import nn


# ----------------------------------------------------------------------------- fault injection

class _FullDisk:
    """A file object that accepts ``budget`` more bytes (characters in text mode), writes the part of
    the call that fits, then fails as a full disk does."""

    def __init__(self, handle, budget: int) -> None:
        self._handle, self._budget = handle, budget

    def write(self, data):
        if isinstance(data, str):
            size, part = len(data), data[:self._budget]
        else:
            view = memoryview(data).cast("B")
            size, part = view.nbytes, view[:self._budget]
        if size > self._budget:
            self._handle.write(part)
            self._budget = 0
            raise OSError(errno.ENOSPC, "No space left on device (injected)")
        self._budget -= size
        return self._handle.write(data)

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._handle.close()


def _inject(monkeypatch, fault: str) -> None:
    """``bytes:N``: writes fail after N bytes; ``fsync``/``replace``: that call fails."""
    def fail(*args, **kwargs):
        raise OSError(errno.EIO, f"{fault} failed (injected)")
    if fault.startswith("bytes:"):
        real, budget = os.fdopen, int(fault.split(":")[1])
        monkeypatch.setattr(os, "fdopen", lambda *a, **k: _FullDisk(real(*a, **k), budget))
    else:
        monkeypatch.setattr(os, fault, fail)


FAULTS = ["bytes:0", "bytes:7", "bytes:100", "fsync", "replace"]


def _snapshot(folder) -> dict:
    return {name: (folder / name).read_bytes() for name in sorted(os.listdir(folder))}


# ----------------------------------------------------------------------------- the writers

def _dense(seed: int, dtype: str = "float32"):
    net = nn.Dense(3, in_units=4, dtype=dtype)
    net.initialize(mx.init.Constant(float(seed)))
    return net


def _hybrid(seed: int):
    net = nn.HybridSequential()
    net.add(nn.Dense(3, in_units=4), nn.BatchNorm(in_channels=3))
    net.initialize(mx.init.Constant(float(seed)))
    net.hybridize()
    net(mx.np.ones((2, 4)))
    return net


def _trainer(seed: int):
    net = _dense(seed)
    trainer = mx.gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.1 * (seed + 1)})
    with mx.autograd.record():
        loss = net(mx.np.ones((2, 4))).sum()
    loss.backward()
    trainer.step(1)
    return trainer


def _kvstore(seed: int):
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1 * (seed + 1), momentum=0.9))
    kv.init(0, mx.nd.ones((2, 3)))
    kv.push(0, mx.nd.ones((2, 3)) * (seed + 1))
    return kv


def _profile(path: str, seed: int) -> None:
    mx.profiler.set_config(filename=path, profile_imperative=True)
    mx.profiler.set_state("run")
    (mx.np.ones((2, 2)) * (seed + 1)).asnumpy()
    try:
        mx.profiler.dump(finished=True)
    finally:
        mx.profiler.set_state("stop")


# name -> (files written, save(folder, seed)); every seed gives different bytes
WRITERS = {
    "nd.save": (["a.params"], lambda d, s: mx.nd.save(str(d / "a.params"), {"w": mx.nd.ones((20, 5)) * s})),
    "npx.save npy": (["a.npy"], lambda d, s: mx.npx.save(str(d / "a.npy"), mx.np.ones((20, 5)) * s)),
    "npx.save npz": (["a.npz"], lambda d, s: mx.npx.save(str(d / "a.npz"), {"w": mx.np.ones((20, 5)) * s})),
    "npx.savez": (["a.npz"], lambda d, s: mx.npx.savez(str(d / "a.npz"), mx.np.ones((20, 5)) * s)),
    "sym.save": (["a.json"], lambda d, s: mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=3 + s,
                                                                  name="fc").save(str(d / "a.json"))),
    "save_parameters": (["a.params"], lambda d, s: _dense(s).save_parameters(str(d / "a.params"))),
    "export": (["m-symbol.json", "m-0000.params"], lambda d, s: _hybrid(s).export(str(d / "m"))),
    "Block.save": (["m-model.json", "m-model.params"], lambda d, s: _hybrid(s).save(str(d / "m"))),
    "Trainer.save_states": (["t.states"], lambda d, s: _trainer(s).save_states(str(d / "t.states"))),
    "save_optimizer_states": (["k.states"], lambda d, s: _kvstore(s).save_optimizer_states(
        str(d / "k.states"), dump_optimizer=True)),
    "profiler.dump": (["trace.json"], lambda d, s: _profile(str(d / "trace.json"), s)),
}


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_failed_save_keeps_the_old_files(writer, fault, tmp_path, monkeypatch):
    names, save = WRITERS[writer]
    save(tmp_path, 1)
    before = _snapshot(tmp_path)
    assert sorted(before) == sorted(names)
    with monkeypatch.context() as patch:
        _inject(patch, fault)
        with pytest.raises(OSError, match="injected"):
            save(tmp_path, 2)
    assert _snapshot(tmp_path) == before  # same names (no temp file) and same bytes
    save(tmp_path, 2)  # without the fault the same save goes through and changes the files
    after = _snapshot(tmp_path)
    assert sorted(after) == sorted(names) and after != before


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("writer", ["nd.save", "npx.save npz", "sym.save", "export", "Trainer.save_states"])
def test_failed_first_save_leaves_nothing(writer, fault, tmp_path, monkeypatch):
    _, save = WRITERS[writer]
    with monkeypatch.context() as patch:
        _inject(patch, fault)
        with pytest.raises(OSError, match="injected"):
            save(tmp_path, 1)
    assert os.listdir(tmp_path) == []


def test_an_exception_inside_the_block_keeps_the_old_file(tmp_path):
    target = tmp_path / "f.bin"
    target.write_bytes(b"old contents")
    with pytest.raises(KeyError):
        with _atomic.atomic_write(target, "wb") as f:
            f.write(b"new")
            raise KeyError("boom")
    assert target.read_bytes() == b"old contents"
    assert os.listdir(tmp_path) == ["f.bin"]


def test_atomic_write_text_and_binary(tmp_path):
    with _atomic.atomic_write(tmp_path / "t.txt", "w") as f:
        f.write("π ≈ 3.14\n")
    assert (tmp_path / "t.txt").read_bytes() == "π ≈ 3.14\n".encode("utf-8")
    with _atomic.atomic_write(str(tmp_path / "t.txt"), "wb") as f:
        f.write(b"\x00\x01")
    assert (tmp_path / "t.txt").read_bytes() == b"\x00\x01"
    with pytest.raises(ValueError, match="mode"):
        with _atomic.atomic_write(tmp_path / "t.txt", "a"):
            pass
    assert os.listdir(tmp_path) == ["t.txt"]


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_new_file_modes_follow_umask_and_old_file(tmp_path):
    old_mask = os.umask(0o022)
    try:
        with _atomic.atomic_write(tmp_path / "new", "wb") as f:
            f.write(b"x")
        open(tmp_path / "plain", "wb").close()  # what a plain open gives: the oracle
    finally:
        os.umask(old_mask)
    assert stat.S_IMODE(os.stat(tmp_path / "new").st_mode) == stat.S_IMODE(os.stat(tmp_path / "plain").st_mode)
    os.chmod(tmp_path / "new", 0o640)
    with _atomic.atomic_write(tmp_path / "new", "wb") as f:
        f.write(b"y")
    assert stat.S_IMODE(os.stat(tmp_path / "new").st_mode) == 0o640


def test_group_writes_all_files(tmp_path):
    _atomic.atomic_write_group({tmp_path / "a": b"1", str(tmp_path / "b"): "二"})
    assert _snapshot(tmp_path) == {"a": b"1", "b": "二".encode("utf-8")}


@pytest.mark.parametrize("existing", [True, False])
def test_group_rolls_back_when_the_second_rename_fails(existing, tmp_path, monkeypatch):
    if existing:
        (tmp_path / "a").write_bytes(b"old a")
        (tmp_path / "b").write_bytes(b"old b")
    before = _snapshot(tmp_path)
    real, calls = os.replace, []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(errno.EXDEV, "second rename (injected)")
        return real(src, dst)
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="injected"):
        _atomic.atomic_write_group({tmp_path / "a": b"new a", tmp_path / "b": b"new b"})
    assert _snapshot(tmp_path) == before  # the first file, already replaced, is back (or gone)


def test_group_without_hard_links_still_rolls_back(tmp_path, monkeypatch):
    (tmp_path / "a").write_bytes(b"old a")
    (tmp_path / "b").write_bytes(b"old b")

    def no_link(*args):
        raise OSError(errno.EPERM, "no hard links here")
    monkeypatch.setattr(os, "link", no_link)
    real, calls = os.replace, []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(errno.EIO, "rename (injected)")
        return real(src, dst)
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="injected"):
        _atomic.atomic_write_group({tmp_path / "a": b"new a", tmp_path / "b": b"new b"})
    assert _snapshot(tmp_path) == {"a": b"old a", "b": b"old b"}


def test_export_pair_is_never_mixed(tmp_path, monkeypatch):
    """The params file fails halfway: the old symbol file is kept too, not replaced by the new graph."""
    old = _hybrid(1)
    old.export(str(tmp_path / "m"))
    before = _snapshot(tmp_path)
    new = nn.HybridSequential()
    new.add(nn.Dense(5, in_units=4))
    new.initialize()
    new.hybridize()
    new(mx.np.ones((1, 4)))
    real = os.fdopen
    opened = []

    def fdopen(*args, **kwargs):  # the second file of the pair (the .params) hits a full disk
        opened.append(args)
        handle = real(*args, **kwargs)
        return _FullDisk(handle, 5) if len(opened) == 2 else handle
    monkeypatch.setattr(os, "fdopen", fdopen)
    with pytest.raises(OSError, match="injected"):
        new.export(str(tmp_path / "m"))
    monkeypatch.undo()
    assert _snapshot(tmp_path) == before
    block = mx.gluon.SymbolBlock.imports(str(tmp_path / "m-symbol.json"), ["data"], str(tmp_path / "m-0000.params"))
    onp.testing.assert_allclose(block(mx.np.ones((2, 4))).asnumpy(), old(mx.np.ones((2, 4))).asnumpy(), rtol=1e-6)


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_a_symbolic_link_is_written_through(tmp_path):
    (tmp_path / "real.params").write_bytes(b"old")
    os.symlink("real.params", tmp_path / "link.params")
    mx.nd.save(str(tmp_path / "link.params"), [mx.nd.ones(2)])
    assert os.path.islink(tmp_path / "link.params")
    assert (tmp_path / "real.params").read_bytes() == (tmp_path / "link.params").read_bytes() != b"old"
    onp.testing.assert_array_equal(mx.nd.load(str(tmp_path / "real.params"))[0].asnumpy(), onp.ones(2))


def test_missing_directory_names_the_target(tmp_path):
    target = str(tmp_path / "absent" / "a.params")
    with pytest.raises(FileNotFoundError) as info:
        mx.nd.save(target, [mx.nd.ones(2)])
    assert info.value.filename == target
