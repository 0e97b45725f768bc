"""mx.gluon.utils: splitting, clipping, sha1, download (file:// and a local HTTP server), hooks."""
from __future__ import annotations

import collections
import functools
import hashlib
import http.server
import threading

import numpy as onp
import pytest

import mxjax as mx
from mxjax import np
from mxjax.gluon import utils


def test_split_data_even_and_uneven():
    x = np.arange(10).reshape(5, 2)
    parts = utils.split_data(x, 2, even_split=False)
    assert [p.shape for p in parts] == [(3, 2), (2, 2)]
    onp.testing.assert_array_equal(onp.concatenate([p.asnumpy() for p in parts]), x.asnumpy())
    assert [p.shape for p in utils.split_data(x, 2, batch_axis=1)] == [(5, 1), (5, 1)]
    with pytest.raises(ValueError, match="cannot be evenly split into 2 slices along axis 0"):
        utils.split_data(x, 2)


def test_split_and_load():
    parts = utils.split_and_load(onp.arange(8, dtype="float32").reshape(4, 2), [mx.cpu(0), mx.cpu(0)])
    assert len(parts) == 2 and parts[0].shape == (2, 2)
    assert utils.split_and_load(np.ones((4, 2)), [mx.cpu()])[0].shape == (4, 2)


def test_clip_global_norm():
    a, b = np.array([3.0, 0.0]), np.array([[4.0]])
    norm = utils.clip_global_norm([a, b], 1.0)
    assert norm == pytest.approx(5.0)
    onp.testing.assert_allclose(a.asnumpy(), [0.6, 0.0], rtol=1e-5)
    onp.testing.assert_allclose(b.asnumpy(), [[0.8]], rtol=1e-5)
    c = np.array([0.3, 0.4])
    out = utils.clip_global_norm([c], 10.0, check_isfinite=False)
    assert out.shape == (1,) and float(out) == pytest.approx(0.5)
    onp.testing.assert_allclose(c.asnumpy(), [0.3, 0.4], rtol=1e-6)
    with pytest.warns(UserWarning, match="nan or inf is detected"):
        utils.clip_global_norm([np.array([onp.inf, 1.0])], 1.0)


def test_check_sha1_and_replace_file(tmp_path):
    f = tmp_path / "a.bin"
    f.write_bytes(b"mxjax")
    assert utils.check_sha1(str(f), hashlib.sha1(b"mxjax").hexdigest())
    assert not utils.check_sha1(str(f), "0" * 40)
    g = tmp_path / "b.bin"
    utils.replace_file(str(f), str(g))
    assert g.read_bytes() == b"mxjax" and not f.exists()
    with pytest.raises(OSError, match="Please retry the download"):
        utils.replace_file(str(tmp_path / "missing"), str(tmp_path / "x" / "y"))


def test_download_file_url(tmp_path):
    src = tmp_path / "src" / "data.txt"
    src.parent.mkdir()
    src.write_bytes(b"hello")
    sha1 = hashlib.sha1(b"hello").hexdigest()
    dest = tmp_path / "out"
    dest.mkdir()
    path = utils.download(src.as_uri(), path=str(dest), sha1_hash=sha1)
    assert path == str(dest / "data.txt") and (dest / "data.txt").read_bytes() == b"hello"
    src.write_bytes(b"changed")
    assert utils.download(src.as_uri(), path=path) == path  # kept: exists, no overwrite
    assert (dest / "data.txt").read_bytes() == b"hello"
    utils.download(src.as_uri(), path=path, overwrite=True)
    assert (dest / "data.txt").read_bytes() == b"changed"
    with pytest.raises(UserWarning, match="content hash does not match"):
        utils.download(src.as_uri(), path=str(tmp_path / "c.txt"), sha1_hash="0" * 40, retries=0)


def test_download_local_http_server(tmp_path):
    (tmp_path / "model.params").write_bytes(b"\x00\x01weights")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *args: None
    server = http.server.HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = "http://127.0.0.1:%d/model.params" % server.server_address[1]
        path = utils.download(url, path=str(tmp_path / "got.params"))
        assert (tmp_path / "got.params").read_bytes() == b"\x00\x01weights" and path.endswith("got.params")
        with pytest.raises(RuntimeError, match="Failed downloading url .*HTTP 404"):
            utils.download(url + ".missing", path=str(tmp_path / "x"), retries=0)
    finally:
        server.shutdown()
        server.server_close()


def test_download_without_network_is_a_clear_error(tmp_path):
    # port 9 on localhost refuses connections: the same path as having no network
    with pytest.raises(ConnectionError, match="cannot fetch http://127.0.0.1:9/x.bin"):
        utils.download("http://127.0.0.1:9/x.bin", path=str(tmp_path / "x.bin"), retries=1)
    assert not list(tmp_path.iterdir())  # no partial file left behind


def test_hook_handle():
    hooks = collections.OrderedDict()  # MXNet keeps hooks in OrderedDicts (weak-referenceable)
    handle = utils.HookHandle()
    hook = lambda *a: None  # noqa: E731
    handle.attach(hooks, hook)
    assert list(hooks.values()) == [hook]
    with pytest.raises(AssertionError, match="cannot be attached twice"):
        handle.attach(hooks, hook)
    with handle:
        pass
    assert not hooks


def test_shape_is_known():
    assert utils.shape_is_known((2, 3))
    assert not utils.shape_is_known(None)
    assert utils.shape_is_known(())  # np shape semantics are on in mxjax
    assert not utils.shape_is_known((2, -1))
    with pytest.raises(AssertionError, match="cannot be less than -1"):
        utils.shape_is_known((2, -3))


def test_split_rnn_params():
    hidden, inp = 3, 2
    n = 4 * hidden * inp + 4 * hidden * hidden + 2 * 4 * hidden  # one LSTM layer
    params = utils.split_rnn_params(np.arange(n, dtype="float32"), "lstm", 1, inp, hidden)
    assert params["l0_i2h_weight"].shape == (12, 2) and params["l0_h2h_weight"].shape == (12, 3)
    assert params["l0_h2h_bias"].shape == (12,)
    assert float(params["l0_h2h_bias"][-1]) == n - 1
    proj = utils.split_rnn_params(np.zeros(4 * hidden * inp + 4 * hidden * 2 + 2 * hidden + 8 * hidden),
                                  "lstm", 1, inp, hidden, projection_size=2)
    assert proj["l0_h2r_weight"].shape == (2, 3) and proj["l0_h2h_weight"].shape == (12, 2)


def test_exposed_from_gluon():
    assert mx.gluon.utils is utils
    assert mx.gluon.probability.Normal is mx.gluon.probability.distributions.Normal
