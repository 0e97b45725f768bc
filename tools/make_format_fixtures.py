"""Re-create the MXNet format fixtures under tests/fixtures/formats (a copy of shared/formats/fixtures).

Requires the real reference implementation:  mxnet==1.9.1  and  numpy<1.24
(CPU build is enough).  Run from anywhere:

    python tools/make_format_fixtures.py

Everything is written under tests/fixtures/formats.  Seeds are fixed, so a re-run
reproduces the same bytes; the only values that depend on the machine are the
forward-pass outputs, which are MXNet's own float results.

Layout of what is written:
  ndarray/   NDArray list files (.params) + <name>.expected.json/.npz
  gluon/     a small HybridSequential exported with net.export, plus
             save_parameters output, the input and the expected output
  symbol/    symbol JSON files (multi-output graph, legacy upgrade case)
  recordio/  .rec/.idx files + expected payloads and partitions
"""
import base64
import json
import os
import struct
import zlib

import numpy as np
import mxnet as mx
from mxnet import gluon, npx
from mxnet.gluon import nn

assert mx.__version__ == "1.9.1", "fixtures must be produced by MXNet 1.9.1"

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests", "fixtures", "formats")
RS = np.random.RandomState(20240611)

TYPE_FLAG = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4,
             "int8": 5, "int64": 6, "bool": 7, "bfloat16": 12}
BF16 = mx.ndarray.ndarray._DTYPE_MX_TO_NP[12]      # MXNet's structured bf16 dtype


def out(*parts):
    path = os.path.join(HERE, *parts)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return path


def dump_json(obj, *parts):
    with open(out(*parts), "w") as f:
        json.dump(obj, f, indent=1, sort_keys=False)
        f.write("\n")


def b64(b):
    return base64.b64encode(bytes(b)).decode("ascii")


def dtype_name(nd):
    if nd.dtype == BF16:
        return "bfloat16"
    return np.dtype(nd.dtype).name


def np_value(nd):
    """Value as a plain numpy array; bfloat16 is returned as its uint16 bits."""
    a = nd.asnumpy()
    if dtype_name(nd) == "bfloat16":
        a = a.view(np.uint16)
    return a


def describe_params(fname, loaded, record_magic, note):
    """Build the expected JSON + npz for one NDArray list file."""
    if isinstance(loaded, dict):
        names = list(loaded.keys())
        arrays = list(loaded.values())
    else:
        names = None
        arrays = list(loaded)
    entries, npz = [], {}
    for i, a in enumerate(arrays):
        key = "e%d" % i
        stype = a.stype
        e = {"index": i, "name": None if names is None else names[i],
             "dtype": dtype_name(a), "type_flag": TYPE_FLAG[dtype_name(a)],
             "shape": list(a.shape), "stype": stype, "npz_key": key}
        if stype == "default":
            npz[key] = np_value(a)
        else:
            npz[key] = a.tostype("default").asnumpy()   # dense equivalent
            npz[key + ".data"] = a.data.asnumpy()
            if stype == "row_sparse":
                npz[key + ".indices"] = a.indices.asnumpy()
                e["aux"] = ["indices"]
            else:
                npz[key + ".indptr"] = a.indptr.asnumpy()
                npz[key + ".indices"] = a.indices.asnumpy()
                e["aux"] = ["indptr", "indices"]
        entries.append(e)
    base = os.path.splitext(fname)[0]
    np.savez(out("ndarray", base + ".expected.npz"), **npz)
    dump_json({"file": fname, "note": note, "list_magic": "0x112",
               "record_magic": record_magic, "count": len(arrays),
               "has_names": names is not None, "entries": entries},
              "ndarray", base + ".expected.json")


