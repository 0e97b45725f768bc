"""``mx.contrib.text.embedding``: token embeddings loaded from pre-trained vector text files.

``GloVe`` and ``FastText`` read the file MXNet would download, from where MXNet would put it
(``<embedding_root>/<glove|fasttext>/<pretrained_file_name>``; a ``.zip``/``.tar.gz`` archive MXNet
would download there is unpacked first).  Nothing is downloaded: a missing file raises
``FileNotFoundError`` naming the file, its directory and its URL.  The SHA-1 of a present file is not checked.

Vectors are assembled in host NumPy and turned into one mxjax array at the end, in the array flavour
(``mx.np`` or ``mx.nd``) that is active, as MXNet's results are.
"""
from __future__ import annotations

import logging
import os
import tarfile
import warnings
import zipfile

import numpy as onp

from ._constants import APACHE_REPO_URL, FASTTEXT_FILES, GLOVE_ARCHIVES, GLOVE_FILES, UNKNOWN_IDX as UNK
from .vocab import Vocabulary
from ... import base, ndarray as nd, numpy as mxnp, registry, util

__all__ = ["register", "create", "get_pretrained_file_names", "GloVe", "FastText", "CustomEmbedding",
           "CompositeEmbedding"]

_NICKNAME = 'token embedding'


def register(embedding_cls):
    """Register a ``_TokenEmbedding`` subclass so ``create(name)`` can build it (name = lower-cased class name)."""
    return registry.get_register_func(_TokenEmbedding, _NICKNAME)(embedding_cls)


def create(embedding_name, **kwargs):
    """Build the registered token embedding ``embedding_name`` (case-insensitive) with ``kwargs``."""
    return registry.get_create_func(_TokenEmbedding, _NICKNAME)(embedding_name, **kwargs)


def get_pretrained_file_names(embedding_name=None):
    """The valid ``pretrained_file_name`` values of ``embedding_name``, or a dict of them for every embedding."""
    known = registry.get_registry(_TokenEmbedding)
    names = {key: list(cls.pretrained_file_name_sha1) for key, cls in known.items()}
    if embedding_name is None:
        return names
    if embedding_name in names:
        return names[embedding_name]
    raise KeyError('Cannot find `embedding_name` %s. Use `get_pretrained_file_names(embedding_name=None).keys()` '
                   'to get all the valid embedding names.' % embedding_name)


def _to_mx(host, dtype=None):
    """A host array as an mxjax array of the active flavour."""
    return (mxnp.array if util.is_np_array() else nd.array)(host, dtype=dtype)


def _host(arr):
    """An mxjax array (either flavour) as a NumPy array."""
    return onp.asarray(arr.asnumpy())


def _parse_vector_file(path, delim, encoding, unknown_token):
    """Read a ``token v1 v2 ...`` file into ``(tokens, rows, unknown_row)``.

    Repeated tokens keep their first vector and lines with a single number (headers) are skipped, both
    with a warning; the first line for ``unknown_token`` is returned apart, as ``unknown_row``.
    """
    tokens, rows, seen, unknown_row = [], [], set(), None
    width = None
    with open(path, 'r', encoding=encoding) as src:
        for lineno, raw in enumerate(src, 1):
            fields = raw.rstrip().split(delim)
            assert len(fields) > 1, ('At line %d of the pre-trained text embedding file: the data format '
                                     'of the pre-trained token embedding file %s is unexpected.' % (lineno, path))
            tok, vec = fields[0], [float(v) for v in fields[1:]]
            if tok == unknown_token and unknown_row is None:
                unknown_row = vec
                seen.add(tok)
                continue
            if tok in seen:
                warnings.warn('At line %d of the pre-trained token embedding file: the embedding vector for token '
                              '%s has been loaded and a duplicate embedding for the  same token is seen and '
                              'skipped.' % (lineno, tok))
                continue
            if len(vec) == 1:
                warnings.warn('At line %d of the pre-trained text embedding file: token %s with 1-dimensional vector '
                              '%s is likely a header and is skipped.' % (lineno, tok, vec))
                continue
            width = len(vec) if width is None else width
            assert len(vec) == width, (
                'At line %d of the pre-trained token embedding file: the dimension of token %s is %d but the '
                'dimension of previous tokens is %d. Dimensions of all the tokens must be the same.'
                % (lineno, tok, len(vec), width))
            tokens.append(tok)
            rows.append(vec)
            seen.add(tok)
    return tokens, rows, unknown_row


