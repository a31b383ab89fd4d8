"""``enkcvs find-issues --data photos/ --encoder ARCH``: images encoded once by a frozen torchvision backbone
(:mod:`enkcvs.data.image_embeddings`), cached by content, the fold models light heads on the embeddings; an encoder
whose weights are not in torchvision's cache refused before any work, naming the command that fetches them. No
weights are fetched here: the plumbing runs on randomly initialised backbones."""

import numpy as np
import pytest
from test_find_issues_from_files import COLUMNS, read, run, write_images

from enkcvs.data import image_embeddings
from enkcvs.io import CACHE_VARIABLE
from enkcvs.labelissues.example import write_example

FAST = ["--folds", "2", "--repetitions", "2", "--epochs", "2"]
SMALL = "mobilenet_v3_small"  # the smallest torchvision classifier: quick on a CPU


@pytest.fixture
def photos(tmp_path, monkeypatch):
    """A folder of class folders, torchvision's cache and the library's cache both empty, in ``tmp_path``."""
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "cache"))
    write_images(tmp_path / "photos", seed=3)
    return tmp_path / "photos"


@pytest.fixture
def random_weights(monkeypatch):
    """Backbones randomly initialised (seeded), as if their weights were cached: the plumbing only."""
    monkeypatch.setattr(image_embeddings, "weights_problem", lambda encoder: None)
    load = image_embeddings.load_encoder
    monkeypatch.setattr(image_embeddings, "load_encoder", lambda encoder, **_: load(encoder, pretrained=False))


def test_an_encoder_without_cached_weights_is_refused_before_any_work_naming_the_fetch(photos, capsys, monkeypatch):
    def never(*_, **__):
        raise AssertionError("no image may be read before the weights are checked")

    monkeypatch.setattr(image_embeddings, "embed_images", never)
    out = photos.parent / "issues.csv"
    assert run("--data", photos, "--encoder", SMALL, *FAST, "--out", out) == 2
    err = capsys.readouterr().err
    assert f"--encoder {SMALL}: its ImageNet weights are not in torchvision's cache" in err
    assert f"get_model_weights('{SMALL}').DEFAULT.get_state_dict(progress=True)" in err
    assert not out.exists() and not out.with_name("issues.provenance.json").exists()


def test_an_unknown_encoder_is_refused_with_the_names_to_choose_from(photos, capsys):
    assert run("--data", photos, "--encoder", "resnet_9000", *FAST, "--out", photos.parent / "issues.csv") == 2
    assert "torchvision has no classification model of that name. Fix: pass one of" in capsys.readouterr().err


def test_an_encoder_for_a_table_is_refused(tmp_path, capsys):
    write_example(out=tmp_path / "animals.csv", samples=40, seed=1)
    assert (
        run(
            "--data",
            tmp_path / "animals.csv",
            "--label-column",
            "animal",
            "--encoder",
            SMALL,
            *FAST,
            "--out",
            tmp_path / "issues.csv",
        )
        == 2
    )
    assert f"--encoder {SMALL} encodes images, and --data {tmp_path / 'animals.csv'} is read as table" in (
        capsys.readouterr().err
    )


def test_images_are_encoded_once_and_ranked_by_heads_on_their_embeddings(photos, random_weights, monkeypatch, capsys):
    import enkcvs.labelissues.owndata

    monkeypatch.setattr(enkcvs.labelissues.owndata, "ENCODED_AT_ONCE", 10)
    out = photos.parent / "issues.csv"
    assert run("--data", photos, "--encoder", SMALL, *FAST, "--out", out) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if line.startswith("encoding images: ")]
    assert said == ["encoding images: 10/18", "encoding images: 18/18"]  # progress as they are encoded
    frame, record = read(out)
    assert len(frame) == 18 and set(COLUMNS) <= set(frame.columns) and frame["path"].str.endswith(".png").all()
    assert record["recipe"]["model"] == "mlp" and record["encoder"]["torchvision"] == SMALL
    assert record["encoder"]["weights"] == str(image_embeddings.default_weights(SMALL))

    def never(*_, **__):
        raise AssertionError("the cache holds every image: nothing is encoded again")

    monkeypatch.setattr(image_embeddings, "encode_images", never)
    again = photos.parent / "again.csv"
    assert run("--data", photos, "--encoder", SMALL, *FAST, "--out", again) == 0
    assert read(again)[0].equals(frame)  # the same embeddings and seed: the same ranking


def test_an_embedding_is_the_backbones_features_before_its_classifier(photos, random_weights):
    import torch
    import torchvision

    paths = ["cat/0.png", "owl/5.png"]
    vectors = image_embeddings.embed_images(paths, root=photos, encoder="resnet18")
    assert vectors.shape == (2, 512) and vectors.dtype == np.float32
    torch.manual_seed(0)  # load_encoder's seed: the same random backbone
    model = torchvision.models.resnet18().eval()
    preset = torchvision.models.ResNet18_Weights.DEFAULT.transforms()
    from PIL import Image

    with torch.inference_mode():
        images = torch.stack([preset(Image.open(photos / path).convert("RGB")) for path in paths])
        features = torch.flatten(
            model.avgpool(
                model.layer4(
                    model.layer3(model.layer2(model.layer1(model.maxpool(model.relu(model.bn1(model.conv1(images)))))))
                )
            ),
            1,
        )
    np.testing.assert_allclose(vectors, features.numpy(), rtol=1e-4, atol=1e-5)
