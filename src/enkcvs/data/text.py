"""Text inputs for the TREC recipe: where a transformer checkpoint lives, and batched tokenisation into one int64
array per dataset (ids and attention mask stacked), so text flows through the same one-tensor-per-batch training loop
as images (checkpoints by name: :mod:`enkcvs.data.checkpoints`).

transformers is imported only inside the functions that need it (it costs seconds per process).
"""

from collections.abc import Sequence

import numpy as np

from enkcvs.data.checkpoints import load_failure_message, resolve_checkpoint


def tokenize(
    texts: Sequence[str], *, checkpoint: str, max_length: int = 64, local_files_only: bool = True
) -> np.ndarray:
    """Tokenise all ``texts`` in one batched call of the checkpoint's fast tokenizer.

    Parameters
    ----------
    texts : N strings.
    checkpoint : a packaged name, a local folder or a Hugging Face Hub name (see :func:`resolve_checkpoint`).
    max_length : longest token sequence kept (special tokens included); longer texts are truncated.
    local_files_only : never reach the network (a Hub name must then be in the Hugging Face cache already).

    Returns
    -------
    (N, 2, L) int64: [:, 0] input ids, [:, 1] attention mask; L = the longest tokenised text, at most ``max_length``.
    """
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(resolve_checkpoint(checkpoint), local_files_only=local_files_only)
    except (OSError, ValueError) as exc:
        raise RuntimeError(load_failure_message(checkpoint, "tokenizer")) from exc
    encoded = tokenizer(list(texts), padding="longest", truncation=True, max_length=max_length, return_tensors="np")
    return np.stack([encoded["input_ids"], encoded["attention_mask"]], axis=1).astype(np.int64)
