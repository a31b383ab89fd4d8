"""Model registry keyed by name (``create_model`` rejects unknown names and options).

torchvision, timm and transformers are imported inside the builders that need them: importing this module costs
only torch.
"""

import inspect
from collections.abc import Callable

import torch
from torch import nn

from enkcvs.data import checkpoints

#: Model builders by name: builder(*, input_shape=(C, H, W), num_classes=Q, **options) -> nn.Module.
MODELS: dict[str, Callable[..., nn.Module]] = {}


def register_model(builder: Callable[..., nn.Module]) -> Callable[..., nn.Module]:
    """Add ``builder`` to :data:`MODELS` under its function name."""
    MODELS[builder.__name__] = builder
    return builder


def model_options(name: str) -> dict[str, object]:
    """The options the builder of model ``name`` accepts, with their defaults."""
    parameters = inspect.signature(MODELS[name]).parameters.values()
    return {p.name: p.default for p in parameters if p.name not in ("input_shape", "num_classes")}


def create_model(name: str, *, input_shape: tuple[int, ...], num_classes: int, **options) -> nn.Module:
    """Build a registered model for inputs of ``input_shape`` ((C, H, W) for images) and Q = ``num_classes``.

    Raises
    ------
    KeyError : unknown ``name``.
    TypeError : an option the builder does not accept (the message lists those it does).
    """
    if name not in MODELS:
        raise KeyError(f"unknown model {name!r}; registered models: {sorted(MODELS)}")
    unknown = sorted(set(options) - set(model_options(name)))
    if unknown:
        raise TypeError(
            f"model {name!r} takes no option(s) {unknown}; accepted options: {model_options(name) or 'none'}"
        )
    return MODELS[name](input_shape=input_shape, num_classes=num_classes, **options)


# Every ReLU here follows a batch norm, a max-pool or a sum and works in place: their backwards need their inputs,
# not their outputs, so nothing autograd saved is overwritten, and one pass over the activations and one allocation
# are saved per layer (fp32 training of cnn4 1.11x faster, cnn8 1.07x, gradients bit for bit the same:
# benchmarks/README.md, tests).


def _conv_block(in_channels: int, out_channels: int, *, pool: bool = False) -> list[nn.Module]:
    """3x3 same conv, batch norm, ReLU; with ``pool``, a 2x2 max-pool too, taken before the ReLU: ReLU is monotone,
    so max-pooling commutes with it (same outputs, and the same gradients: the window's maximum gets the gradient
    in both orders, zero when it is not positive), and the ReLU runs on a quarter of the values."""
    pooling = [nn.MaxPool2d(2)] if pool else []
    return [
        nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False),
        nn.BatchNorm2d(out_channels),
        *pooling,
        nn.ReLU(inplace=True),
    ]


def _classifier_head(in_features: int, hidden: int, num_classes: int) -> list[nn.Module]:
    """Flatten, one hidden fully connected layer (BN + ReLU), then the Q-way output layer."""
    return [
        nn.Flatten(),
        nn.Linear(in_features, hidden, bias=False),
        nn.BatchNorm1d(hidden),
        nn.ReLU(inplace=True),
        nn.Linear(hidden, num_classes),
    ]


