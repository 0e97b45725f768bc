"""mx.nd's 1.x helpers (histogram, linspace, split_v2, batch_take, ...) against NumPy, and the
submodules nd.numpy / nd.npx / nd.ndarray / nd.op / nd.utils / nd.sparse."""
import json

import numpy as onp
import pytest

import mxjax as mx
from mxjax import nd


def test_index_helpers_match_numpy():
    a = onp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], onp.float32)
    got = nd.batch_take(nd.array(a), nd.array([0, 5, -1], dtype="int32"))  # out-of-range indices clip
    onp.testing.assert_array_equal(got.asnumpy(), [1, 4, 5])
    filled = nd.fill_element_0index(nd.zeros((2, 3)), nd.array([7.0, 8.0]), nd.array([1.0, 2.0]))
    onp.testing.assert_array_equal(filled.asnumpy(), [[0, 7, 0], [0, 0, 8]])
    out = nd.zeros((2, 3))
    assert nd.onehot_encode(nd.array([0.0, 2.0]), out) is out
    onp.testing.assert_array_equal(out.asnumpy(), onp.eye(3)[[0, 2]])
    multi = onp.array([[1, 2], [0, 3]], onp.float32)
    flat = nd.ravel_multi_index(nd.array(multi), shape=(3, 4))
    assert flat.dtype == onp.float32
    onp.testing.assert_array_equal(flat.asnumpy(), onp.ravel_multi_index(multi.astype(int), (3, 4)))
    onp.testing.assert_array_equal(nd.unravel_index(flat, shape=(3, 4)).asnumpy(), multi)


def test_float_index_arrays_index_as_mxnet1_does():
    """MXNet 1.x's NDArray takes index arrays of floats (nd.array makes float32), truncated to integers
    (checked in 1.9.1 and 2.0.0b1's mx.nd); NumPy-semantics arrays refuse them, as NumPy does."""
    a = onp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], onp.float32)
    x = nd.array(a)
    onp.testing.assert_array_equal(x[nd.array([1.7, 0.2])].asnumpy(), a[[1, 0]])
    onp.testing.assert_array_equal(x[nd.array([[1, 0], [0, 0]])].asnumpy(), a[[[1, 0], [0, 0]]])
    onp.testing.assert_array_equal(x[nd.array([1, 0]), nd.array([2, 1])].asnumpy(), a[[1, 0], [2, 1]])
    onp.testing.assert_array_equal(x[:, nd.array([2, 0])].asnumpy(), a[:, [2, 0]])
    onp.testing.assert_array_equal(x[nd.array([-1])].asnumpy(), a[[-1]])
    x[nd.array([0, 1]), nd.array([2, 0])] = nd.array([7, 8])
    onp.testing.assert_array_equal(x.asnumpy(), [[1, 2, 7], [8, 5, 6]])
    w = nd.array([[1.0, 2.0], [3.0, 4.0]])
    w.attach_grad()
    with mx.autograd.record():
        total = w[nd.array([1, 1, 0])].sum()
    total.backward()
    onp.testing.assert_array_equal(w.grad.asnumpy(), [[1, 1], [2, 2]])
    with pytest.raises(mx.base.MXNetIndexError, match="integer or boolean type, got float32"):
        mx.np.array(a)[mx.np.array([1.0, 0.0])]


def test_several_outputs_come_as_a_list_as_in_mxnet():
    """mx.nd and mx.npx functions give several outputs as a list (MXNet 1.9.1 and 2.0.0b1 do: checked
    there), NumPy's functions tuples; a symbol of such an op lists each output."""
    x, m = nd.array([[1.0, 2.0, 4.0], [3.0, 0.0, 5.0]]), nd.array([[2.0, 1.0], [1.0, 3.0]])
    ones, zeros = nd.ones(3), nd.zeros(3)
    results = {
        "nd.topk": nd.topk(x, k=2, ret_typ="both"), "nd.LayerNorm": nd.LayerNorm(x, ones, zeros, output_mean_var=True),
        "nd.BatchNorm": nd.BatchNorm(x, nd.ones(2), nd.zeros(2), nd.zeros(2), nd.ones(2), output_mean_var=True, axis=0),
        "nd.GroupNorm": nd.GroupNorm(x.reshape((2, 3, 1)), ones, zeros, output_mean_var=True, num_groups=3),
        "nd.split": nd.split(x, 3, axis=1), "nd.SliceChannel": nd.SliceChannel(x, num_outputs=3),
        "nd.linalg.syevd": nd.linalg.syevd(m), "nd.moments": nd.moments(x, axes=[0]),
        "nd.amp_multicast": nd.amp_multicast(x, m, num_outputs=2),
        "npx.topk": mx.npx.topk(x.as_np_ndarray(), k=2, ret_typ="both"),
        "npx.batch_norm": mx.npx.batch_norm(x.as_np_ndarray(), mx.np.ones(2), mx.np.zeros(2), mx.np.zeros(2),
                                            mx.np.ones(2), output_mean_var=True, axis=0),
    }
    for name, result in results.items():
        assert type(result) is list and len(result) >= 2, name
    values, indices = results["nd.topk"]
    onp.testing.assert_array_equal(values.asnumpy(), [[4, 2], [5, 3]])
    onp.testing.assert_array_equal(indices.asnumpy(), [[2, 1], [2, 0]])
    assert type(mx.np.linalg.slogdet(m.as_np_ndarray())) is tuple  # NumPy's
    a = mx.sym.var("a")
    assert mx.sym.topk(a, k=2, ret_typ="both").list_outputs() == ["topk0_output0", "topk0_output1"]
    assert mx.sym.LayerNorm(a, output_mean_var=True, name="ln").list_outputs() == ["ln_output", "ln_mean", "ln_std"]
    assert mx.sym.GroupNorm(a, output_mean_var=True, name="gn").list_outputs() == ["gn_output", "gn_mean", "gn_std"]