# ---------------------------------------------------------------- NDArray files
def make_ndarray_fixtures():
    def r(shape, dtype):
        if dtype == "bool":
            return RS.rand(*shape) > 0.5
        if dtype in ("uint8",):
            return RS.randint(0, 256, size=shape).astype(dtype)
        if dtype in ("int8",):
            return RS.randint(-128, 128, size=shape).astype(dtype)
        if dtype in ("int32",):
            return RS.randint(-2**31, 2**31 - 1, size=shape, dtype=np.int64).astype(dtype)
        if dtype in ("int64",):
            return RS.randint(-2**62, 2**62, size=shape, dtype=np.int64)
        return (RS.randn(*shape) * 10).astype(dtype)

    d = {}
    d["f32_2x3"] = mx.nd.array(r((2, 3), "float32"), dtype="float32")
    d["f16_vec"] = mx.nd.array(r((5,), "float16"), dtype="float16")
    d["f64_2x2"] = mx.nd.array(r((2, 2), "float64"), dtype="float64")
    d["i32_vec"] = mx.nd.array(r((4,), "int32"), dtype="int32")
    d["i64_vec"] = mx.nd.array(r((3,), "int64"), dtype="int64")
    d["u8_2x4"] = mx.nd.array(r((2, 4), "uint8"), dtype="uint8")
    d["i8_vec"] = mx.nd.array(r((6,), "int8"), dtype="int8")
    d["bool_vec"] = mx.nd.array(r((5,), "bool"), dtype=np.bool_)
    d["bf16_vec"] = mx.nd.array(np.array([1.0, -2.5, 3.140625, 65280.0, 1e-3],
                                         np.float32)).astype(BF16)
    d["scalar_like"] = mx.nd.array(np.array([42.5], np.float32))
    d["zero_size"] = mx.nd.array(np.zeros((0,), np.float32))
    d["zero_size_2x0"] = mx.nd.array(np.zeros((2, 0), np.int32), dtype="int32")
    d["f32_5d"] = mx.nd.array(r((1, 2, 1, 3, 2), "float32"))
    d[""] = mx.nd.array(np.array([7, 8], np.int64), dtype="int64")   # empty name
    d["unicode_\u00e9\u4e2d"] = mx.nd.array(np.array([1.5], np.float64), dtype="float64")
    mx.nd.save(out("ndarray", "dict_mixed.params"), d)
    describe_params("dict_mixed.params", mx.nd.load(out("ndarray", "dict_mixed.params")),
                    "0xF993FAC9",
                    "mx.nd.save of a dict (legacy shape semantics); names are UTF-8")

    lst = [mx.nd.array(r((3, 2), "float32")),
           mx.nd.array(r((4,), "int64"), dtype="int64"),
           mx.nd.array(r((2, 2, 2), "float16"), dtype="float16"),
           mx.nd.array(np.zeros((0, 3), np.float32))]
    mx.nd.save(out("ndarray", "list_mixed.params"), lst)
    describe_params("list_mixed.params", mx.nd.load(out("ndarray", "list_mixed.params")),
                    "0xF993FAC9", "mx.nd.save of a list: names section is empty")

    mx.nd.save(out("ndarray", "single.params"), mx.nd.array(r((2, 2), "float32")))
    describe_params("single.params", mx.nd.load(out("ndarray", "single.params")),
                    "0xF993FAC9", "mx.nd.save of one NDArray: written as a 1-element list")

    mx.nd.save(out("ndarray", "empty.params"), [])
    describe_params("empty.params", mx.nd.load(out("ndarray", "empty.params")),
                    None, "mx.nd.save([]) (an empty dict gives the same bytes)")

    # numpy shape semantics -> record magic v3; 0-dim and zero-size arrays
    npx.set_np()
    nd = {"scalar0d": mx.np.array(3.25, dtype="float32"),
          "int_scalar0d": mx.np.array(-9, dtype="int64"),
          "empty_2x0": mx.np.zeros((2, 0), dtype="int32"),
          "empty_0x3": mx.np.zeros((0, 3), dtype="float64"),
          "m2x3": mx.np.array(r((2, 3), "float32")),
          "b": mx.np.array(r((4,), "bool"), dtype="bool")}
    npx.save(out("ndarray", "np_semantics.params"), nd)
    # describe with numpy values directly (mx.nd cannot hold 0-dim arrays)
    entries, npz = [], {}
    for i, (k, v) in enumerate(npx.load(out("ndarray", "np_semantics.params")).items()):
        a = v.asnumpy()
        entries.append({"index": i, "name": k, "dtype": a.dtype.name,
                        "type_flag": TYPE_FLAG[a.dtype.name], "shape": list(a.shape),
                        "stype": "default", "npz_key": "e%d" % i})
        npz["e%d" % i] = a
    npx.reset_np()
    np.savez(out("ndarray", "np_semantics.expected.npz"), **npz)
    dump_json({"file": "np_semantics.params",
               "note": "npx.save under numpy shape semantics (npx.set_np()); 0-dim "
                       "arrays have ndim 0 and one element",
               "list_magic": "0x112", "record_magic": "0xF993FACA",
               "count": len(entries), "has_names": True, "entries": entries},
              "ndarray", "np_semantics.expected.json")

    # sparse storage
    dense = np.array([[0, 1.5, 0], [0, 0, 0], [2, 0, 3], [0, 0, 0]], np.float32)
    sp = {"rsp": mx.nd.array(dense).tostype("row_sparse"),
          "csr": mx.nd.array(dense).tostype("csr"),
          "rsp_allzero": mx.nd.sparse.zeros("row_sparse", (3, 2)),
          "csr_f64": mx.nd.array(np.array([[0, 0, 4.0], [5.0, 0, 0]]),
                                 dtype="float64").tostype("csr"),
          "dense": mx.nd.array(dense)}
    mx.nd.save(out("ndarray", "sparse.params"), sp)
    describe_params("sparse.params", mx.nd.load(out("ndarray", "sparse.params")),
                    "0xF993FAC9", "row_sparse (stype 1) and csr (stype 2) records")

    # Older record layouts that MXNet 1.9.1 still reads.  MXNet 1.9.1 cannot
    # write them, so they are assembled here byte by byte (layout as in
    # FORMATS.md) and the expected values are whatever MXNet 1.9.1 loads.
    def list_file(records, names):
        b = struct.pack("<QQQ", 0x112, 0, len(records)) + b"".join(records)
        b += struct.pack("<Q", len(names))
        for n in names:
            nb = n.encode("utf-8")
            b += struct.pack("<Q", len(nb)) + nb
        return b

    def rec_v1(a, flag):
        return (struct.pack("<I", 0xF993FAC8) + struct.pack("<i", a.ndim)
                + struct.pack("<%dq" % a.ndim, *a.shape) + struct.pack("<iii", 1, 0, flag)
                + a.tobytes())

    def rec_v0(a, flag):
        return (struct.pack("<I", a.ndim) + struct.pack("<%dI" % a.ndim, *a.shape)
                + struct.pack("<iii", 1, 0, flag) + a.tobytes())

    a1 = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    a2 = np.array([1, -2, 3], np.int32)
    a3 = np.arange(8, dtype=np.float64).reshape(2, 2, 2)
    with open(out("ndarray", "legacy_v1.params"), "wb") as f:
        f.write(list_file([rec_v1(a1, 0), rec_v1(a2, 4), rec_v1(a3, 1)], ["a", "b", "c"]))
    with open(out("ndarray", "legacy_v0.params"), "wb") as f:
        f.write(list_file([rec_v0(a1, 0), rec_v0(a2, 4), rec_v0(a3, 1)], []))
    for fn, magic in (("legacy_v1.params", "0xF993FAC8"), ("legacy_v0.params", None)):
        loaded = mx.nd.load(out("ndarray", fn))
        vals = list(loaded.values()) if isinstance(loaded, dict) else loaded
        for got, want in zip(vals, (a1, a2, a3)):
            assert got.dtype == want.dtype and np.array_equal(got.asnumpy(), want)
        describe_params(fn, loaded, magic,
                        "hand-assembled in the pre-v2 layout; values are what MXNet "
                        "1.9.1 mx.nd.load returns" + ("" if magic else
                        " (v0: no record magic, uint32 ndim and uint32 dims)"))


