"""``mx.gluon.model_zoo.vision`` against MXNet 2.0's own architectures (fixtures from
``tools/make_model_zoo_fixtures.py``): parameter names and shapes for every model, and outputs under
fixed weights for three small ones."""
import json
import pathlib
import zlib

import numpy as onp
import pytest

import mxjax as mx
from mxjax.gluon.model_zoo import model_store, vision

FIX = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "model_zoo"
STRUCTURE = json.loads((FIX / "structure.json").read_text())
SMALL = [n for n, rec in STRUCTURE.items() if "after_forward" in rec]


def seeded_weights(name, shape, salt=''):
    """Same as ``tools/make_model_zoo_fixtures.py``: deterministic values for parameter ``name``."""
    rng = onp.random.default_rng(zlib.crc32((name + salt).encode()))
    leaf = name.rsplit('.', 1)[-1]
    if leaf in ('gamma', 'running_var'):
        return rng.uniform(0.5, 1.5, shape).astype('float32')
    if leaf in ('beta', 'running_mean', 'bias'):
        return rng.uniform(-0.1, 0.1, shape).astype('float32')
    bound = onp.sqrt(3.0 / max(1, int(onp.prod(shape[1:]))))
    return rng.uniform(-bound, bound, shape).astype('float32')


def same_shape(got, want):
    """``got`` (mxjax, 0 = deferred) agrees with MXNet's ``want`` (-1 = deferred) on every known dim.

    MXNet leaves a dim deferred that mxjax may already know: ``Conv2D(64, 3, in_channels=64)`` has
    weight shape ``(64, -1, 3, 3)`` before its first forward in MXNet 2.0.
    """
    return len(got) == len(want) and all(w < 0 or g == w for g, w in zip(got, want))


def test_exposed():
    assert mx.gluon.model_zoo.vision.get_model is vision.get_model
    assert callable(mx.gluon.model_zoo.model_store.get_model_file)
    assert callable(mx.gluon.model_zoo.model_store.purge)


@pytest.mark.parametrize("name", sorted(STRUCTURE))
def test_parameter_names_and_shapes(name):
    net = vision.get_model(name)
    got = [(k, p.shape) for k, p in net.collect_params().items()]
    want = STRUCTURE[name]["params"]
    assert [k for k, _ in got] == [k for k, _ in want]
    bad = [(k, g, w) for (k, g), (_, w) in zip(got, want) if not same_shape(g, w)]
    assert not bad


def test_unknown_name():
    with pytest.raises(ValueError, match="Model nope is not supported. Available options are"):
        vision.get_model("nope")


def test_constructors_and_classes():
    assert isinstance(vision.resnet50_v2(), vision.ResNetV2)
    net = vision.get_resnet(1, 18, thumbnail=True, classes=7)
    assert isinstance(net, vision.ResNetV1) and net.features[0].weight.shape[2:] == (3, 3)
    assert vision.get_model("MobileNet0.25", classes=3).output.weight.shape[0] == 3
    assert isinstance(vision.BottleneckV1(64, 1, downsample=True), mx.gluon.HybridBlock)
    assert isinstance(vision.get_model("vgg11_bn"), vision.VGG)


def _small_net(name):
    rec = STRUCTURE[name]
    net = vision.get_model(name, **rec["kwargs"])
    net.load_dict({k: mx.np.array(seeded_weights(k, tuple(s))) for k, s in rec["after_forward"]})
    assert [[k, list(p.shape)] for k, p in net.collect_params().items()] == rec["after_forward"]
    return net


@pytest.mark.parametrize("name", SMALL)
def test_outputs_match_mxnet_hybridized(name):
    data = onp.load(FIX / "outputs.npz")
    net = _small_net(name)
    net.hybridize()
    out = net(mx.np.array(data[f"{name}/in"])).asnumpy()
    onp.testing.assert_allclose(out, data[f"{name}/out"], rtol=1e-4, atol=1e-4)


