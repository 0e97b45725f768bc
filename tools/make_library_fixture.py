"""Build the extension libraries of tests/test_library.py and record real MXNet 2.0's outputs.

Run with the Python of an MXNet 2.0 install (it supplies include/mxnet/lib_api.h and
src/lib_api.cc, and runs the reference numbers)::

    <mxnet-2.0-venv>/bin/python tools/make_library_fixture.py

Writes into tests/fixtures/library/:
  libmxjax_test_ops.so  mxjax_test_ops.cc built as an MXNet user builds an extension (g++, stripped)
  libold_version.so     old_version.c: claims lib_api version 7, for the version-mismatch error
  reference.npz         inputs and MXNet 2.0's outputs/gradients of the library's ops
Needs Linux x86-64 and g++/gcc.  Paths are relative so that no build machine path ends
up in the binaries (the library's error messages quote its source file name).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as onp

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "library"


def build() -> None:
    import mxnet
    pkg = Path(mxnet.__file__).resolve().parent
    include, lib_api = pkg / "include", pkg / "src" / "lib_api.cc"
    if not (include / "mxnet" / "lib_api.h").exists() or not lib_api.exists():
        sys.exit(f"{pkg} has no include/mxnet/lib_api.h or src/lib_api.cc: not an MXNet 2.0 package")
    common = ["-shared", "-fPIC", "-Os", "-s", "-ffunction-sections", "-fdata-sections", "-Wl,--gc-sections",
              f"-ffile-prefix-map={pkg}=mxnet"]
    subprocess.run(["g++", *common, "-std=c++17", "-D_GLIBCXX_USE_CXX11_ABI=0", f"-I{include}",
                    "mxjax_test_ops.cc", str(lib_api), "-o", "libmxjax_test_ops.so"], cwd=OUT, check=True)
    subprocess.run(["gcc", *common, "old_version.c", "-o", "libold_version.so"], cwd=OUT, check=True)
    for name in ("libmxjax_test_ops.so", "libold_version.so"):
        data = (OUT / name).read_bytes()
        for marker in (str(pkg).encode(), str(OUT).encode()):
            if marker in data:
                sys.exit(f"{name} quotes the build path {marker.decode()}")


def record() -> None:
    """Run the library's ops in MXNet 2.0 on fixed inputs; save inputs and results."""
    import mxnet as mx
    from mxnet import autograd
    mx.library.load(str(OUT / "libmxjax_test_ops.so"), verbose=False)
    rng = onp.random.default_rng(20)
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((4, 2))
    head = rng.standard_normal((3, 2))
    x = rng.standard_normal((2, 5))
    acc = rng.standard_normal((2, 5)).astype("float32")
    out: dict = {"a": a, "b": b, "head": head, "x": x, "acc": acc}
    for dtype in ("float32", "float64"):
        na, nb = mx.nd.array(a, dtype=dtype), mx.nd.array(b, dtype=dtype)
        na.attach_grad()
        nb.attach_grad()
        with autograd.record():
            c = mx.nd.fx_matmul(na, nb, alpha=2.5)
        c.backward(mx.nd.array(head, dtype=dtype))
        out[f"matmul_{dtype}"], out[f"matmul_da_{dtype}"], out[f"matmul_db_{dtype}"] = (
            c.asnumpy(), na.grad.asnumpy(), nb.grad.asnumpy())
    nx = mx.nd.array(x, dtype="float64")
    out["posneg_pos"], out["posneg_neg"] = (o.asnumpy() for o in mx.nd.fx_posneg(nx))
    nx.attach_grad()
    with autograd.record():
        s = mx.nd.fx_scale_cols(nx, scale=0.75)
    s.backward(mx.nd.ones_like(s))
    out["scale_cols"], out["scale_cols_dx"] = s.asnumpy(), nx.grad.asnumpy()
    nacc = mx.nd.array(acc)
    first = mx.nd.fx_accumulate(mx.nd.array(x, dtype="float32"), nacc).asnumpy()
    second = mx.nd.fx_accumulate(mx.nd.array(x, dtype="float32"), nacc).asnumpy()
    out["accumulate_first"], out["accumulate_second"], out["accumulate_acc"] = first, second, nacc.asnumpy()
    out["contrib_double"] = mx.nd.contrib.fx_double(mx.nd.array(x, dtype="float32")).asnumpy()
    # a symbol MXNet wrote, run with a bound executor
    sym = mx.sym.fx_matmul(mx.sym.var("a"), mx.sym.var("b"), alpha=0.5, name="mm")
    out["symbol_json"] = onp.array(sym.tojson())
    exe = sym._bind(mx.cpu(), {"a": mx.nd.array(a, dtype="float64"), "b": mx.nd.array(b, dtype="float64")})
    out["symbol_out"] = exe.forward()[0].asnumpy()
    # the graph pass: MXNet's rewritten JSON (its copy of the doubled argument is left out: MXNet 2.0
    # returns that array with garbage in it, see test_graph_pass_rewrites_the_symbol)
    out["pass_json"] = onp.array(sym.optimize_for("fx_set_alpha", alpha="3").tojson())
    onp.savez_compressed(OUT / "reference.npz", **out)


if __name__ == "__main__":
    if not (sys.platform.startswith("linux") and os.uname().machine == "x86_64"):
        sys.exit("builds Linux x86-64 libraries only")
    build()
    record()
    print(f"wrote {sorted(p.name for p in OUT.iterdir())}")
