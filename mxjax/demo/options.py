"""Checks of the demo's command line that must fail before any work starts, with one clear line."""
from __future__ import annotations

import os
import re
import tempfile

import mxjax as mx

INSTALL_HINT = "pip install -e '.[demo]' (or: pip install scikit-learn)"
_DEVICE = re.compile(r"(cpu|gpu)(?:\((\d+)\))?")


class DemoError(Exception):
    """A problem the user can fix (bad option, missing dependency); ``main`` prints it as one line."""


def parse_device(text: str) -> mx.Device:
    """``cpu``, ``cpu(0)``, ``gpu`` or ``gpu(N)`` as an existing :class:`mx.Device`."""
    match = _DEVICE.fullmatch(text.strip().lower())
    if match is None:
        raise DemoError(f"--device {text!r} is not a device: use cpu or gpu(N), e.g. --device gpu(0)")
    device = mx.Device(match.group(1), int(match.group(2) or 0))
    if device.device_type == "gpu" and device.device_id >= mx.device.num_gpus():
        raise DemoError(f"--device {text!r}: this process sees {mx.device.num_gpus()} GPU(s); "
                        "use --device cpu")
    return device


def prepare_out_dir(path: str) -> str:
    """Create ``path`` if needed and prove it writable; returns its absolute path."""
    path = os.path.abspath(path)
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise DemoError(f"--out {path!r} is not a writable directory ({reason}); "
                        "choose another with --out DIR") from None
    return path