@register_model
def cnn4(*, input_shape: tuple[int, int, int], num_classes: int) -> nn.Module:
    """The paper's MNIST network: conv32-pool-conv64-pool-FC128-FC (3x3 same convs, BN + ReLU)."""
    channels, height, width = input_shape
    flat = 64 * (height // 4) * (width // 4)
    return nn.Sequential(
        *_conv_block(channels, 32, pool=True),
        *_conv_block(32, 64, pool=True),
        *_classifier_head(flat, 128, num_classes),
    )


@register_model
def mlp(*, input_shape: tuple[int, int, int], num_classes: int) -> nn.Module:
    """A one-hidden-layer perceptron (256 units, BN + ReLU): a fast baseline for small images or tables."""
    return nn.Sequential(*_classifier_head(int(torch.tensor(input_shape).prod()), 256, num_classes))


@register_model
def cnn8(*, input_shape: tuple[int, int, int], num_classes: int) -> nn.Module:
    """The paper's CIFAR-10 network: [conv64 x2]-pool-[conv128 x2]-pool-[conv196 x2]-pool-FC256-FC (3x3 same
    convs, BN + ReLU)."""
    channels, height, width = input_shape
    flat = 196 * (height // 8) * (width // 8)
    return nn.Sequential(
        *_conv_block(channels, 64),
        *_conv_block(64, 64, pool=True),
        *_conv_block(64, 128),
        *_conv_block(128, 128, pool=True),
        *_conv_block(128, 196),
        *_conv_block(196, 196, pool=True),
        *_classifier_head(flat, 256, num_classes),
    )


def _leaky_conv(in_channels: int, out_channels: int, *, padding: int) -> list[nn.Module]:
    """3x3 conv (with bias) -> BN -> leaky ReLU (slope 0.01), the layer of :func:`coteaching_cnn9`."""
    return [nn.Conv2d(in_channels, out_channels, 3, padding=padding), nn.BatchNorm2d(out_channels), nn.LeakyReLU(0.01)]


@register_model
def coteaching_cnn9(*, input_shape: tuple[int, int, int], num_classes: int) -> nn.Module:
    """Co-teaching's network (Han et al. 2018, bhanML/Co-teaching ``model.py``), which their code trains on every
    dataset, MNIST included: [conv128 x3]-pool-dropout-[conv256 x3]-pool-dropout-conv512-conv256-conv128 (the last
    three unpadded)-global average pool-FC, 3x3 convs with BN and leaky ReLU, channel dropout 0.25. Their dropout is
    the functional one, left on when they evaluate; this one is off in eval mode, as PyTorch's modules are.

    Needs inputs of at least 28 x 28 (three unpadded convs after two pools)."""
    channels, height, width = input_shape
    if min(height, width) < 28:
        raise ValueError(
            f"coteaching_cnn9 needs images of at least 28 x 28, got {height} x {width}: pick another "
            "recipe.model for this dataset"
        )
    return nn.Sequential(
        *_leaky_conv(channels, 128, padding=1),
        *_leaky_conv(128, 128, padding=1),
        *_leaky_conv(128, 128, padding=1),
        nn.MaxPool2d(2),
        nn.Dropout2d(0.25),
        *_leaky_conv(128, 256, padding=1),
        *_leaky_conv(256, 256, padding=1),
        *_leaky_conv(256, 256, padding=1),
        nn.MaxPool2d(2),
        nn.Dropout2d(0.25),
        *_leaky_conv(256, 512, padding=0),
        *_leaky_conv(512, 256, padding=0),
        *_leaky_conv(256, 128, padding=0),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(128, num_classes),
    )


class BasicBlock(nn.Module):
    """ResNet basic block: two 3x3 conv-BN layers plus a shortcut, ReLU after the sum (He et al. 2016)."""

    def __init__(self, in_channels: int, out_channels: int, *, stride: int):
        super().__init__()
        self.residual = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
        )
        # Option B: a 1x1 projection only where the shape changes; identity elsewhere.
        self.shortcut = (
            nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False), nn.BatchNorm2d(out_channels)
            )
            if stride != 1 or in_channels != out_channels
            else nn.Identity()
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, C_in, H, W) -> (B, C_out, H / stride, W / stride)."""
        return (self.residual(x) + self.shortcut(x)).relu_()


def cifar_resnet(*, depth: int, input_shape: tuple[int, int, int], num_classes: int) -> nn.Module:
    """He et al. 2016's CIFAR ResNet (Section 4.2) of ``depth`` = 6n + 2 weighted layers: a 3x3 conv16, three stages
    of n basic blocks with 16, 32 and 64 channels (stages 2 and 3 start with stride 2), global average pooling and
    an FC layer. Shortcuts that change shape are 1x1 conv projections (the paper's option B; its CIFAR networks use
    option A, zero-padded identities), which adds two 1x1 convs not counted in ``depth``. Convs get Kaiming-normal
    initialisation (He et al. 2015), as in the paper."""
    if depth < 8 or (depth - 2) % 6:
        raise ValueError(f"a CIFAR ResNet has depth 6n + 2 (20, 32, 44, 56, 110, ...), got {depth}")
    blocks_per_stage = (depth - 2) // 6
    layers: list[nn.Module] = [
        nn.Conv2d(input_shape[0], 16, 3, padding=1, bias=False),
        nn.BatchNorm2d(16),
        nn.ReLU(inplace=True),
    ]
    in_channels = 16
    for stage, channels in enumerate((16, 32, 64)):
        for block in range(blocks_per_stage):
            layers.append(BasicBlock(in_channels, channels, stride=2 if stage > 0 and block == 0 else 1))
            in_channels = channels
    model = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, num_classes))
    for module in model.modules():
        if isinstance(module, nn.Conv2d):
            nn.init.kaiming_normal_(module.weight, nonlinearity="relu")
    return model


@register_model
def resnet44(*, input_shape: tuple[int, int, int], num_classes: int) -> nn.Module:
    """The paper's CIFAR-100 network: :func:`cifar_resnet` of depth 44 (n = 7; 1x1 projection shortcuts)."""
    return cifar_resnet(depth=44, input_shape=input_shape, num_classes=num_classes)