def test_numeric_helpers_match_numpy():
    x = onp.array([[1, 2], [3, 4]], onp.int32)
    got = nd.cumsum(nd.array(x, dtype="int32"), axis=1)
    assert got.dtype == onp.int32
    onp.testing.assert_array_equal(got.asnumpy(), onp.cumsum(x, axis=1))
    lin = nd.linspace(0, 1, 5, endpoint=False)
    assert lin.dtype == onp.float32
    onp.testing.assert_allclose(lin.asnumpy(), onp.linspace(0, 1, 5, endpoint=False))
    assert nd.linspace(0, 1, 3, dtype="float64").dtype == onp.float64
    values = onp.array([1.0, 2.0, 3.0, 4.0, 5.0], onp.float32)
    counts, edges = nd.histogram(nd.array(values), bins=3, range=(0, 6))
    want = onp.histogram(values, bins=3, range=(0, 6))
    onp.testing.assert_array_equal(counts.asnumpy(), want[0])
    onp.testing.assert_allclose(edges.asnumpy(), want[1])
    counts, _ = nd.histogram(nd.array(values), bins=nd.array([0.0, 2.0, 5.0]))
    onp.testing.assert_array_equal(counts.asnumpy(), [1, 4])
    mean, var = nd.moments(nd.array([[1.0, 2.0], [3.0, 5.0]]), axes=(1,))
    onp.testing.assert_allclose(mean.asnumpy(), [1.5, 4.0])
    onp.testing.assert_allclose(var.asnumpy(), [0.25, 1.0])
    kr = nd.khatri_rao(nd.array([[1.0, 2.0], [3.0, 4.0]]), nd.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]]))
    onp.testing.assert_array_equal(kr.asnumpy(), [[1, 0], [0, 2], [2, 4], [3, 0], [0, 4], [6, 8]])


def test_split_v2_and_shuffle():
    x = onp.arange(12, dtype=onp.float32).reshape(2, 6)
    parts = nd.split_v2(nd.array(x), (2, 5), axis=1)
    assert isinstance(parts, list)
    for got, want in zip(parts, onp.split(x, (2, 5), axis=1)):
        onp.testing.assert_array_equal(got.asnumpy(), want)
    squeezed = nd.split_v2(nd.array(x), 6, axis=1, squeeze_axis=True)
    assert len(squeezed) == 6 and squeezed[0].shape == (2,)
    shuffled = nd.shuffle(nd.array(x))
    assert type(shuffled) is nd.NDArray
    onp.testing.assert_array_equal(onp.sort(shuffled.asnumpy(), axis=0), x)


def test_masked_softmax():
    data = onp.array([[1.0, 2.0, 3.0]], onp.float32)
    got = nd.masked_softmax(nd.array(data), nd.array([[1, 0, 1]], dtype="bool"))
    e = onp.exp(data[0, [0, 2]] - 3)
    onp.testing.assert_allclose(got.asnumpy(), [[e[0] / e.sum(), 0, e[1] / e.sum()]], rtol=1e-6)
    assert nd.masked_log_softmax(nd.array(data), nd.array([[1, 1, 1]], dtype="bool")).shape == (1, 3)


