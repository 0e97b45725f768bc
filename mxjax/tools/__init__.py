"""Command-line tools that ship with mxjax (``python -m mxjax.tools.im2rec``)."""
