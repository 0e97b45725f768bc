"""``mx.contrib.text`` against MXNet 2.0 (fixtures from tools/make_contrib_text_fixtures.py)."""
import json
import pathlib
import shutil
import warnings
import zipfile

import numpy as onp
import pytest

import mxjax as mx
from mxjax.contrib import text

FIX = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "contrib_text"
REF = json.loads((FIX / "text.json").read_text(encoding="utf8"))
VECS = onp.load(FIX / "vectors.npz")
EMBED_A, EMBED_B = str(FIX / "embed_a.txt"), str(FIX / "embed_b.txt")


def counter():
    return text.utils.count_tokens_from_str(REF["text"], to_lower=True)


def as_pairs(c):
    return sorted([list(kv) for kv in c.items()])


def load(path, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the files' duplicate and header lines warn, as in MXNet
        return text.embedding.CustomEmbedding(path, **kwargs)


def test_count_tokens_from_str():
    star = REF["star_text"]
    assert as_pairs(counter()) == REF["counts"]["lower"]
    assert as_pairs(text.utils.count_tokens_from_str(REF["text"])) == REF["counts"]["cased"]
    assert as_pairs(text.utils.count_tokens_from_str(star, "\\*", "\\n", True)) == REF["counts"]["star"]
    start = text.utils.count_tokens_from_str(star, "\\*")
    updated = text.utils.count_tokens_from_str(star, "\\*", "\\n", False, counter_to_update=start)
    assert updated is start and as_pairs(updated) == REF["counts"]["star_updated"]


@pytest.mark.parametrize("name", sorted(REF["vocabs"]))
def test_vocabulary(name):
    ref = REF["vocabs"][name]
    v = text.vocab.Vocabulary(counter(), **ref["kwargs"])
    assert v.idx_to_token == ref["idx_to_token"] and len(v) == ref["len"]
    assert v.token_to_idx == {t: i for i, t in enumerate(ref["idx_to_token"])}
    assert v.to_indices(REF["query_tokens"]) == ref["to_indices"]
    assert v.to_indices("cat") == ref["to_index_single"]
    assert v.to_tokens(list(range(len(v)))[::-1]) == ref["to_tokens"]
    assert v.to_tokens(len(v) - 1) == ref["to_token_single"]
    assert v.unknown_token == ref["unknown_token"] and v.reserved_tokens == ref["reserved_tokens"]


def test_vocabulary_errors():
    with pytest.raises(ValueError, match="Token index 5"):
        text.vocab.Vocabulary().to_tokens(5)
    with pytest.raises(AssertionError, match="min_freq"):
        text.vocab.Vocabulary(min_freq=0)
    with pytest.raises(AssertionError, match="unknown_token"):
        text.vocab.Vocabulary(reserved_tokens=["<unk>"])
    with pytest.raises(AssertionError, match="duplicate"):
        text.vocab.Vocabulary(reserved_tokens=["a", "a"])


def check_embedding(emb, key, vec_key):
    ref = REF["embeddings"][key]
    assert emb.idx_to_token == ref["idx_to_token"] and emb.vec_len == ref["vec_len"]
    assert isinstance(emb.idx_to_vec, mx.np.ndarray)  # MXNet 2.0 runs in NumPy mode by default
    assert str(emb.idx_to_vec.dtype) == REF["types"]["idx_to_vec_dtype"]
    onp.testing.assert_allclose(emb.idx_to_vec.asnumpy(), VECS[vec_key], rtol=1e-6)


def test_custom_and_composite_embedding():
    emb_a = load(EMBED_A)
    emb_b = load(EMBED_B, elem_delim=",", init_unknown_vec=mx.nd.ones)
    vocab = text.vocab.Vocabulary(counter(), reserved_tokens=["<pad>"])
    emb_a_vocab = load(EMBED_A, vocabulary=vocab)
    composite = text.embedding.CompositeEmbedding(vocab, [emb_a, emb_b])
    check_embedding(emb_a, "a", "a_idx_to_vec")
    check_embedding(emb_b, "b", "b_idx_to_vec")
    check_embedding(emb_a_vocab, "a_vocab", "a_vocab_idx_to_vec")
    assert emb_a_vocab.reserved_tokens == REF["embeddings"]["a_vocab"]["reserved_tokens"]
    check_embedding(composite, "composite", "composite_idx_to_vec")
    q = REF["query_tokens"]
    onp.testing.assert_allclose(emb_a.get_vecs_by_tokens(q).asnumpy(), VECS["a_get_list"], rtol=1e-6)
    onp.testing.assert_allclose(emb_a.get_vecs_by_tokens(q, lower_case_backup=True).asnumpy(),
                                VECS["a_get_list_lower"], rtol=1e-6)
    single = emb_a.get_vecs_by_tokens("cat")
    assert list(single.shape) == REF["types"]["get_single_shape"]
    onp.testing.assert_allclose(single.asnumpy(), VECS["a_get_single"], rtol=1e-6)
    onp.testing.assert_allclose(composite.get_vecs_by_tokens(q).asnumpy(), VECS["composite_get_list"], rtol=1e-6)


def test_update_token_vectors():
    emb = load(EMBED_A)
    emb.update_token_vectors("cat", mx.np.array([4, 5, 6]))
    emb.update_token_vectors(["<unk>", "the"], mx.np.array([[1, 1, 1], [2, 2, 2]]))
    emb.update_token_vectors(["is"], mx.np.array([[3, 3, 3]]))
    onp.testing.assert_allclose(emb.idx_to_vec.asnumpy(), VECS["a_updated_idx_to_vec"], rtol=1e-6)
    with pytest.raises(AssertionError, match="length of new_vectors"):
        emb.update_token_vectors("cat", mx.np.array([1, 2]))
    with pytest.raises(AssertionError, match="2-D NDArray"):
        emb.update_token_vectors(["cat", "the"], mx.np.array([1, 2, 3]))
    with pytest.raises(ValueError, match="Token zebra is unknown"):
        emb.update_token_vectors("zebra", mx.np.array([1, 2, 3]))


def test_registry_names_and_errors():
    names = text.embedding.get_pretrained_file_names()
    assert {k: sorted(v) for k, v in names.items()} == REF["pretrained_names"]
    assert text.embedding.get_pretrained_file_names("glove") == names["glove"]
    with pytest.raises(KeyError, match="Cannot find `embedding_name` foo"):
        text.embedding.get_pretrained_file_names("foo")
    with pytest.raises(AssertionError, match="foo is not registered"):
        text.embedding.create("foo")
    with pytest.raises(KeyError, match="Cannot find pretrained file x.txt for token embedding glove"):
        text.embedding.create("glove", pretrained_file_name="x.txt")


def test_pretrained_file_missing_raises_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        text.embedding.GloVe("glove.6B.50d.txt", embedding_root=str(tmp_path))
    msg = str(info.value)
    assert "glove.6B.50d.txt" in msg and "glove.6B.zip" in msg and str(tmp_path / "glove") in msg
    with pytest.raises(FileNotFoundError, match="wiki.simple.vec"):
        text.embedding.create("fasttext", embedding_root=str(tmp_path))


def test_pretrained_file_present_is_loaded(tmp_path):
    (tmp_path / "glove").mkdir()
    shutil.copy(EMBED_A, tmp_path / "glove" / "glove.6B.50d.txt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        glove = text.embedding.create("GloVe", pretrained_file_name="glove.6B.50d.txt",
                                      embedding_root=str(tmp_path))
    check_embedding(glove, "a", "a_idx_to_vec")
    (tmp_path / "fasttext").mkdir()  # only MXNet's downloaded archive is there: it is unpacked
    with zipfile.ZipFile(tmp_path / "fasttext" / "wiki.simple.zip", "w") as zf:
        zf.write(EMBED_A, "wiki.simple.vec")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = text.embedding.FastText(embedding_root=str(tmp_path))
    check_embedding(fast, "a", "a_idx_to_vec")
