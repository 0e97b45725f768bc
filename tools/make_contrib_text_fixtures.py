"""Write tests/fixtures/contrib_text/: MXNet 2.0's ``mx.contrib.text`` results on a fixed text.

Run inside a reference MXNet 2.0 virtualenv (``python tools/make_contrib_text_fixtures.py``).  Writes the
tiny pre-trained vector files ``embed_a.txt`` (has an ``<unk>`` line, a duplicate and a 1-D header-like
line) and ``embed_b.txt``, ``text.json`` (token counts, Vocabulary indexing, names) and ``vectors.npz``
(CustomEmbedding / CompositeEmbedding ``idx_to_vec`` and look-ups).
"""
from __future__ import annotations

import json
import pathlib
import warnings

import mxnet as mx
import numpy as np
from mxnet.contrib import text

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "contrib_text"

TEXT = " Life is great ! \n life is good . \n the cat is on the mat \n A cat , a hat . the end \n"
STAR_TEXT = "*Life*is*great*!*\n*life*is*good*.*\n"
EMBED_A = ("header 3\n<unk> 0.5 0.5 0.5\nthe 0.1 0.2 0.3\ncat 1 2 3\nis -1 -2 -3\n"
           "cat 9 9 9\nlife 0.25 -0.5 4\n. 7 8 9\n")
EMBED_B = "the,1,0\nhat,0,1\nmat,2,2\ncat,3,-3\n"

# name -> Vocabulary keyword arguments
VOCABS = {
    "default": {},
    "most_freq_3": {"most_freq_count": 3},
    "min_freq_2": {"min_freq": 2},
    "reserved": {"reserved_tokens": ["<pad>", "<bos>"]},
    "reserved_most_freq_2": {"reserved_tokens": ["<pad>", "cat"], "most_freq_count": 2},
    "unk_is_token": {"unknown_token": "the"},
    "min_freq_2_most_freq_1": {"min_freq": 2, "most_freq_count": 1, "unknown_token": "<UNK>"},
    "most_freq_0": {"most_freq_count": 0},
}
QUERY_TOKENS = ["the", "cat", "zebra", "Life", "life", "<unk>", "."]


def counter_json(counter):
    return sorted([list(kv) for kv in counter.items()])


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "embed_a.txt").write_text(EMBED_A, encoding="utf8")
    (OUT / "embed_b.txt").write_text(EMBED_B, encoding="utf8")

    counter = text.utils.count_tokens_from_str(TEXT, to_lower=True)
    updated = text.utils.count_tokens_from_str(STAR_TEXT, "\\*", "\\n", False,
                                               counter_to_update=text.utils.count_tokens_from_str(STAR_TEXT, "\\*"))
    record = {
        "text": TEXT, "star_text": STAR_TEXT, "query_tokens": QUERY_TOKENS,
        "counts": {
            "lower": counter_json(counter),
            "cased": counter_json(text.utils.count_tokens_from_str(TEXT)),
            "star": counter_json(text.utils.count_tokens_from_str(STAR_TEXT, "\\*", "\\n", True)),
            "star_updated": counter_json(updated),
        },
        "vocabs": {},
        "pretrained_names": {k: sorted(v) for k, v in text.embedding.get_pretrained_file_names().items()},
    }
    for name, kwargs in VOCABS.items():
        v = text.vocab.Vocabulary(counter, **kwargs)
        record["vocabs"][name] = {
            "kwargs": kwargs, "idx_to_token": v.idx_to_token, "len": len(v),
            "to_indices": v.to_indices(QUERY_TOKENS), "to_index_single": v.to_indices("cat"),
            "to_tokens": v.to_tokens(list(range(len(v)))[::-1]), "to_token_single": v.to_tokens(len(v) - 1),
            "unknown_token": v.unknown_token, "reserved_tokens": v.reserved_tokens,
        }

    arrays = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        emb_a = text.embedding.CustomEmbedding(str(OUT / "embed_a.txt"))
        emb_b = text.embedding.CustomEmbedding(str(OUT / "embed_b.txt"), elem_delim=",",
                                               init_unknown_vec=mx.nd.ones)
    vocab = text.vocab.Vocabulary(counter, reserved_tokens=["<pad>"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        emb_a_vocab = text.embedding.CustomEmbedding(str(OUT / "embed_a.txt"), vocabulary=vocab)
    composite = text.embedding.CompositeEmbedding(vocab, [emb_a, emb_b])
    record["embeddings"] = {
        "a": {"idx_to_token": emb_a.idx_to_token, "vec_len": emb_a.vec_len},
        "b": {"idx_to_token": emb_b.idx_to_token, "vec_len": emb_b.vec_len},
        "a_vocab": {"idx_to_token": emb_a_vocab.idx_to_token, "vec_len": emb_a_vocab.vec_len,
                    "reserved_tokens": emb_a_vocab.reserved_tokens},
        "composite": {"idx_to_token": composite.idx_to_token, "vec_len": composite.vec_len},
    }
    arrays["a_idx_to_vec"] = emb_a.idx_to_vec.asnumpy()
    arrays["b_idx_to_vec"] = emb_b.idx_to_vec.asnumpy()
    arrays["a_vocab_idx_to_vec"] = emb_a_vocab.idx_to_vec.asnumpy()
    arrays["composite_idx_to_vec"] = composite.idx_to_vec.asnumpy()
    arrays["a_get_list"] = emb_a.get_vecs_by_tokens(QUERY_TOKENS).asnumpy()
    arrays["a_get_list_lower"] = emb_a.get_vecs_by_tokens(QUERY_TOKENS, lower_case_backup=True).asnumpy()
    arrays["a_get_single"] = emb_a.get_vecs_by_tokens("cat").asnumpy()
    arrays["composite_get_list"] = composite.get_vecs_by_tokens(QUERY_TOKENS).asnumpy()
    # MXNet 2.0 runs in NumPy mode by default, so idx_to_vec is an mx.np.ndarray and updates are too
    emb_a.update_token_vectors("cat", mx.np.array([4, 5, 6]))
    emb_a.update_token_vectors(["<unk>", "the"], mx.np.array([[1, 1, 1], [2, 2, 2]]))
    emb_a.update_token_vectors(["is"], mx.np.array([[3, 3, 3]]))
    arrays["a_updated_idx_to_vec"] = emb_a.idx_to_vec.asnumpy()
    record["types"] = {"idx_to_vec": type(composite.idx_to_vec).__name__,
                       "idx_to_vec_dtype": str(composite.idx_to_vec.dtype),
                       "get_single_shape": list(emb_a.get_vecs_by_tokens("cat").shape)}

    (OUT / "text.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf8")
    np.savez_compressed(OUT / "vectors.npz", **arrays)


if __name__ == "__main__":
    main()
