"""``mx.contrib.text.utils``: count tokens in a string."""
from __future__ import annotations

import collections
import re

__all__ = ["count_tokens_from_str"]


def count_tokens_from_str(source_str, token_delim=' ', seq_delim='\n', to_lower=False, counter_to_update=None):
    """Count the tokens of ``source_str``, split on the regular expressions ``token_delim`` and ``seq_delim``.

    Returns a new ``collections.Counter``, or ``counter_to_update`` updated in place and returned.
    """
    tokens = [t for t in re.split(token_delim + '|' + seq_delim, source_str) if t]
    if to_lower:
        tokens = [t.lower() for t in tokens]
    counts = collections.Counter() if counter_to_update is None else counter_to_update
    counts.update(tokens)
    return counts
