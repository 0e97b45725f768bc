"""A short imperative tour of mxjax: MXNet 2.0's NDArray API running on JAX.

Run with:  python examples/tour.py
"""
import os
import tempfile

import mxjax as mx
from mxjax import np, npx


def main() -> None:
    print("mxjax", mx.__version__, "on", mx.current_device())

    # NumPy-style arrays with MXNet's float32 default
    x = np.arange(12).reshape(3, 4)
    print("x =", x, x.dtype)
    print("x.sum(axis=0) =", x.sum(axis=0))
    print("x @ x.T =", x @ x.T)

    # in-place writes keep the array's identity
    y = x.copy()
    y[0, :] = -1
    y += 100
    print("y after y[0] = -1; y += 100:", y)

    # boolean masks and advanced indexing
    print("x[x > 5] =", x[x > 5])
    print("x[[0, 2], 1:3] =", x[np.array([0, 2], dtype="int64"), 1:3])

    # neural-network operators from mx.npx
    data = np.random.normal(0, 1, size=(2, 3, 8, 8))
    weight = np.random.normal(0, 0.1, size=(4, 3, 3, 3))
    out = npx.convolution(data, weight, None, kernel=(3, 3), num_filter=4, no_bias=True)
    print("convolution output shape:", out.shape)
    print("softmax rows sum to", npx.softmax(np.ones((2, 5))).sum(axis=-1))

    # the legacy 1.x namespace, with its op names
    a = mx.nd.array([[1, 2], [3, 4]])
    print("mx.nd.broadcast_add:", mx.nd.broadcast_add(a, mx.nd.ones((1, 2))).asnumpy().tolist())

    # MXNet's .params format, byte-compatible with MXNet 1.x
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "arrays.params")
        mx.nd.save(path, {"w": a})
        print("saved and loaded back:", mx.nd.load(path)["w"].asnumpy().tolist())

    # reproducible random numbers
    mx.random.seed(42)
    first = np.random.uniform(size=3)
    mx.random.seed(42)
    print("same draws after reseeding:", bool((first == np.random.uniform(size=3)).all()))


if __name__ == "__main__":
    main()