def test_storage_buffers_and_dlpack(tmp_path):
    x = nd.array([[1.0, 2.0]])
    assert nd.cast_storage(x, stype="default").asnumpy().tolist() == [[1.0, 2.0]]
    with pytest.raises(mx.base.MXNetError, match="cast_storage: .*sparse storage \\('csr'\\).*dense arrays"):
        nd.cast_storage(x, stype="csr")
    path = str(tmp_path / "w.params")
    nd.save(path, {"w": x})
    loaded = nd.load_frombuffer(open(path, "rb").read())
    onp.testing.assert_array_equal(loaded["w"].asnumpy(), x.asnumpy())
    back = nd.from_dlpack(nd.to_dlpack_for_write(x))
    assert type(back) is nd.NDArray and back.asnumpy().tolist() == [[1.0, 2.0]]


def test_submodules():
    from mxjax.ndarray.ndarray import NDArray

    assert NDArray is nd.NDArray and nd.ndarray.from_numpy is nd.from_numpy
    assert nd.np is nd.numpy and nd.npx is nd.numpy_extension
    got = nd.numpy.add(mx.np.ones(2), mx.np.ones(2))
    assert type(got) is mx.np.ndarray and got.asnumpy().tolist() == [2.0, 2.0]
    assert nd.numpy.random is mx.np.random and nd.npx.index_add is mx.npx.index_add
    assert nd.op.ROIPooling is nd.ROIPooling and nd.op.sum is nd.sum
    assert nd.utils.zeros((2,)).shape == (2,) and nd.utils.load is nd.load
    assert nd.gen_op is nd.op and nd.gen_contrib is nd.contrib and nd.gen_linalg is nd.linalg
    assert nd.gen_sparse is nd.sparse and nd.gen_image is nd.image


def test_sparse_constructors_raise_with_the_dense_replacement():
    with pytest.raises(mx.base.MXNetError, match="csr_matrix: .*dense only.*stype='default'"):
        nd.sparse.csr_matrix(onp.eye(2))
    with pytest.raises(ValueError, match="row_sparse_array: .*'row_sparse'"):
        nd.sparse.row_sparse_array(onp.eye(2))
    assert nd.sparse.zeros("default", (2, 3)).shape == (2, 3)
    with pytest.raises(mx.base.MXNetError, match="zeros: .*'csr'"):
        nd.sparse.zeros("csr", (2, 3))


def test_legacy_ndarray_methods_slice_assign_split_v2_drop_grad():
    # MXNet 2.0's mx.nd.NDArray has them too (the docstring example of slice_assign)
    x = nd.ones((2, 2, 2))
    y = x.slice_assign(nd.zeros((1, 1, 2)), (0, 0, None), (1, 1, None), (None, None, None))
    want = onp.ones((2, 2, 2), onp.float32)
    want[0, 0] = 0
    assert y is x and isinstance(y, nd.NDArray) and x.writable
    onp.testing.assert_array_equal(x.asnumpy(), want)
    x.slice_assign_scalar(5, (1,), (2,), ())
    want[1] = 5
    onp.testing.assert_array_equal(x.asnumpy(), want)
    parts = nd.array(onp.arange(12.0).reshape(3, 4)).split_v2((1, 3), axis=1)
    onp.testing.assert_array_equal(parts[1].asnumpy(), onp.arange(12.0).reshape(3, 4)[:, 1:3])
    x.attach_grad()
    with mx.autograd.record():
        (x * 3).sum().backward()
    onp.testing.assert_array_equal(x.grad.asnumpy(), onp.full((2, 2, 2), 3.0))
    x.drop_grad()
    assert x.grad is None
    assert type(x.to_dlpack_for_write()).__name__ == "PyCapsule"


def test_batch_take_clips_like_mxnet_and_is_a_symbol_op():
    # MXNet 2.0.0b1: batch_take([[1,2],[3,4],[5,6]], [0,1,5]) = [1,4,6]; [-1,1,0] -> [1,4,5] (clipped)
    a = nd.array([[1, 2], [3, 4], [5, 6]])
    onp.testing.assert_array_equal(nd.batch_take(a, nd.array([0, 1, 5], dtype="int32")).asnumpy(), [1, 4, 6])
    onp.testing.assert_array_equal(nd.batch_take(a, nd.array([-1, 1, 0], dtype="int32")).asnumpy(), [1, 4, 5])
    with pytest.raises(ValueError, match=r"batch_take: expected 2-D a and one index per row.*\(2, 3, 4\)"):
        nd.batch_take(nd.ones((2, 3, 4)), nd.array([0, 1], dtype="int32"))
    s = mx.sym.batch_take(mx.sym.var("a"), mx.sym.var("i"))
    assert json.loads(s.tojson())["nodes"][-1]["op"] == "batch_take"
    onp.testing.assert_array_equal(s.eval(a=a, i=nd.array([1, 0, 1], dtype="int32"))[0].asnumpy(), [2, 3, 6])
    c = mx.sym.cast_storage(mx.sym.var("a"), stype="default")
    onp.testing.assert_array_equal(c.eval(a=a)[0].asnumpy(), a.asnumpy())