def _pretrained_failure(model: str, weights: str, cache: str) -> str:
    return (
        f"cannot fetch the pretrained weights {weights} of {model} (offline?). Fix: run once with network access so "
        f"they are cached in {cache} (or copy them there from a machine that has them), or set "
        f"recipe.model_options.pretrained: false to train {model} from random initialisation knowingly"
    )


def _require_rgb(model: str, input_shape: tuple[int, ...]) -> None:
    if input_shape[0] != 3:
        raise ValueError(f"{model} takes 3-channel images, got input_shape {tuple(input_shape)}")


def _torchvision_classifier(architecture: str, *, weights, num_classes: int) -> nn.Module:
    """torchvision's ``architecture`` with ``weights`` (a weights enum member; None: random initialisation), its last
    linear layer replaced by a fresh Q-class one (``fc`` of a ResNet, ``classifier[-1]`` of a MobileNet, ...)."""
    from torchvision.models import get_model

    model = get_model(architecture, weights=None)
    if weights is not None:
        try:
            model.load_state_dict(weights.get_state_dict(progress=False))
        except Exception as exc:  # any download or cache failure: say how to fix it rather than train from scratch
            cache = f"{torch.hub.get_dir()}/checkpoints"
            raise RuntimeError(_pretrained_failure(architecture, f"{weights} ({weights.url})", cache)) from exc
    name = [name for name, module in model.named_modules() if isinstance(module, nn.Linear)][-1]
    parent, _, attribute = name.rpartition(".")
    head = model.get_submodule(name)
    setattr(model.get_submodule(parent), attribute, nn.Linear(head.in_features, num_classes))
    return model


@register_model
def resnet50(*, input_shape: tuple[int, int, int], num_classes: int, pretrained: bool = True) -> nn.Module:
    """torchvision's ResNet-50 (the paper's Clothing-1M network) with ImageNet weights (IMAGENET1K_V1) unless
    ``pretrained`` is False, its final FC replaced by a fresh Q-class layer.

    Raises
    ------
    RuntimeError : the ImageNet weights cannot be fetched (never falls back to random initialisation silently).
    """
    from torchvision.models import ResNet50_Weights

    _require_rgb("resnet50", input_shape)
    weights = ResNet50_Weights.IMAGENET1K_V1 if pretrained else None
    return _torchvision_classifier("resnet50", weights=weights, num_classes=num_classes)


