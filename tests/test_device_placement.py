"""New arrays go where MXNet puts them -- the current device, ``cpu(0)`` by default -- even where
JAX's default device is another one (a GPU machine: JAX would put them on the GPU).

The case is reproduced on a CPU-only machine with two XLA host devices and JAX's default device
set to the second one, in a subprocess (the device count is fixed when JAX starts)."""
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import jax
    jax.config.update("jax_default_device", jax.devices("cpu")[1])  # JAX's default is not cpu(0)
    import numpy as onp
    import mxjax as mx
    from mxjax import gluon, np

    first = jax.devices("cpu")[0]

    def on_first(x):
        return x.to_jax().devices() == {first}

    assert mx.current_device() == mx.cpu(0)
    assert on_first(np.array([1.0, 2.0])) and on_first(mx.nd.array([1.0]))
    assert on_first(np.ones((2, 3))) and on_first(mx.nd.zeros((2,))) and on_first(np.arange(4))
    assert on_first(np.random.uniform(size=(3,))) and on_first(mx.nd.random.normal(shape=(2,)))
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize(device=mx.cpu())
    assert on_first(net.weight.data()) and on_first(net.bias.data())
    x = np.ones((2, 3), device=mx.cpu())
    y = net(x)
    assert on_first(y)
    onp.testing.assert_allclose(y.asnumpy(), x.asnumpy() @ net.weight.data().asnumpy().T, rtol=1e-6)
    with mx.cpu(1):  # a scope still decides
        assert np.ones((2,)).to_jax().devices() == {jax.devices("cpu")[1]}
        # values not computed yet (bulk execution, autograd) say where they will be, not the scope
        # (mxjax, as MXNet, numbers every CPU 0: a value on the first one says cpu(0))
        assert (x * 2).device == mx.cpu(0) and ((x * 2) + 1).device == mx.cpu(0)
    net.hybridize()
    x.attach_grad()
    with mx.autograd.record():
        out = net(x)
        loss = (out * out).sum()
    with mx.cpu(1):
        assert out.device == mx.cpu(0) and loss.device == mx.cpu(0)
        label = np.ones((2, 2)).as_in_context(out.context)  # MXNet scripts' idiom
    loss.backward()
    with mx.cpu(1):
        assert x.grad.device == mx.cpu(0)
    assert on_first(label) and on_first(x.grad) and on_first(out)
    # a Trainer step: gradients not read yet (the small ones come packed in one output) say where
    # they will be too
    mlp = gluon.nn.HybridSequential()
    mlp.add(gluon.nn.Dense(4, in_units=3), gluon.nn.Dense(2, in_units=4))
    mlp.initialize(device=mx.cpu())
    mlp.hybridize()
    trainer = gluon.Trainer(mlp.collect_params(), "sgd", {"learning_rate": 0.1})
    for _ in range(3):
        with mx.autograd.record():
            loss = (mlp(x) ** 2).sum()
        loss.backward()
        with mx.cpu(1):  # before the step too (the step runs the backward), at every step
            assert all(p.grad().device == mx.cpu(0) for p in mlp.collect_params().values())
        trainer.step(2)
        with mx.cpu(1):
            assert all(p.grad().device == mx.cpu(0) for p in mlp.collect_params().values())
    assert all(on_first(p.grad()) and on_first(p.data()) for p in mlp.collect_params().values())
    # nor does a step copy anything between devices (the optimizer's hyper-parameters are made where
    # the weights are, not on JAX's default device), imperative or hybridized, with or without state
    for hybrid, (opt, args) in [(h, o) for h in (False, True) for o in (("sgd", {"momentum": 0.9}),
                                                                         ("adam", {}))]:
        block = gluon.nn.HybridSequential()
        block.add(gluon.nn.Dense(4, in_units=3), gluon.nn.Dense(2, in_units=4))
        block.initialize(device=mx.cpu())
        if hybrid:
            block.hybridize()
        trainer = gluon.Trainer(block.collect_params(), opt, {"learning_rate": 0.1, **args})
        for k in range(4):
            with jax.transfer_guard_device_to_device("disallow" if k else "allow"):
                with mx.autograd.record():
                    loss = (block(x) ** 2).sum()
                loss.backward()
                trainer.step(2)
                loss.asnumpy()
    # load_parameters: a block not initialized yet gets the values on the device named, else where its
    # deferred initialization was to put them, else the current device (MXNet's Parameter._load_init)
    import os, tempfile
    second = jax.devices("cpu")[1]
    path = os.path.join(tempfile.mkdtemp(), "mlp.params")
    mlp.save_parameters(path)
    def loaded(**kwargs):
        block = gluon.nn.HybridSequential()
        block.add(gluon.nn.Dense(4, in_units=3), gluon.nn.Dense(2, in_units=4))
        if kwargs.pop("deferred", None) is not None:
            block = gluon.nn.HybridSequential()
            block.add(gluon.nn.Dense(4), gluon.nn.Dense(2))
            block.initialize(device=mx.cpu(1))
        block.load_parameters(path, **kwargs)
        return {d for p in block.collect_params().values() for d in p.data().to_jax().devices()}
    assert loaded(device=mx.cpu(1)) == {second} and loaded(ctx=mx.cpu(1)) == {second}
    assert loaded() == {first} and loaded(deferred=True) == {second}
    with mx.cpu(1):
        assert loaded() == {second}
    try:
        mlp.load_parameters(path, device=mx.cpu(1))  # initialized on cpu(0): MXNet refuses too
        raise SystemExit("no error")
    except AssertionError as err:
        assert "previously initialized" in str(err) and isinstance(err, mx.MXNetError)
    mlp.load_parameters(path, device=mx.cpu(0))
    print("placed")
""")


def test_new_arrays_go_to_the_current_device_not_jax_default():
    env = dict(os.environ, XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2"),
               JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=240)
    assert done.returncode == 0 and "placed" in done.stdout, done.stderr[-3000:]