class _TokenEmbedding(Vocabulary):
    """A ``Vocabulary`` whose tokens each have a vector: row ``i`` of ``idx_to_vec`` belongs to token ``i``.

    Row 0 (the unknown token) is the file's vector for ``unknown_token`` if it has one, else
    ``init_unknown_vec(shape=vec_len)``.  A token repeated in the file keeps its first vector.
    Subclasses with downloadable files set ``pretrained_file_name_sha1`` and ``pretrained_archive_name_sha1``.
    """

    # ---- where a pre-trained file lives -------------------------------------------------------------
    @classmethod
    def _archive_of(cls, file_name):
        """Name of the archive MXNet downloads for ``file_name`` (the file itself by default)."""
        return file_name

    @classmethod
    def _require_known_file(cls, file_name):
        if file_name in cls.pretrained_file_name_sha1:
            return
        me = cls.__name__.lower()
        raise KeyError('Cannot find pretrained file %s for token embedding %s. Valid pretrained files for '
                       'embedding %s: %s' % (file_name, me, me, ', '.join(cls.pretrained_file_name_sha1)))

    @classmethod
    def _locate(cls, embedding_root, file_name):
        """The local path of ``file_name``, unpacking MXNet's downloaded archive if only that is there."""
        folder = os.path.join(os.path.expanduser(embedding_root), cls.__name__.lower())
        target = os.path.join(folder, file_name)
        archive_name = cls._archive_of(file_name)
        archive = os.path.join(folder, archive_name)
        if not os.path.isfile(target) and archive != target and os.path.isfile(archive):
            if archive.endswith('.zip'):
                with zipfile.ZipFile(archive) as bundle:
                    bundle.extractall(folder)
            elif archive.endswith('.gz'):
                with tarfile.open(archive, 'r:gz') as bundle:
                    bundle.extractall(path=folder)
        if os.path.isfile(target):
            return target
        repo = os.environ.get('MXNET_GLUON_REPO', APACHE_REPO_URL)
        url = '%sgluon/embeddings/%s/%s' % (repo, cls.__name__.lower(), archive_name)
        raise FileNotFoundError(
            'Pre-trained token embedding file %s not found: mxjax does not download it. Put %s (or its archive '
            '%s, from %s) in the directory %s' % (file_name, file_name, archive_name, url, folder))

    # ---- filling the table --------------------------------------------------------------------------
    def _read_vectors(self, path, delim, init_unknown_vec, encoding='utf8'):
        """Index every token of the vector file at ``path`` (after the existing ones) and keep its vectors."""
        path = os.path.expanduser(path)
        if not os.path.isfile(path):
            raise ValueError('`pretrained_file_path` must be a valid path to the pre-trained token embedding file.')
        logging.info('Loading pre-trained token embedding vectors from %s', path)
        tokens, rows, unknown_row = _parse_vector_file(path, delim, encoding, self.unknown_token)
        for tok in tokens:
            self._append(tok)
        width = len(rows[0]) if rows else None
        if unknown_row is None:
            unknown_row = _host(init_unknown_vec(shape=width))
        table = onp.array([[0.0] * width] + rows, dtype='float32')
        table[UNK] = unknown_row
        self._width = width
        self._table = _to_mx(table)

    def _adopt_vocabulary(self, vocabulary):
        """Take over ``vocabulary``'s tokens (copies, so later changes to either stay apart)."""
        self._tokens = list(vocabulary.idx_to_token)
        self._index = dict(vocabulary.token_to_idx)
        self._unk = vocabulary.unknown_token
        reserved = vocabulary.reserved_tokens
        self._reserved = None if reserved is None else reserved[:]

    def _concat_vectors(self, sources, tokens):
        """Row ``i`` becomes the vectors of ``tokens[i]`` in every source, side by side.

        Row 0 takes each source's unknown vector whatever ``tokens[0]`` is.
        """
        blocks = []
        for src in sources:
            rows = [UNK] + [src.token_to_idx.get(t, UNK) for t in tokens[1:]]
            blocks.append(_host(src.idx_to_vec)[rows])
        table = onp.concatenate(blocks, axis=1).astype('float32')
        self._width = table.shape[1]
        self._table = _to_mx(table)

    def _restrict_to(self, vocabulary):
        """Re-index to ``vocabulary``'s tokens, keeping this embedding's vectors for them."""
        if vocabulary is None:
            return
        assert isinstance(vocabulary, Vocabulary), \
            'The argument `vocabulary` must be an instance of mxnet.contrib.text.vocab.Vocabulary.'
        self._concat_vectors([self], vocabulary.idx_to_token)
        self._adopt_vocabulary(vocabulary)

    # ---- public API -----------------------------------------------------------------------------------
    @property
    def vec_len(self):
        """int: the length of every vector."""
        return self._width

    @property
    def idx_to_vec(self):
        """(len(self), vec_len) array: row ``i`` is the vector of token ``i``."""
        return self._table

    def get_vecs_by_tokens(self, tokens, lower_case_backup=False):
        """The vector of a token (1-D) or the vectors of a list of tokens (2-D); unknown tokens get row 0.

        With ``lower_case_backup``, a token not found as written is looked up lower-cased.
        """
        single = not isinstance(tokens, list)
        lookup = self.token_to_idx

        def row_of(tok):
            if tok in lookup or not lower_case_backup:
                return lookup.get(tok, UNK)
            return lookup.get(tok.lower(), UNK)

        rows = [row_of(t) for t in ([tokens] if single else tokens)]
        take = mxnp.take if util.is_np_array() else nd.take
        picked = take(self.idx_to_vec, _to_mx(rows, dtype='int64'), axis=0)
        return picked[0] if single else picked

    def update_token_vectors(self, tokens, new_vectors):
        """Overwrite the vectors of ``tokens`` (known tokens only; name ``unknown_token`` to set row 0)."""
        assert self.idx_to_vec is not None, 'The property `idx_to_vec` ' \
            'has not been properly set.'
        one = not isinstance(tokens, list) or len(tokens) == 1
        is_array = isinstance(new_vectors, nd.NDArray)
        if one:
            assert is_array and new_vectors.ndim in (1, 2), '`new_vectors` must be a 1-D or 2-D ' \
                'NDArray if `tokens` is a singleton.'
            tokens = tokens if isinstance(tokens, list) else [tokens]
            if new_vectors.ndim == 1:
                new_vectors = new_vectors.reshape((1, -1))
        else:
            assert is_array and new_vectors.ndim == 2, '`new_vectors` must be a 2-D NDArray ' \
                'if `tokens` is a list of multiple strings.'
        assert tuple(new_vectors.shape) == (len(tokens), self.vec_len), (
            'The length of new_vectors must be equal to the number of tokens and the width ofnew_vectors '
            'must be equal to the dimension of embeddings of the glossary.')
        for tok in tokens:
            if tok not in self.token_to_idx:
                raise ValueError(
                    'Token %s is unknown. To update the embedding vector for an unknown token, please specify '
                    'it explicitly as the `unknown_token` %s in `tokens`. This is to avoid unintended updates.'
                    % (tok, self.idx_to_token[UNK]))
        rows = _to_mx([self.token_to_idx[t] for t in tokens], dtype='int64')
        self._table[rows] = new_vectors


