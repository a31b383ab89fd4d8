"""Sentence embeddings of texts from a frozen transformer, each text encoded once per machine.

A text's embedding is the checkpoint's last hidden states averaged over its attention mask, then L2-normalised: what
sentence-transformers computes for all-MiniLM-L6-v2 (its modules ``1_Pooling`` with ``pooling_mode_mean_tokens`` and
``2_Normalize``). Light heads then train on the (N, D) embeddings as on a table's features, where fine-tuning the
transformer for each of the M x K fold models costs hours on a CPU.

Embeddings are cached by content under :func:`enkcvs.io.cache_dir` (``embeddings/<checkpoint>-<max tokens>/``,
a text keyed by the SHA-256 of its UTF-8 bytes), so a second run over the same texts, in any file or order, encodes
nothing. Each run that encodes adds one shard of the texts it was missing, written atomically and never rewritten:
runs at once on one machine at worst encode a text twice, never corrupt the cache.

torch and transformers are imported only inside the functions that encode (they cost seconds per process).
"""

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from enkcvs.data.checkpoints import DEFAULT_CHECKPOINT, checkpoint_slug, load_failure_message, resolve_checkpoint
from enkcvs.data.text import tokenize
from enkcvs.io import atomic_path, cache_dir

#: Texts encoded per forward pass: on a CPU larger batches gain nothing, and each is cut to its longest text.
ENCODE_BATCH = 128
#: How a text's token states become its embedding, in words for provenance records.
POOLING = "mean over the attention mask, L2-normalised"


def embed_texts(
    texts: Sequence[str],
    *,
    checkpoint: str = DEFAULT_CHECKPOINT,
    max_tokens: int = 64,
    batch_size: int = ENCODE_BATCH,
    local_files_only: bool = True,
) -> np.ndarray:
    """The embeddings of ``texts``, from the cache where it holds them, the others encoded (:func:`encode_texts`)
    and added to it.

    Parameters
    ----------
    texts : N strings.
    checkpoint : a packaged name, a local folder or a Hugging Face Hub name (see
        :func:`enkcvs.data.checkpoints.resolve_checkpoint`).
    max_tokens : tokens kept per text (special tokens included); longer texts are truncated.
    batch_size, local_files_only : as :func:`encode_texts` takes them.

    Returns
    -------
    (N, D) float32, each row of unit length; D the checkpoint's hidden size.
    """
    keys = [hashlib.sha256(text.encode()).hexdigest() for text in texts]
    folder = cache_dir() / "embeddings" / f"{checkpoint_slug(checkpoint)}-{max_tokens}"
    return cached_vectors(
        keys,
        texts,
        folder=folder,
        encode=lambda missing: encode_texts(
            missing,
            checkpoint=checkpoint,
            max_tokens=max_tokens,
            batch_size=batch_size,
            local_files_only=local_files_only,
        ),
    )


def cached_vectors(
    keys: Sequence[str], items: Sequence, *, folder: Path, encode: Callable[[list], np.ndarray]
) -> np.ndarray:
    """The vectors of ``items`` (N,), each keyed by its content's digest in ``keys`` (N,): from the cache in
    ``folder`` where it holds them, the others passed to ``encode`` (each distinct key once; it returns (n, D)) and
    added to the cache as one new shard. Returns (N, D) float32 in the order of ``items``."""
    cached = read_cache(folder)
    missing = {key: item for key, item in zip(keys, items) if key not in cached}
    if missing:
        vectors = encode(list(missing.values()))
        write_shard(folder, keys=list(missing), vectors=vectors)
        cached.update(zip(missing, vectors))
    return np.stack([cached[key] for key in keys])


def encode_texts(
    texts: Sequence[str],
    *,
    checkpoint: str,
    max_tokens: int,
    batch_size: int = ENCODE_BATCH,
    local_files_only: bool = True,
) -> np.ndarray:
    """Encode ``texts`` with the frozen ``checkpoint``: token states (B, L, D) averaged over each text's attention
    mask, then L2-normalised. The texts are tokenised at once (:func:`enkcvs.data.text.tokenize`), sorted by length
    and encoded in batches of ``batch_size`` cut to their longest text, under ``torch.inference_mode``.

    Returns
    -------
    (N, D) float32, rows in the order of ``texts``.

    Raises
    ------
    RuntimeError : the checkpoint cannot be loaded (the message says how to fix it).
    """
    import torch
    from transformers import AutoModel

    tokens = tokenize(texts, checkpoint=checkpoint, max_length=max_tokens, local_files_only=local_files_only)
    try:
        model = AutoModel.from_pretrained(resolve_checkpoint(checkpoint), local_files_only=local_files_only).eval()
    except (OSError, ValueError) as exc:
        raise RuntimeError(load_failure_message(checkpoint, "model")) from exc
    lengths = tokens[:, 1].sum(axis=1)  # (N,)
    order = np.argsort(lengths, kind="stable")  # texts of like length share a batch: little padding
    vectors = np.empty((len(texts), model.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            rows = order[start : start + batch_size]
            batch = torch.from_numpy(tokens[rows, :, : lengths[rows].max()])  # (B, 2, L)
            states = model(input_ids=batch[:, 0], attention_mask=batch[:, 1]).last_hidden_state  # (B, L, D)
            mask = batch[:, 1, :, None].to(states.dtype)  # (B, L, 1)
            mean = (states * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)  # (B, D)
            vectors[rows] = torch.nn.functional.normalize(mean, dim=1).numpy()
    return vectors


def read_cache(folder: Path) -> dict[str, np.ndarray]:
    """Every embedding cached in ``folder``'s shards, by its text's SHA-256 (hex); empty where none is."""
    cached = {}
    for shard in sorted(folder.glob("*.npz")):
        with np.load(shard, allow_pickle=False) as stored:
            cached.update(zip(stored["keys"].tolist(), stored["vectors"]))
    return cached


def write_shard(folder: Path, *, keys: list[str], vectors: np.ndarray) -> Path:
    """Add the (n, D) ``vectors`` of the texts with SHA-256 ``keys`` (n,) to the cache in ``folder``: one new shard,
    named by the digest of its keys, written atomically."""
    name = hashlib.sha256("".join(keys).encode()).hexdigest()[:32]
    with atomic_path(path := folder / f"{name}.npz") as partial, open(partial, "wb") as handle:
        np.savez(handle, keys=np.array(keys), vectors=vectors)
    return path
