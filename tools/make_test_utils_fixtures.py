"""Write tests/fixtures/test_utils/signatures.json: MXNet 2.0's mx.test_utils signatures.

Run inside a virtualenv with mxnet 2.0.0b1 installed, from the repository root:
``python tools/make_test_utils_fixtures.py``.  For each public function of
``mxnet.test_utils`` the file records its parameter names, kinds and default reprs,
so tests can check mxjax's ``mx.test_utils`` takes the same arguments.
"""
import inspect
import json
import os

import mxnet.test_utils as tu


def describe(fn):
    return [[p.name, p.kind.name, None if p.default is inspect.Parameter.empty else repr(p.default)]
            for p in inspect.signature(fn).parameters.values()]


def main():
    table = {name: describe(obj) for name, obj in sorted(vars(tu).items())
             if inspect.isfunction(obj) and obj.__module__ == tu.__name__ and not name.startswith("_")}
    out = os.path.join("tests", "fixtures", "test_utils", "signatures.json")
    lines = [f"  {json.dumps(name)}: {json.dumps(params)}" for name, params in sorted(table.items())]
    with open(out, "w") as f:
        f.write("{\n" + ",\n".join(lines) + "\n}\n")
    print(f"wrote {len(table)} signatures to {out}")


if __name__ == "__main__":
    main()