_EMBEDDING_ROOT = os.path.join(base.data_dir(), 'embeddings')


class _Pretrained(_TokenEmbedding):
    """Shared constructor of the downloadable embeddings: check the name, find the file, load it."""

    def __init__(self, pretrained_file_name, embedding_root, init_unknown_vec, vocabulary, **kwargs):
        self._require_known_file(pretrained_file_name)
        super().__init__(**kwargs)
        self._read_vectors(self._locate(embedding_root, pretrained_file_name), ' ', init_unknown_vec)
        self._restrict_to(vocabulary)


@register
class GloVe(_Pretrained):
    """The GloVe word embedding (https://nlp.stanford.edu/projects/glove/), read from ``embedding_root``/glove."""

    # Public tables, named as in MXNet: the ``.txt`` files and the ``.zip`` archives, each -> SHA-1.
    pretrained_file_name_sha1 = {name: sha1 for name, (_, sha1) in GLOVE_FILES.items()}
    pretrained_archive_name_sha1 = dict(GLOVE_ARCHIVES)

    @classmethod
    def _archive_of(cls, file_name):
        return GLOVE_FILES[file_name][0]

    def __init__(self, pretrained_file_name='glove.840B.300d.txt', embedding_root=_EMBEDDING_ROOT,
                 init_unknown_vec=nd.zeros, vocabulary=None,
                 **kwargs):
        super().__init__(pretrained_file_name, embedding_root, init_unknown_vec, vocabulary, **kwargs)


