"""Write tests/fixtures/util/: a checkpoint saved by MXNet's ``mx.model.save_checkpoint``.

Run inside a virtualenv with mxnet 2.0.0b1 installed, from the repository root:
``python tools/make_util_fixtures.py``.  Writes ``fc-symbol.json`` and ``fc-0003.params``
(a FullyConnected + BatchNorm net, so both ``arg:`` and ``aux:`` entries exist) and
``fc-expected.npz`` with the input and the output MXNet computes for it in inference mode.
"""
import os

import mxnet as mx
import numpy as np

OUT = os.path.join("tests", "fixtures", "util")


def main():
    mx.npx.reset_np()  # the legacy symbol API, as checkpoint users have it
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    net = mx.sym.BatchNorm(net, name="bn", fix_gamma=False)
    rng = np.random.RandomState(0)
    arg_params = {
        "fc_weight": mx.nd.array(rng.randn(3, 4)), "fc_bias": mx.nd.array(rng.randn(3)),
        "bn_gamma": mx.nd.array(rng.rand(3) + 0.5), "bn_beta": mx.nd.array(rng.randn(3)),
    }
    aux_params = {"bn_moving_mean": mx.nd.array(rng.randn(3)), "bn_moving_var": mx.nd.array(rng.rand(3) + 0.5)}
    prefix = os.path.join(OUT, "fc")
    mx.model.save_checkpoint(prefix, 3, net, arg_params, aux_params)
    x = rng.randn(2, 4).astype("float32")
    args = dict(arg_params, data=mx.nd.array(x))
    out = net._bind(mx.cpu(), args=args, aux_states=aux_params).forward(is_train=False)[0].asnumpy()
    np.savez(os.path.join(OUT, "fc-expected.npz"), x=x, out=out)
    print("wrote", prefix + "-symbol.json", prefix + "-0003.params", "fc-expected.npz")


if __name__ == "__main__":
    main()