# ---------------------------------------------------------------- Gluon export
def make_gluon_fixtures():
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(nn.Conv2D(4, kernel_size=3, padding=1, in_channels=3))
        net.add(nn.BatchNorm(in_channels=4))
        net.add(nn.Activation("relu"))
        net.add(nn.Dense(5, in_units=4 * 6 * 6))
    net.initialize()
    prs = np.random.RandomState(7)
    for name, p in net.collect_params().items():
        shape = p.shape
        if name.endswith("running_var"):
            v = prs.uniform(0.5, 1.5, size=shape)
        elif name.endswith("running_mean"):
            v = prs.randn(*shape) * 0.2
        elif name.endswith("gamma"):
            v = prs.uniform(0.5, 1.5, size=shape)
        else:
            v = prs.randn(*shape) * 0.3
        p.set_data(mx.nd.array(v.astype(np.float32)))
    net.hybridize()
    x = prs.randn(2, 3, 6, 6).astype(np.float32)
    y = net(mx.nd.array(x)).asnumpy()               # inference mode (not recording)
    net.export(out("gluon", "tiny"), epoch=0)
    net.save_parameters(out("gluon", "tiny.save_parameters.params"))
    # cross-check: the exported files alone reproduce the output
    sb = gluon.SymbolBlock.imports(out("gluon", "tiny-symbol.json"), ["data"],
                                   out("gluon", "tiny-0000.params"))
    y2 = sb(mx.nd.array(x)).asnumpy()
    assert np.array_equal(y, y2)
    np.savez(out("gluon", "tiny.io.npz"), data=x, output=y)
    sym = mx.sym.load(out("gluon", "tiny-symbol.json"))
    exp = mx.nd.load(out("gluon", "tiny-0000.params"))
    sp = mx.nd.load(out("gluon", "tiny.save_parameters.params"))
    dump_json({
        "symbol": "tiny-symbol.json", "params": "tiny-0000.params",
        "io": "tiny.io.npz (keys: data = input, output = expected output)",
        "list_arguments": sym.list_arguments(),
        "list_auxiliary_states": sym.list_auxiliary_states(),
        "list_outputs": sym.list_outputs(),
        "list_inputs": sym.list_inputs(),
        "export_param_keys": list(exp.keys()),
        "export_param_shapes": {k: list(v.shape) for k, v in exp.items()},
        "save_parameters_keys": list(sp.keys()),
        "save_parameters_to_export": {
            k: ("arg:" if not k.endswith(("running_mean", "running_var")) else "aux:")
            + "net_" + {"0": "conv0_", "1": "batchnorm0_", "3": "dense0_"}[k.split(".")[0]]
            + k.split(".")[1] for k in sp.keys()},
        "mode": "inference (BatchNorm uses running_mean/running_var)",
    }, "gluon", "tiny.expected.json")
    with open(out("gluon", "tiny.expected.json")) as f:
        mapping = json.load(f)["save_parameters_to_export"]
    for k, v in mapping.items():
        assert np.array_equal(sp[k].asnumpy(), exp[v].asnumpy())

    # The same kind of export made under numpy semantics (npx.set_np()):
    # parameter records then carry the v3 magic.
    npx.set_np()
    try:
        net = nn.HybridSequential(prefix="npnet_")
        with net.name_scope():
            net.add(nn.Dense(3, in_units=4))
            net.add(nn.BatchNorm(in_channels=3))
            net.add(nn.Activation("tanh"))
        net.initialize()
        for name, p in net.collect_params().items():
            v = (prs.uniform(0.5, 1.5, size=p.shape) if name.endswith(("running_var", "gamma"))
                 else prs.randn(*p.shape) * 0.3)
            p.set_data(mx.np.array(v.astype(np.float32)))
        net.hybridize()
        x = prs.randn(2, 4).astype(np.float32)
        y = net(mx.np.array(x)).asnumpy()
        net.export(out("gluon", "tiny_np"), epoch=3)
        np.savez(out("gluon", "tiny_np.io.npz"), data=x, output=y)
        sym = mx.sym.load(out("gluon", "tiny_np-symbol.json"))
        exp = npx.load(out("gluon", "tiny_np-0003.params"))
        dump_json({
            "symbol": "tiny_np-symbol.json", "params": "tiny_np-0003.params (epoch 3)",
            "io": "tiny_np.io.npz (keys: data, output)",
            "record_magic": "0xF993FACA",
            "list_arguments": sym.list_arguments(),
            "list_auxiliary_states": sym.list_auxiliary_states(),
            "list_outputs": sym.list_outputs(),
            "export_param_keys": list(exp.keys()),
            "mode": "exported under npx.set_np(); inference mode",
        }, "gluon", "tiny_np.expected.json")
    finally:
        npx.reset_np()