@register_model
def torchvision_backbone(
    *, input_shape: tuple[int, int, int], num_classes: int, architecture: str = "resnet18", pretrained: bool = True
) -> nn.Module:
    """Any torchvision classification model by name (``torchvision.models.list_models()``, e.g. "resnet18",
    "efficientnet_b0", "convnext_tiny") with its default ImageNet weights unless ``pretrained`` is False, the last
    linear layer replaced by a fresh Q-class one: for a user's own image folder.

    Raises
    ------
    ValueError : an unknown architecture. RuntimeError : the weights cannot be fetched.
    """
    import torchvision.models

    _require_rgb(architecture, input_shape)
    known = torchvision.models.list_models(module=torchvision.models)  # classifiers only, not detection etc.
    if architecture not in known:
        raise ValueError(f"unknown torchvision architecture {architecture!r}; choose one of {known}")
    weights = torchvision.models.get_model_weights(architecture).DEFAULT if pretrained else None
    return _torchvision_classifier(architecture, weights=weights, num_classes=num_classes)


@register_model
def inception_resnet_v2(*, input_shape: tuple[int, int, int], num_classes: int, pretrained: bool = True) -> nn.Module:
    """timm's Inception-ResNet-v2 (the paper's WebVision network) with its default ImageNet weights
    (``inception_resnet_v2.tf_in1k`` from the Hugging Face Hub) unless ``pretrained`` is False, classifier for Q
    classes. Inputs of at least 75 x 75 pixels.

    Raises
    ------
    RuntimeError : the ImageNet weights cannot be fetched (never falls back to random initialisation silently).
    """
    import timm

    _require_rgb("inception_resnet_v2", input_shape)
    try:
        return timm.create_model("inception_resnet_v2", pretrained=pretrained, num_classes=num_classes)
    except Exception as exc:  # any download or cache failure: say how to fix it rather than train from scratch
        if not pretrained:
            raise
        from huggingface_hub.constants import HF_HUB_CACHE

        raise RuntimeError(
            _pretrained_failure(
                "inception_resnet_v2", "timm/inception_resnet_v2.tf_in1k", f"the Hugging Face cache {HF_HUB_CACHE}"
            )
        ) from exc


class SequenceClassifier(nn.Module):
    """A transformers sequence classifier taking one int64 tensor per batch, so text shares the training loop of
    images."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, 2, L) int64, [:, 0] input ids and [:, 1] attention mask -> logits (B, Q).

        Nothing is read back from the device, which would make every step wait for it: batches come cut to their
        longest text where they are formed, from lengths on the host (:func:`enkcvs.training.batches.cut_to_longest`),
        and the mask goes in as attention's own (B, 1, 1, L) boolean mask, which transformers takes as it is, where
        from the 2-D mask it would first test on the host whether any token is masked."""
        return self.model(input_ids=x[:, 0], attention_mask=x[:, 1, None, None, :].bool()).logits


@register_model
def text_classifier(
    *,
    input_shape: tuple[int, int],
    num_classes: int,
    checkpoint: str = checkpoints.DEFAULT_CHECKPOINT,
    local_files_only: bool = True,
) -> nn.Module:
    """A pretrained transformer fine-tuned for Q classes, with a fresh classification head (the paper fine-tunes
    "bert-base-uncased" on TREC). Inputs come from :func:`enkcvs.data.text.tokenize` with the same ``checkpoint``;
    ``input_shape`` (2, L) is not needed to build it.

    Parameters
    ----------
    checkpoint : a packaged name, a local folder or a Hugging Face Hub name (see
        :func:`enkcvs.data.checkpoints.resolve_checkpoint`).
    local_files_only : never reach the network (a Hub name must then be in the Hugging Face cache already).

    Raises
    ------
    RuntimeError : the checkpoint cannot be loaded (the message says how to fix it).
    """
    from transformers import AutoModelForSequenceClassification

    try:
        model = AutoModelForSequenceClassification.from_pretrained(
            checkpoints.resolve_checkpoint(checkpoint), num_labels=num_classes, local_files_only=local_files_only
        )
    except (OSError, ValueError) as exc:
        raise RuntimeError(checkpoints.load_failure_message(checkpoint, "model")) from exc
    return SequenceClassifier(model)