def _fasttext_zip(file_name):
    """fastText ships ``X.vec`` alone in ``X.zip``."""
    return os.path.splitext(file_name)[0] + '.zip'


@register
class FastText(_Pretrained):
    """The fastText word embedding (https://fasttext.cc/), read from ``embedding_root``/fasttext."""

    pretrained_file_name_sha1 = {name: sha1 for name, (_, sha1) in FASTTEXT_FILES.items()}
    pretrained_archive_name_sha1 = {_fasttext_zip(name): a_sha1 for name, (a_sha1, _) in FASTTEXT_FILES.items()}

    @classmethod
    def _archive_of(cls, file_name):
        return _fasttext_zip(file_name)

    def __init__(self, pretrained_file_name='wiki.simple.vec', embedding_root=_EMBEDDING_ROOT,
                 init_unknown_vec=nd.zeros, vocabulary=None,
                 **kwargs):
        super().__init__(pretrained_file_name, embedding_root, init_unknown_vec, vocabulary, **kwargs)


class CustomEmbedding(_TokenEmbedding):
    """Vectors from a user file whose lines are ``token<elem_delim>v1<elem_delim>v2...``."""

    def __init__(self, pretrained_file_path, elem_delim=' ', encoding='utf8',
                 init_unknown_vec=nd.zeros, vocabulary=None,
                 **kwargs):
        super().__init__(**kwargs)
        self._read_vectors(pretrained_file_path, elem_delim, init_unknown_vec, encoding)
        self._restrict_to(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """``vocabulary``'s tokens with the concatenated vectors of one or several ``token_embeddings``."""

    def __init__(self, vocabulary, token_embeddings):
        assert isinstance(vocabulary, Vocabulary), \
            'The argument `vocabulary` must be an instance of mxnet.contrib.text.indexer.Vocabulary.'
        sources = token_embeddings if isinstance(token_embeddings, list) else [token_embeddings]
        assert all(isinstance(src, _TokenEmbedding) for src in sources), (
            'The argument `token_embeddings` must be an instance or a list of instances of '
            '`mxnet.contrib.text.embedding.TextEmbedding` whose embedding vectors will beloaded or '
            'concatenated-then-loaded to map to the indexed tokens.')
        self._adopt_vocabulary(vocabulary)
        self._concat_vectors(sources, self.idx_to_token)
