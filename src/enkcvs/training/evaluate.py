"""A network evaluated: class probabilities for inputs, the epoch whose weights a training keeps, by accuracy on
noisy validation labels (Appendix, Eq. para_val), and a curve of accuracy on a labelled set that is only recorded."""

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from enkcvs.training.batches import Inputs, cut_to_longest, data_loader, model_input, resident, token_lengths
from enkcvs.training.device import default_device
from enkcvs.training.precision import autocast


@torch.no_grad()
def predict_proba(
    model: nn.Module,
    x: Inputs | torch.Tensor,
    *,
    device: torch.device | None = None,
    batch_size: int = 1024,
    workers: int = 4,
    bf16: bool = False,
) -> np.ndarray:
    """Class probabilities of ``model`` (eval mode) for N inputs as :func:`enkcvs.training.train.train_model` takes
    them, or already on the device (a streamed Dataset is read in order by ``workers`` processes; ``bf16`` as
    ``recipe.bf16``). Returns (N, Q) float32."""
    device = device or default_device()
    model.eval()
    if isinstance(x, np.ndarray | torch.Tensor):
        chunks, lengths = resident(x, device).split(batch_size), token_lengths(x)
        if lengths is not None:
            chunks = (
                cut_to_longest(chunk, lengths[start : start + batch_size])
                for chunk, start in zip(chunks, range(0, len(lengths), batch_size))
            )
    else:
        streamed = data_loader(x, batch_size=batch_size, workers=workers, device=device)
        chunks = (images.to(device) for images, _ in streamed)
    probabilities = []
    for chunk in chunks:
        with autocast(device, enabled=bf16):
            logits = model(model_input(chunk))
        probabilities.append(F.softmax(logits.float(), dim=1))
    return torch.cat(probabilities).float().cpu().numpy()


def labelled_accuracy(
    model: nn.Module, data: tuple[Inputs | torch.Tensor, np.ndarray], *, device: torch.device, workers: int, bf16: bool
) -> float:
    """The share of ``data`` (inputs (V, ...), labels (V,)) whose label is ``model``'s most probable class."""
    inputs, labels = data
    predicted = predict_proba(model, inputs, device=device, workers=workers, bf16=bf16)
    return float(np.mean(predicted.argmax(1) == labels))


class EpochCurve:
    """Network 1's accuracy on a labelled set after every epoch: the noisy-validation scores :class:`BestEpoch` keeps
    an epoch by, or a final model's clean test curve, which is only recorded (every final model's
    ``test_accuracy_by_epoch``).
    Scoring runs in eval mode and draws no random numbers, so a training with a curve ends with the same weights as
    one without."""

    def __init__(self, data: tuple[Inputs, np.ndarray], *, device: torch.device, workers: int, bf16: bool):
        if isinstance(data[0], np.ndarray):
            data = (resident(data[0], device), data[1])  # uploaded once, evaluated every epoch
        self.data, self.device, self.workers, self.bf16 = data, device, workers, bf16
        self.history: list[float] = []

    def update(self, models: list[nn.Module]) -> float:
        """Score network 1 after an epoch, append and return its accuracy."""
        self.history.append(
            labelled_accuracy(models[0], self.data, device=self.device, workers=self.workers, bf16=self.bf16)
        )
        return self.history[-1]


class BestEpoch:
    """The noisy-validation accuracy of every epoch, and the weights of the best one (Appendix, Eq. para_val): the
    first epoch with the highest accuracy of network 1. Without validation data, the last epoch's weights are kept."""

    def __init__(self, validation: tuple[Inputs, np.ndarray] | None, *, device: torch.device, workers: int, bf16: bool):
        self.scores = None if validation is None else EpochCurve(validation, device=device, workers=workers, bf16=bf16)
        self.best_epoch: int | None = None  # None until an epoch is scored
        self._best_accuracy, self._best_states = -1.0, None

    @property
    def history(self) -> list[float]:
        """The noisy-validation accuracy of every epoch scored so far (none without validation data)."""
        return [] if self.scores is None else self.scores.history

    def update(self, models: list[nn.Module], *, epoch: int) -> float | None:
        """Score network 1 after ``epoch`` (1-based) and keep every network's weights if it is the best so far;
        returns the accuracy (None without validation data)."""
        if self.scores is None:
            return None
        accuracy = self.scores.update(models)
        if accuracy > self._best_accuracy:
            self._best_accuracy, self.best_epoch = accuracy, epoch
            # clones, not deep copies: a stacked model's tensors are views of the whole stack (enkcvs.training.stacked),
            # and a view's deep copy copies its entire storage
            self._best_states = [
                {name: tensor.detach().clone() for name, tensor in model.state_dict().items()} for model in models
            ]
        return accuracy

    def state_dict(self) -> dict:
        return {
            "history": self.history,
            "best_epoch": self.best_epoch,
            "best_accuracy": self._best_accuracy,
            "best_states": self._best_states,
        }

    def load_state_dict(self, state: dict) -> None:
        if self.scores is not None:
            self.scores.history = list(state["history"])
        self.best_epoch = state["best_epoch"]
        self._best_accuracy, self._best_states = state["best_accuracy"], state["best_states"]

    def restore(self, models: list[nn.Module]) -> None:
        """Load the best epoch's weights into the networks (if any epoch was scored) and put them in eval mode."""
        for index, model in enumerate(models):
            if self._best_states is not None:
                model.load_state_dict(self._best_states[index])
            model.eval()