# ---------------------------------------------------------------- Symbol JSON
def make_symbol_fixtures():
    x = mx.sym.var("x", shape=(2, 6), dtype="float32", lr_mult=0.5,
                   init=mx.init.Constant(0.5))
    bn = mx.sym.BatchNorm(x, fix_gamma=False, eps=1e-3, name="bn")
    parts = mx.sym.split(bn, num_outputs=3, axis=1, name="sp")
    a = parts[0] + parts[2]
    b = mx.sym.sum(parts[1], axis=None, keepdims=True, name="s")
    c = mx.sym.clip(a, a_min=-1.0, a_max=1.0, name="c")
    d = mx.sym.reshape(c * 2.5, shape=(-1,), name="r")
    e = mx.sym.Pooling(mx.sym.reshape(x, (1, 1, 2, 6)), kernel=(1, 2), stride=(1, 2),
                       pool_type="max", name="p")
    g = mx.sym.Group([d, b, parts[1], e])
    g.save(out("symbol", "multi_output-symbol.json"))
    g2 = mx.sym.load(out("symbol", "multi_output-symbol.json"))
    prs = np.random.RandomState(11)
    args = {"x": prs.randn(2, 6).astype(np.float32),
            "bn_gamma": prs.uniform(0.5, 1.5, 6).astype(np.float32),
            "bn_beta": prs.randn(6).astype(np.float32) * 0.1}
    aux = {"bn_moving_mean": prs.randn(6).astype(np.float32) * 0.1,
           "bn_moving_var": prs.uniform(0.5, 1.5, 6).astype(np.float32)}
    ex = g2.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in args.items()},
                 aux_states={k: mx.nd.array(v) for k, v in aux.items()})
    outs = [o.asnumpy() for o in ex.forward(is_train=False)]
    npz = {"arg:" + k: v for k, v in args.items()}
    npz.update({"aux:" + k: v for k, v in aux.items()})
    npz.update({"out%d" % i: o for i, o in enumerate(outs)})
    np.savez(out("symbol", "multi_output.io.npz"), **npz)
    arg_s, out_s, aux_s = g2.infer_shape(x=(2, 6))
    dump_json({
        "symbol": "multi_output-symbol.json",
        "io": "multi_output.io.npz: 'arg:<name>', 'aux:<name>' inputs, 'out<i>' outputs "
              "of forward(is_train=False)",
        "list_arguments": g2.list_arguments(),
        "list_auxiliary_states": g2.list_auxiliary_states(),
        "list_outputs": g2.list_outputs(),
        "infer_shape": {"arg_shapes": [list(s) for s in arg_s],
                        "out_shapes": [list(s) for s in out_s],
                        "aux_shapes": [list(s) for s in aux_s]},
    }, "symbol", "multi_output.expected.json")

    # A hand-written graph in the pre-NNVM (MXNet 0.8) JSON layout, and what
    # MXNet 1.9.1 turns it into on load (its upgrader output, re-serialised).
    legacy = {
        "nodes": [
            {"op": "null", "param": {}, "name": "data", "inputs": [],
             "backward_source_id": -1, "attr": {"ctx_group": "dev1"}},
            {"op": "null", "param": {}, "name": "fc_weight", "inputs": [],
             "backward_source_id": -1, "attr": {"lr_mult": "0.2"}},
            {"op": "null", "param": {}, "name": "fc_bias", "inputs": [],
             "backward_source_id": -1},
            {"op": "FullyConnected", "param": {"no_bias": "False", "num_hidden": "4"},
             "name": "fc", "inputs": [[0, 0], [1, 0], [2, 0]], "backward_source_id": -1,
             "attr": {"weight_wd_mult": "0.0"}},
            {"op": "null", "param": {}, "name": "bn_gamma", "inputs": [],
             "backward_source_id": -1},
            {"op": "null", "param": {}, "name": "bn_beta", "inputs": [],
             "backward_source_id": -1},
            {"op": "BatchNorm", "param": {"eps": "0.001", "fix_gamma": "True",
                                          "momentum": "0.9", "use_global_stats": "False"},
             "name": "bn", "inputs": [[3, 0], [4, 0], [5, 0]], "backward_source_id": -1},
            {"op": "Activation", "param": {"act_type": "relu"}, "name": "relu",
             "inputs": [[6, 0]], "backward_source_id": -1},
            {"op": "argmax", "param": {"axis": "-1"}, "name": "am", "inputs": [[7, 0]],
             "backward_source_id": -1},
        ],
        "arg_nodes": [0, 1, 2, 4, 5],
        "heads": [[8, 0]],
    }
    with open(out("symbol", "legacy_v0.8-symbol.json"), "w") as f:
        json.dump(legacy, f, indent=2)
        f.write("\n")
    s = mx.sym.load(out("symbol", "legacy_v0.8-symbol.json"))
    s.save(out("symbol", "legacy_v0.8.upgraded-symbol.json"))
    dump_json({
        "symbol": "legacy_v0.8-symbol.json",
        "upgraded": "legacy_v0.8.upgraded-symbol.json (MXNet 1.9.1 load + save)",
        "list_arguments": s.list_arguments(),
        "list_auxiliary_states": s.list_auxiliary_states(),
        "list_outputs": s.list_outputs(),
    }, "symbol", "legacy_v0.8.expected.json")