def test_imperative_equals_hybridized():
    data = onp.load(FIX / "outputs.npz")
    x = mx.np.array(data["mobilenet0.25/in"])
    net = _small_net("mobilenet0.25")
    imperative = net(x).asnumpy()
    onp.testing.assert_allclose(imperative, data["mobilenet0.25/out"], rtol=1e-4, atol=1e-4)
    net.hybridize()
    onp.testing.assert_allclose(net(x).asnumpy(), imperative, rtol=1e-5, atol=1e-5)


def test_load_mxnet_params_file():
    data = onp.load(FIX / "outputs.npz")
    net = vision.get_model("mobilenet0.25", classes=10)
    net.load_parameters(str(FIX / "mobilenet0.25.params"))
    net.hybridize()
    out = net(mx.np.array(data["mobilenet0.25/in"])).asnumpy()
    onp.testing.assert_allclose(out, data["mobilenet0.25/out_file"], rtol=1e-4, atol=1e-4)


def _no_network(url, path=None, **kwargs):
    raise ConnectionError(f"cannot fetch {url}")


def test_pretrained_without_file_says_where(tmp_path, monkeypatch):
    monkeypatch.setattr(model_store, "download", _no_network)
    with pytest.raises(FileNotFoundError) as err:
        vision.get_model("squeezenet1.1", pretrained=True, root=str(tmp_path))
    msg = str(err.value)
    assert "squeezenet1.1-33ba0f93.params" in msg and str(tmp_path) in msg
    assert not list(tmp_path.iterdir())  # no partial download left behind


def test_pretrained_loads_from_root(tmp_path, monkeypatch):
    """A file with the right name and SHA-1 in ``root`` is loaded, without any download."""
    monkeypatch.setattr(model_store, "download", _no_network)
    params = (FIX / "mobilenet0.25.params").read_bytes()
    sha1 = __import__("hashlib").sha1(params).hexdigest()
    monkeypatch.setitem(model_store._model_sha1, "mobilenet0.25", sha1)
    (tmp_path / f"mobilenet0.25-{sha1[:8]}.params").write_bytes(params)
    assert model_store.get_model_file("mobilenet0.25", root=str(tmp_path)).endswith(f"-{sha1[:8]}.params")
    net = vision.get_model("mobilenet0.25", pretrained=True, root=str(tmp_path), classes=10)
    assert net.output.weight.shape == (10, 256)
    # a file whose hash does not match is not used
    monkeypatch.setitem(model_store._model_sha1, "mobilenet0.25", sha1[:8] + "0" * 32)
    with pytest.raises(FileNotFoundError, match="mobilenet0.25"):
        model_store.get_model_file("mobilenet0.25", root=str(tmp_path))
    model_store.purge(root=str(tmp_path))
    assert not list(tmp_path.iterdir())


def test_short_hash_unknown():
    with pytest.raises(ValueError, match="Pretrained model for nope is not available"):
        model_store.short_hash("nope")


def test_download_through_gluon_utils(tmp_path, monkeypatch):
    """With a reachable repository (here a ``file://`` one) the zip is fetched by ``gluon.utils.download``."""
    import zipfile
    params = (FIX / "mobilenet0.25.params").read_bytes()
    sha1 = __import__("hashlib").sha1(params).hexdigest()
    monkeypatch.setitem(model_store._model_sha1, "mobilenet0.25", sha1)
    file_name = f"mobilenet0.25-{sha1[:8]}"
    repo = tmp_path / "repo" / "gluon" / "models"
    repo.mkdir(parents=True)
    with zipfile.ZipFile(repo / f"{file_name}.zip", "w") as zf:
        zf.writestr(f"{file_name}.params", params)
    monkeypatch.setenv("MXNET_GLUON_REPO", (tmp_path / "repo").as_uri())
    root = tmp_path / "models"
    path = model_store.get_model_file("mobilenet0.25", root=str(root))
    assert path == str(root / f"{file_name}.params")
    assert sorted(p.name for p in root.iterdir()) == [f"{file_name}.params"]  # zip and temp dir removed
