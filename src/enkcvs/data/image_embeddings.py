"""Image embeddings from a frozen torchvision backbone, each image file encoded once per machine.

An image's embedding is what the backbone's last linear layer reads (its classifier removed), from the image as the
weights' own preset prepares it (``weights.transforms()``: resize, centre crop, ImageNet normalisation), in RGB. Light
heads then train on the (N, D) embeddings as on texts' (:mod:`enkcvs.data.embeddings`), where training a network for
each of the M x K fold models costs hours on a CPU.

The weights come from torchvision's own cache (``torch.hub.get_dir()/checkpoints``), fetched once on a connected
machine (:func:`fetch_command`); offline without them an encoder is refused before any work (:func:`weights_problem`),
never replaced by random weights. Embeddings are cached as texts' are, under :func:`enkcvs.io.cache_dir`
(``embeddings/<encoder>-<weights>/``), an image keyed by the SHA-256 of its file's bytes.

torch and torchvision are imported only inside the functions that encode.
"""

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from enkcvs.data.embeddings import cached_vectors
from enkcvs.io import cache_dir

#: Images encoded per forward pass.
ENCODE_BATCH = 32
#: How an image becomes its embedding, in words for provenance records.
POOLING = "the backbone's features before its last linear layer, the image prepared by its weights' preset"


def default_weights(encoder: str):
    """The DEFAULT weights enum member of torchvision's classification model ``encoder``.

    Raises
    ------
    ValueError : torchvision has no classification model of that name (the message lists them).
    """
    import torchvision.models

    known = torchvision.models.list_models(module=torchvision.models)
    if encoder not in known:
        raise ValueError(
            f"--encoder {encoder}: torchvision has no classification model of that name. Fix: pass one "
            f"of {', '.join(known)} (e.g. resnet18, mobilenet_v3_small)"
        )
    return torchvision.models.get_model_weights(encoder).DEFAULT


def fetch_command(encoder: str) -> str:
    """The command that fetches ``encoder``'s weights into torchvision's cache, run on a connected machine."""
    return (
        f"python -c \"import torchvision; torchvision.models.get_model_weights('{encoder}').DEFAULT"
        '.get_state_dict(progress=True)"'
    )


def weights_file(encoder: str) -> Path:
    """Where torchvision's cache keeps ``encoder``'s default weights."""
    import torch

    return Path(torch.hub.get_dir()) / "checkpoints" / os.path.basename(default_weights(encoder).url)


def weights_problem(encoder: str) -> str | None:
    """Why ``encoder`` cannot encode on this machine now (unknown, or its weights not in the cache), with the fix;
    None when it can."""
    try:
        path = weights_file(encoder)
    except ValueError as error:
        return str(error)
    if path.is_file():
        return None
    return (
        f"--encoder {encoder}: its ImageNet weights are not in torchvision's cache ({path}), and this command "
        f"never trains on random weights. Fix: on a machine with network access run {fetch_command(encoder)} "
        f"and copy {path.name} into {path.parent} here (or run it here where the network is reachable)"
    )


def load_encoder(encoder: str, *, pretrained: bool = True):
    """``encoder`` with its default weights from torchvision's cache (``pretrained`` False: random, seeded 0, for
    tests of the plumbing only), its last linear layer replaced by the identity, in eval mode; and its preset."""
    import torch
    import torchvision.models

    weights = default_weights(encoder)
    if pretrained and (problem := weights_problem(encoder)) is not None:
        raise RuntimeError(problem)
    torch.manual_seed(0)
    model = torchvision.models.get_model(encoder, weights=None)
    if pretrained:
        model.load_state_dict(torch.load(weights_file(encoder), map_location="cpu", weights_only=True))
    name = [name for name, module in model.named_modules() if isinstance(module, torch.nn.Linear)][-1]
    parent, _, attribute = name.rpartition(".")
    setattr(model.get_submodule(parent) if parent else model, attribute, torch.nn.Identity())
    return model.eval(), weights.transforms()


def embed_images(
    paths: Sequence[str], *, root: str | Path, encoder: str, batch_size: int = ENCODE_BATCH, pretrained: bool = True
) -> np.ndarray:
    """The embeddings of the image files ``paths`` (relative to ``root``), from the cache where it holds them, the
    others encoded (:func:`encode_images`) and added to it.

    Returns
    -------
    (N, D) float32, rows in the order of ``paths``; D the backbone's feature size.
    """
    keys = [hashlib.sha256(Path(root, path).read_bytes()).hexdigest() for path in paths]
    weights = default_weights(encoder).name if pretrained else "random"
    return cached_vectors(
        keys,
        paths,
        folder=cache_dir() / "embeddings" / f"{encoder}-{weights}",
        encode=lambda missing: encode_images(
            missing, root=root, encoder=encoder, batch_size=batch_size, pretrained=pretrained
        ),
    )


def encode_images(
    paths: Sequence[str], *, root: str | Path, encoder: str, batch_size: int = ENCODE_BATCH, pretrained: bool = True
) -> np.ndarray:
    """Encode the image files ``paths`` (relative to ``root``) with the frozen ``encoder`` (:func:`load_encoder`), in
    batches of ``batch_size`` under ``torch.inference_mode``. Returns (N, D) float32."""
    import torch
    from PIL import Image

    model, preset = load_encoder(encoder, pretrained=pretrained)
    batches = []
    with torch.inference_mode():
        for start in range(0, len(paths), batch_size):
            images = []
            for path in paths[start : start + batch_size]:
                with Image.open(Path(root, path)) as image:
                    images.append(preset(image.convert("RGB")))
            batches.append(model(torch.stack(images)).float().numpy())
    return np.concatenate(batches).astype(np.float32)