# ---------------------------------------------------------------- RecordIO
MAGIC = struct.pack("<I", 0xCED7230A)


def read_parts(rec_bytes, offset):
    """Walk the physical parts of the logical record starting at offset."""
    parts, pos = [], offset
    while True:
        magic, lrec = struct.unpack_from("<II", rec_bytes, pos)
        assert magic == 0xCED7230A
        cflag, length = lrec >> 29, lrec & ((1 << 29) - 1)
        parts.append([cflag, length])
        pos += 8 + ((length + 3) & ~3)
        if cflag in (0, 3):
            return parts, pos


def irheader_json(h):
    lab = h.label
    if isinstance(lab, np.ndarray):
        lab = [float(v) for v in lab]
        lab_bits = [int(v) for v in np.asarray(h.label, np.float32).view(np.uint32)]
    else:
        lab_bits = int(np.array([lab], np.float32).view(np.uint32)[0])
        lab = float(lab)
    return {"flag": int(h.flag), "label": lab, "label_float32_bits": lab_bits,
            "id": int(h.id), "id2": int(h.id2)}


def make_png(img, extra=b""):
    """Minimal RGB PNG (so MXNet's image iterator can decode the records)."""
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    h, w, _ = img.shape
    raw = b"".join(b"\x00" + img[i].tobytes() for i in range(h))
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    if extra:
        png += chunk(b"teSt", extra)      # private ancillary chunk, ignored by decoders
    return png + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def make_recordio_fixtures():
    prs = np.random.RandomState(5)
    P = mx.recordio.pack
    H = mx.recordio.IRHeader
    rnd = lambda n: prs.randint(0, 256, n).astype(np.uint8).tobytes()

    def with_magic(n, positions):
        b = bytearray(rnd(n))
        for p in positions:
            b[p:p + 4] = MAGIC
        return bytes(b)

    magic_float = float(np.frombuffer(MAGIC, np.float32)[0])
    items = [
        ("empty", b"", None),
        ("len1", b"a", None),
        ("len2", b"ab", None),
        ("len3", b"abc", None),
        ("len4", b"abcd", None),
        ("text11", b"hello world", None),
        ("exactly_magic", MAGIC, None),
        ("magic_then_tail", MAGIC + b"tail", None),
        ("head_then_magic", b"head" + MAGIC, None),
        ("two_adjacent_magics", b"xyzw" + MAGIC + MAGIC + b"end!!", None),
        ("unaligned_magic_not_split", b"u" + MAGIC + b"nal", None),
        ("unaligned_and_aligned", b"ab" + MAGIC + b"cd" + MAGIC, None),
        ("random64_magic_at_12_40", with_magic(64, [12, 40]), None),
        ("ir_single_label", None, (H(0, 3.5, 1234, 0), b"payload-single")),
        ("ir_multi_label", None, (H(0, [1.0, 2.0, 3.5], 99, 7), b"multi")),
        ("ir_one_element_label", None, (H(0, np.array([-4.0]), 5, 0), b"one")),
        ("ir_big_ids_empty_body", None, (H(0, -0.25, 2**40 + 5, 2**63 + 1), b"")),
        ("ir_label_bits_are_magic", None, (H(0, [magic_float, 1.0], 17, 0), b"lbl")),
        ("random300", rnd(300), None),
        ("random1001_magic_at_500", with_magic(1001, [500]), None),
        ("random257", rnd(257), None),
        ("zeros16", bytes(16), None),
    ]
    rec_path, idx_path = out("recordio", "mixed.rec"), out("recordio", "mixed.idx")
    w = mx.recordio.MXIndexedRecordIO(idx_path, rec_path, "w")
    keys = []
    for i, (name, raw, ir) in enumerate(items):
        payload = raw if ir is None else P(ir[0], ir[1])
        key = 100 + 3 * i                  # keys are labels, not positions
        w.write_idx(key, payload)
        keys.append(key)
    w.close()
    data = open(rec_path, "rb").read()
    idx = [l.split("\t") for l in open(idx_path).read().splitlines()]
    # read back with MXNet's sequential reader and its indexed reader
    rd = mx.recordio.MXRecordIO(rec_path, "r")
    seq = []
    while True:
        s = rd.read()
        if s is None:
            break
        seq.append(s)
    rd.close()
    ird = mx.recordio.MXIndexedRecordIO(idx_path, rec_path, "r")
    recs = []
    for i, (name, raw, ir) in enumerate(items):
        payload = ird.read_idx(keys[i])
        assert payload == seq[i]
        off = int(idx[i][1])
        parts, end = read_parts(data, off)
        e = {"key": keys[i], "name": name, "offset": off, "end": end,
             "length": len(payload), "payload_b64": b64(payload), "parts": parts}
        if ir is not None:
            h, body = mx.recordio.unpack(payload)
            e["irheader"] = irheader_json(h)
            e["body_b64"] = b64(body)
        recs.append(e)
    ird.close()
    dump_json({"rec": "mixed.rec", "idx": "mixed.idx", "file_size": len(data),
               "magic": "0xCED7230A", "records": recs}, "recordio", "mixed.expected.json")

    # Image records, so MXNet's real InputSplit partitioning (ImageRecordIter
    # with part_index/num_parts) can be observed.  Two files, to cover the
    # multi-file case too ('a;b' URI).
    img = (np.arange(4 * 4 * 3) * 5 % 256).astype(np.uint8).reshape(4, 4, 3)
    # PNG = 8-byte signature + 25-byte IHDR chunk + 8-byte teSt header, so the
    # extra bytes start at payload offset 24 + 41 = 65; magic at +3 -> 68.
    extras = [b"", rnd(10), b"pad" + MAGIC + rnd(40), rnd(3), rnd(200),
              b"pad" + MAGIC + MAGIC + rnd(5), rnd(77), rnd(1), rnd(150),
              b"pad" + MAGIC, rnd(33), rnd(64)]
    files = {"images0": range(0, 7), "images1": range(7, 12)}
    info = {}
    for fname, rng in files.items():
        w = mx.recordio.MXIndexedRecordIO(out("recordio", fname + ".idx"),
                                          out("recordio", fname + ".rec"), "w")
        for i in rng:
            w.write_idx(i, P(H(0, float(i), i, 0), make_png(img, extras[i])))
        w.close()
        raw = open(out("recordio", fname + ".rec"), "rb").read()
        offs = [int(l.split("\t")[1]) for l in open(out("recordio", fname + ".idx"))]
        info[fname] = {"file_size": len(raw), "records": [
            {"label": float(i), "offset": o, "parts": read_parts(raw, o)[0]}
            for i, o in zip(rng, offs)]}

    def run_iter(**kw):
        try:
            it = mx.io.ImageRecordIter(data_shape=(3, 4, 4), batch_size=1,
                                       preprocess_threads=1, shuffle=False,
                                       verbose=False, **kw)
        except StopIteration:      # empty partition: MXNet raises in the constructor
            return []
        labels = [float(b.label[0].asnumpy()[0]) for b in it]
        return labels

    assert run_iter(path_imgrec=out("recordio", "images0.rec")) == [float(i) for i in range(7)]
    parts = {"byte_range_single_file": {}, "byte_range_two_files": {},
             "indexed_single_file": {}}
    rel0 = out("recordio", "images0.rec")
    rel1 = out("recordio", "images1.rec")
    for n in range(1, 9):
        parts["byte_range_single_file"][str(n)] = [
            run_iter(path_imgrec=rel0, part_index=k, num_parts=n) for k in range(n)]
        parts["byte_range_two_files"][str(n)] = [
            run_iter(path_imgrec=rel0 + ";" + rel1, part_index=k, num_parts=n)
            for k in range(n)]
        parts["indexed_single_file"][str(n)] = [
            run_iter(path_imgrec=rel0, path_imgidx=out("recordio", "images0.idx"),
                     part_index=k, num_parts=n) for k in range(n)]
    dump_json({
        "files": info,
        "note": "payload = IRHeader(flag=0, label=i, id=i, id2=0) + PNG image; each list "
                "holds the labels ImageRecordIter(part_index=k, num_parts=n) yields, in "
                "order.  byte_range_* = no idx file (dmlc 'recordio' split; two_files "
                "uses the URI 'images0.rec;images1.rec'); indexed_* = with images0.idx "
                "(dmlc 'indexed_recordio' split, shuffle off).",
        "partitions": parts}, "recordio", "images.expected.json")


if __name__ == "__main__":
    make_ndarray_fixtures()
    make_gluon_fixtures()
    make_symbol_fixtures()
    make_recordio_fixtures()
    print("fixtures written under", os.path.relpath(HERE))
