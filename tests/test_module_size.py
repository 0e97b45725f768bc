"""The layout's rule that modules stay small: every Python module of the package is at most 400 lines.

A module past it holds more than one job; split it by what its parts hold (a private sibling, as
``graph/_bulk_run.py`` is ``graph/bulk.py``'s running half) instead of raising the limit.
"""
import pathlib

import mxjax

LIMIT = 400
PACKAGE = pathlib.Path(mxjax.__file__).parent


def _sizes():
    for path in sorted(PACKAGE.rglob("*.py")):
        with open(path, encoding="utf-8") as f:
            yield path.relative_to(PACKAGE).as_posix(), sum(1 for _ in f)


def test_every_module_is_at_most_400_lines():
    sizes = dict(_sizes())
    assert len(sizes) > 300 and "graph/bulk.py" in sizes  # the walk found the package's modules
    over = {name: n for name, n in sizes.items() if n > LIMIT}
    assert not over, f"modules over {LIMIT} lines (split them by what they hold): {over}"
