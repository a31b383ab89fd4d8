"""Every registered model builds, runs forward and backward with the right output shape, and the registry rejects
unknown names and options; pretrained models refuse to fall back silently to random weights when offline."""

import copy
import urllib.error

import numpy as np
import pytest
import torch
from torch import nn

from enkcvs.training.batches import epoch_draws, memory_batches, resident, token_lengths
from enkcvs.training.evaluate import predict_proba
from enkcvs.training.models import MODELS, BasicBlock, create_model, model_options
from enkcvs.training.recipe import Recipe

# name -> (input_shape, options): small inputs each model accepts, no downloads.
CASES = {
    "cnn4": ((1, 28, 28), {}),
    "mlp": ((1, 8, 8), {}),
    "cnn8": ((3, 32, 32), {}),
    "coteaching_cnn9": ((1, 28, 28), {}),
    "resnet44": ((3, 32, 32), {}),
    "resnet50": ((3, 64, 64), {"pretrained": False}),
    "inception_resnet_v2": ((3, 75, 75), {"pretrained": False}),
    "torchvision_backbone": ((3, 32, 32), {"architecture": "mobilenet_v3_small", "pretrained": False}),
}


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_every_registered_model_is_tested():
    assert set(MODELS) == set(CASES) | {"text_classifier"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_image_model_forward_backward(name):
    input_shape, options = CASES[name]
    torch.manual_seed(0)
    # As train.py uses them: channels_last model and inputs.
    model = create_model(name, input_shape=input_shape, num_classes=5, **options).to(memory_format=torch.channels_last)
    x = torch.randn(2, *input_shape).contiguous(memory_format=torch.channels_last)
    logits = model(x)
    assert logits.shape == (2, 5)
    logits.logsumexp(dim=1).sum().backward()
    assert all(p.grad is not None for p in model.parameters())


@pytest.mark.parametrize("name", ["cnn4", "mlp", "cnn8", "resnet44"])
def test_in_place_relus_change_no_gradient_bit(name, monkeypatch):
    """The models' ReLUs work in place (a speed option that claims to be exact): the loss and every gradient equal,
    bit for bit, those of the same model with out-of-place ReLUs, in fp32 and under bf16 autocast."""
    input_shape, options = CASES[name]
    torch.manual_seed(0)
    model = create_model(name, input_shape=input_shape, num_classes=5, **options).to(memory_format=torch.channels_last)
    reference = copy.deepcopy(model)
    x = torch.randn(8, *input_shape).contiguous(memory_format=torch.channels_last)

    def loss_and_gradients(net, bf16):
        net.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = net(x).float().logsumexp(dim=1).sum()
        loss.backward()
        return [loss, *(parameter.grad for parameter in net.parameters())]

    fast = {bf16: loss_and_gradients(model, bf16) for bf16 in (False, True)}
    assert any(isinstance(module, nn.ReLU) and module.inplace for module in model.modules())
    for module in reference.modules():
        if isinstance(module, nn.ReLU):
            module.inplace = False
    monkeypatch.setattr(BasicBlock, "forward", lambda self, x: torch.relu(self.residual(x) + self.shortcut(x)))
    for bf16 in (False, True):
        for got, expected in zip(fast[bf16], loss_and_gradients(reference, bf16), strict=True):
            assert torch.equal(got, expected)


@pytest.mark.parametrize("name", ["cnn4", "cnn8"])
def test_pooling_before_relu_changes_no_bit(name):
    """The conv blocks max-pool before their ReLU (a speed option that claims to be exact): parameters, outputs, loss
    and every gradient equal, bit for bit, those of the paper's order (ReLU, then pool), in fp32 and under bf16
    autocast; the two orders differ only in where the parameter-free layers sit."""
    input_shape, options = CASES[name]
    torch.manual_seed(0)
    model = create_model(name, input_shape=input_shape, num_classes=5, **options).to(memory_format=torch.channels_last)
    layers = list(copy.deepcopy(model))
    swapped = [i for i in range(len(layers) - 1) if isinstance(layers[i], nn.MaxPool2d)]
    assert swapped and all(isinstance(layers[i + 1], nn.ReLU) for i in swapped)
    for i in swapped:
        layers[i], layers[i + 1] = layers[i + 1], layers[i]
    reference = nn.Sequential(*layers)
    assert list(reference.state_dict()) == list(model.state_dict())
    x = torch.randn(16, *input_shape).contiguous(memory_format=torch.channels_last)

    def outputs_and_gradients(net, bf16):
        net.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits = net(x).float()
        logits.logsumexp(dim=1).sum().backward()
        return [logits, *(parameter.grad for parameter in net.parameters())]

    for bf16 in (False, True):
        fast, paper = outputs_and_gradients(model, bf16), outputs_and_gradients(reference, bf16)
        for got, expected in zip(fast, paper, strict=True):
            assert torch.equal(got, expected)


def test_text_classifier_forward_backward():
    torch.manual_seed(0)
    model = create_model("text_classifier", input_shape=(2, 7), num_classes=6).to(memory_format=torch.channels_last)
    ids = torch.randint(1000, 2000, (3, 7))
    mask = torch.tensor([[1] * 7, [1] * 5 + [0] * 2, [1] * 3 + [0] * 4])
    logits = model(torch.stack([ids * mask, mask], dim=1))  # (B, 2, L) int64
    assert logits.shape == (3, 6)
    logits.sum().backward()


def _padded_texts(lengths, *, width):
    """Token ids (N, 2, width) of texts of ``lengths`` tokens, padded on the right (the dataset's longest is longer)."""
    mask = (torch.arange(width) < torch.tensor(lengths)[:, None]).long()
    return torch.stack([torch.randint(1000, 2000, (len(lengths), width)) * mask, mask], dim=1)


def test_text_predictions_cut_each_batch_to_its_longest_text_and_equal_the_uncut_model():
    torch.manual_seed(0)
    model = create_model("text_classifier", input_shape=(2, 13), num_classes=6).eval()
    tokens = _padded_texts([4, 2, 1, 3, 2], width=13)
    widths = []
    model.register_forward_pre_hook(lambda module, args: widths.append(args[0].shape[-1]))
    predicted = predict_proba(model, tokens.numpy(), device=torch.device("cpu"), batch_size=2)
    assert widths == [4, 3, 2]  # each batch's longest text, not the dataset's 13 tokens
    with torch.no_grad():  # transformers' own mask from the 2-D one, and its path without a mask where none pads
        uncut = model.model(input_ids=tokens[:, 0], attention_mask=tokens[:, 1]).logits.softmax(dim=1)
        unpadded = model.model(input_ids=tokens[:1, 0, :4]).logits
        torch.testing.assert_close(model(tokens[:1, :, :4]), unpadded)
    np.testing.assert_allclose(predicted, uncut.numpy(), atol=1e-6)


def test_training_batches_of_texts_are_cut_to_their_longest_text_known_on_the_host():
    tokens = _padded_texts([5, 1, 2, 7, 3, 2, 4], width=11).numpy()
    recipe = Recipe(model="text_classifier", optimizer="adam", lr=1e-4, epochs=1, batch_size=3, mixup_alpha=None)
    draws = epoch_draws(
        7,
        recipe=recipe,
        generator=torch.Generator().manual_seed(0),
        rng=np.random.default_rng(0),
        device=torch.device("cpu"),
    )
    batches = [
        xb
        for xb, _ in memory_batches(
            resident(tokens, torch.device("cpu")),
            torch.as_tensor(np.eye(2, dtype=np.float32)[np.arange(7) % 2]),
            draws=draws,
            lengths=token_lengths(tokens),
        )
    ]
    assert [len(xb) for xb in batches] == [3, 3]  # the last batch of one text is skipped (batch_sizes)
    for xb in batches:
        assert xb.shape[-1] == int(xb[:, 1].sum(dim=1).max()) < 11


def test_torchvision_backbone_replaces_the_last_linear_layer_and_rejects_unknown_names():
    model = create_model("torchvision_backbone", input_shape=(3, 32, 32), num_classes=7, pretrained=False)
    assert model.fc.out_features == 7  # resnet18's head
    with pytest.raises(ValueError, match="unknown torchvision architecture 'resnet9000'"):
        create_model("torchvision_backbone", input_shape=(3, 32, 32), num_classes=7, architecture="resnet9000")


def test_resnet44_has_44_weighted_layers():
    model = create_model("resnet44", input_shape=(3, 32, 32), num_classes=100)
    convs = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
    projections = [m for m in convs if m.kernel_size == (1, 1)]
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    assert len(convs) - len(projections) + len(linears) == 6 * 7 + 2
    assert len(projections) == 2  # option-B shortcuts at the starts of stages 2 and 3
    assert 0.65e6 < sum(p.numel() for p in model.parameters()) < 0.68e6  # He et al. 2016: 0.66M


def test_cifar_resnet_depth_must_be_6n_plus_2():
    from enkcvs.training.models import cifar_resnet

    with pytest.raises(ValueError, match="6n \\+ 2"):
        cifar_resnet(depth=45, input_shape=(3, 32, 32), num_classes=10)


def test_unknown_model_name_is_rejected():
    with pytest.raises(KeyError, match="unknown model 'resnet45'.*registered models.*resnet44"):
        create_model("resnet45", input_shape=(3, 32, 32), num_classes=10)


def test_unknown_option_is_rejected():
    with pytest.raises(TypeError, match="'cnn4' takes no option.*'pretrained'.*accepted options: none"):
        create_model("cnn4", input_shape=(1, 28, 28), num_classes=10, pretrained=False)
    with pytest.raises(TypeError, match="'pretraind'.*accepted options: {'pretrained': True}"):
        create_model("resnet50", input_shape=(3, 64, 64), num_classes=10, pretraind=False)
    assert model_options("text_classifier") == {"checkpoint": "all-MiniLM-L6-v2", "local_files_only": True}


def _refuse(*args, **kwargs):
    raise urllib.error.URLError("no network in this test")


@pytest.fixture
def no_downloads(monkeypatch, tmp_path):
    """Empty caches, and every download function of torch, torchvision and timm failing as offline."""
    import timm.models._builder
    import torchvision.models._api

    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setattr(torch.hub, "load_state_dict_from_url", _refuse)
    monkeypatch.setattr(torchvision.models._api, "load_state_dict_from_url", _refuse)
    monkeypatch.setattr(timm.models._builder, "load_state_dict_from_url", _refuse)
    monkeypatch.setattr(timm.models._builder, "load_state_dict_from_hf", _refuse)
    return tmp_path


def test_resnet50_download_failure_explains_the_fix(no_downloads):
    with pytest.raises(RuntimeError) as failure:
        create_model("resnet50", input_shape=(3, 64, 64), num_classes=10)
    message = str(failure.value)
    assert "resnet50" in message and "IMAGENET1K_V1" in message
    assert str(no_downloads / "torch" / "hub" / "checkpoints") in message
    assert "recipe.model_options.pretrained: false" in message
    assert isinstance(failure.value.__cause__, urllib.error.URLError)


def test_inception_resnet_v2_download_failure_explains_the_fix(no_downloads):
    with pytest.raises(RuntimeError) as failure:
        create_model("inception_resnet_v2", input_shape=(3, 299, 299), num_classes=50)
    message = str(failure.value)
    assert "inception_resnet_v2.tf_in1k" in message and "Hugging Face cache" in message
    assert "recipe.model_options.pretrained: false" in message
    assert isinstance(failure.value.__cause__, urllib.error.URLError)


def test_text_classifier_missing_checkpoint_explains_the_fix():
    with pytest.raises(RuntimeError, match="checkpoint 'no-such-org/no-such-model'.*local_files_only"):
        create_model("text_classifier", input_shape=(2, 8), num_classes=6, checkpoint="no-such-org/no-such-model")


def test_coteachings_network_refuses_images_too_small_for_its_unpadded_convolutions():
    create_model("coteaching_cnn9", input_shape=(3, 32, 32), num_classes=10)
    with pytest.raises(ValueError, match="at least 28 x 28, got 8 x 8: pick another recipe.model"):
        create_model("coteaching_cnn9", input_shape=(1, 8, 8), num_classes=10)
