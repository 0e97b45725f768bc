"""Write MXNet's results for the ops with MXNet-specific conventions tested in
``tests/ndarray/test_nd_vision.py`` (vision ops, im2col/col2im, moments, linalg routines).

Run inside a virtualenv with mxnet 2.0.0b1 from the repository root:
``python tools/make_npx_fixtures.py``.  Each case calls one ``mx.nd`` function on seeded
inputs and records, in ``tests/fixtures/npx/cases.npz``, the inputs (``<case>/in/<i>``),
the outputs (``<case>/out/<k>``) and, for differentiable cases, the gradient of
``sum(out_0 * head)`` for each float input (``<case>/head``, ``<case>/grad/<i>``);
``cases.json`` holds each case's function name, keyword arguments and which inputs get gradients.
"""
import json
import os

import mxnet as mx
import numpy as np

OUT = os.path.join("tests", "fixtures", "npx")
rng = np.random.RandomState(0)


def u(*shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(np.float32)


def affine(n):
    theta = np.tile(np.array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0], np.float32), (n, 1))
    return theta + u(n, 6, low=-0.3, high=0.3)


ROIS = np.array([[0, 1, 1, 6, 5], [1, 0, 0, 8, 7], [0, 3.4, 2.6, 3.4, 2.6], [1, -2, -3, 20, 20]], np.float32)

CASES = {
    "roi_pooling": ("ROIPooling", [u(2, 3, 8, 9), ROIS], dict(pooled_size=(3, 2), spatial_scale=0.9), [0]),
    "grid_affine": ("GridGenerator", [affine(2)], dict(transform_type="affine", target_shape=(4, 5)), [0]),
    "grid_warp": ("GridGenerator", [u(2, 2, 3, 4, low=-2, high=2)], dict(transform_type="warp"), [0]),
    "bilinear_sampler": ("BilinearSampler", [u(2, 3, 5, 6), u(2, 2, 4, 7, low=-1.2, high=1.2)], {}, [0, 1]),
    "spatial_transformer": ("SpatialTransformer", [u(2, 3, 6, 5), affine(2)],
                            dict(target_shape=(4, 4), transform_type="affine", sampler_type="bilinear"), [0, 1]),
    "correlation_mul": ("Correlation", [u(2, 3, 7, 8), u(2, 3, 7, 8)],
                        dict(kernel_size=3, max_displacement=2, stride1=2, stride2=1, pad_size=2,
                             is_multiply=True), [0, 1]),
    "correlation_abs": ("Correlation", [u(1, 2, 6, 6), u(1, 2, 6, 6)],
                        dict(kernel_size=1, max_displacement=2, stride1=1, stride2=2, pad_size=1,
                             is_multiply=False), []),
    "crop_hw": ("Crop", [u(2, 2, 6, 7)], dict(num_args=1, offset=(1, 2), h_w=(3, 4)), [0]),
    "crop_like_center": ("Crop", [u(2, 2, 6, 7), u(2, 2, 3, 3)], dict(num_args=2, center_crop=True), []),
    "im2col": ("im2col", [u(2, 2, 5, 6)], dict(kernel=(2, 3), stride=(1, 2), dilate=(2, 1), pad=(1, 1)), [0]),
    "col2im": ("col2im", [u(2, 12, 18)], dict(output_size=(5, 6), kernel=(2, 3), stride=(1, 2), pad=(1, 1)),
               [0]),
    "moments": ("moments", [u(3, 4, 5)], dict(axes=(0, 2), keepdims=True), [0]),
    "khatri_rao": ("khatri_rao", [u(2, 3), u(4, 3), u(2, 3)], {}, []),
    "svm_l2": ("SVMOutput", [u(4, 3, low=-2, high=2), np.array([2, 0, 1, 1], np.float32)],
               dict(margin=1.0, regularization_coefficient=0.5, use_linear=False), [0]),
    "svm_l1": ("SVMOutput", [u(4, 3, low=-2, high=2), np.array([0, 2, 2, 1], np.float32)],
               dict(margin=0.7, regularization_coefficient=1.5, use_linear=True), [0]),
    "deformable_conv": ("npx.deformable_convolution",
                        [u(2, 4, 6, 7), u(2, 2 * 9 * 2, 4, 5, low=-1.5, high=1.5), u(6, 2, 3, 3), u(6)],
                        dict(kernel=(3, 3), stride=(1, 1), dilate=(1, 1), pad=(0, 0), num_filter=6, num_group=2,
                             num_deformable_group=2), [0, 1, 2, 3]),
    "gelqf": ("linalg_gelqf", [u(3, 5)], {}, []),
    "syevd": ("linalg.syevd", [None], {}, []),
}


def _sym(n):
    a = u(n, n)
    return (a + a.T).astype(np.float32)


def run(name, fn, inputs, kwargs, grads, arrays, meta):
    if name == "syevd":
        inputs = [np.stack([_sym(4), _sym(4)])]
    nds = [mx.nd.array(x) for x in inputs]
    if fn.startswith("npx."):  # numpy-extension operators take mx.np arrays
        nds = [x.as_np_ndarray() for x in nds]
    for i in grads:
        nds[i].attach_grad()
    with mx.autograd.record():
        function = mx if fn.startswith("npx.") else mx.nd
        for part in fn.split("."):
            function = getattr(function, part)
        out = function(*nds, **kwargs)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        head = mx.nd.array(u(*outs[0].shape))
        if fn.startswith("npx."):
            head = head.as_np_ndarray()
        loss = (outs[0] * head).sum()
    if grads:
        loss.backward()
        arrays[f"{name}/head"] = head.asnumpy()
        for i in grads:
            arrays[f"{name}/grad/{i}"] = nds[i].grad.asnumpy()
    for i, x in enumerate(inputs):
        arrays[f"{name}/in/{i}"] = x
    for k, o in enumerate(outs):
        arrays[f"{name}/out/{k}"] = o.asnumpy()
    meta[name] = {"fn": fn, "kwargs": kwargs, "grads": grads, "n_in": len(inputs), "n_out": len(outs)}


def main():
    os.makedirs(OUT, exist_ok=True)
    arrays, meta = {}, {}
    for name, (fn, inputs, kwargs, grads) in CASES.items():
        run(name, fn, inputs, kwargs, grads, arrays, meta)
    np.savez_compressed(os.path.join(OUT, "cases.npz"), **arrays)
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
