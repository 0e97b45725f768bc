"""``mx.contrib.text.vocab``: ``Vocabulary`` maps tokens to indices (index 0 is the unknown token)."""
from __future__ import annotations

import collections

from ._constants import UNKNOWN_IDX

__all__ = ["Vocabulary"]


def _as_batch(x):
    """``(items, was_single)``: a non-list argument is treated as a batch of one."""
    return (x, False) if isinstance(x, list) else ([x], True)


class Vocabulary:
    """Index the unknown token, then ``reserved_tokens``, then the keys of ``counter``.

    Counter keys are taken by descending frequency, ties in ascending key order, stopping at the first
    key rarer than ``min_freq`` or once ``most_freq_count`` keys (not counting reserved ones) are in.
    """

    def __init__(self, counter=None, most_freq_count=None, min_freq=1, unknown_token='<unk>',
                 reserved_tokens=None):
        assert min_freq > 0, '`min_freq` must be set ' \
            'to a positive value.'
        extra = () if reserved_tokens is None else reserved_tokens
        assert unknown_token not in set(extra), '`reserved_token` cannot contain `unknown_token`.'
        assert len(set(extra)) == len(extra), '`reserved_tokens` cannot contain ' \
            'duplicate reserved tokens.'
        self._unk = unknown_token
        self._reserved = None if reserved_tokens is None else reserved_tokens[:]
        self._tokens = []  # index -> token
        self._index = {}   # token -> index
        for tok in (unknown_token, *extra):
            self._append(tok)
        if counter is None:
            return
        assert isinstance(counter, collections.Counter), '`counter` must be an instance ' \
            'of collections.Counter.'
        for tok in self._frequent_keys(counter, most_freq_count, min_freq):
            self._append(tok)

    def _append(self, tok):
        """Give ``tok`` the next index (a token met again is re-pointed, as MXNet does)."""
        self._index[tok] = len(self._tokens)
        self._tokens.append(tok)

    def _frequent_keys(self, counter, limit, min_freq):
        """Counter keys to index, most frequent first; the special tokens already indexed are skipped."""
        special = set(self._tokens)
        budget = len(counter) if limit is None else limit
        picked = []
        for tok, freq in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])):
            if freq < min_freq or len(picked) >= budget:
                break
            if tok not in special:
                picked.append(tok)
        return picked

    def __len__(self):
        return len(self._tokens)

    @property
    def token_to_idx(self):
        """dict: token -> index."""
        return self._index

    @property
    def idx_to_token(self):
        """list: the indexed tokens, position = index."""
        return self._tokens

    @property
    def unknown_token(self):
        """The token every unindexed token maps to (index 0)."""
        return self._unk

    @property
    def reserved_tokens(self):
        """The reserved tokens (indices 1..), or None."""
        return self._reserved

    def to_indices(self, tokens):
        """The index of a token, or the list of indices of a list of tokens (unknown tokens give 0)."""
        batch, single = _as_batch(tokens)
        found = [self._index.get(t, UNKNOWN_IDX) for t in batch]
        return found[0] if single else found

    def to_tokens(self, indices):
        """The token at an index, or the list of tokens at a list of indices; ``ValueError`` if invalid."""
        batch, single = _as_batch(indices)
        last = len(self._tokens) - 1
        bad = [i for i in batch if not isinstance(i, int) or i > last]
        if bad:
            raise ValueError('Token index %d in the provided `indices` is invalid.' % bad[0])
        found = [self._tokens[i] for i in batch]
        return found[0] if single else found
