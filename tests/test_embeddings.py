"""Frozen text embeddings (:mod:`enkcvs.data.embeddings`): the packaged MiniLM's token states averaged over the
attention mask and L2-normalised, as computed directly with transformers text by text; and the content-addressed
cache, which encodes each distinct text once per checkpoint and length."""

import numpy as np
import pytest
import torch

from enkcvs.data import checkpoints, embeddings

TEXTS = [
    "Who wrote Hamlet ?",
    "Where is the Eiffel Tower ?",
    "How far is it from Denver to Aspen, by car or by train ?",
]


@pytest.fixture(autouse=True)
def empty_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("ENKCVS_CACHE_DIR", str(tmp_path / "cache"))


def counted(monkeypatch) -> list[list[str]]:
    """The texts of every call of :func:`embeddings.encode_texts`, which still encodes."""
    calls, encode = [], embeddings.encode_texts
    monkeypatch.setattr(
        embeddings, "encode_texts", lambda texts, **options: calls.append(list(texts)) or encode(texts, **options)
    )
    return calls


def test_an_embedding_is_the_checkpoint_s_token_states_mean_pooled_and_normalised():
    from transformers import AutoModel, AutoTokenizer

    folder = checkpoints.resolve_checkpoint(checkpoints.DEFAULT_CHECKPOINT)
    tokenizer, model = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).eval()
    with torch.no_grad():
        direct = [
            model(**tokenizer(sentence, return_tensors="pt")).last_hidden_state[0].mean(dim=0) for sentence in TEXTS
        ]  # one text a pass: no padding to mask
    expected = torch.nn.functional.normalize(torch.stack(direct), dim=1).numpy()
    found = embeddings.embed_texts(TEXTS, batch_size=2)  # a batch of two texts of unequal length: padded
    assert found.shape == (3, model.config.hidden_size) and found.dtype == np.float32
    np.testing.assert_allclose(found, expected, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(found, axis=1), 1.0, rtol=1e-6)


def test_a_second_call_encodes_nothing_and_a_new_text_alone(monkeypatch):
    calls = counted(monkeypatch)
    first = embeddings.embed_texts(TEXTS + TEXTS[:1])  # a repeated text is encoded once
    again = embeddings.embed_texts(TEXTS[::-1])
    assert calls == [TEXTS]
    np.testing.assert_array_equal(again, first[:3][::-1])
    np.testing.assert_array_equal(first[3], first[0])
    embeddings.embed_texts([*TEXTS, "What is a caldera ?"])
    assert calls == [TEXTS, ["What is a caldera ?"]]


def test_the_cache_is_keyed_by_the_tokens_kept(monkeypatch):
    calls = counted(monkeypatch)
    long, short = embeddings.embed_texts(TEXTS[2:]), embeddings.embed_texts(TEXTS[2:], max_tokens=4)
    assert calls == [TEXTS[2:], TEXTS[2:]] and not np.allclose(long, short)
