"""``python -m mxjax.demo``: see :mod:`mxjax.demo`."""
import sys

from .cli import main

sys.exit(main())
