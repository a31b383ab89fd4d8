"""The readings of a final model's clean test curve (its test accuracy after every epoch, ``test_accuracy_by_epoch``),
one function each: the last epoch, the protocol here and the model kept (docs/paper-notes.md: no clean validation data
picks an epoch); the mean of the last ten epochs, as Co-teaching's authors report; and the best epoch, an optimistic
reading, the test set picking it, as many papers report (CIFAR-N's authors among them). A curve is a sequence of
accuracies, epoch 1 first, in any unit.
"""

from collections.abc import Sequence

import numpy as np

#: How many of the last epochs :func:`mean_of_last_epochs` averages.
LAST_EPOCHS = 10
#: Each reading's name in the tables' columns, and its title where it is shown; the optimistic one says so.
READINGS = {
    "last": "last epoch",
    "last10": f"mean of last {LAST_EPOCHS} epochs",
    "best": "best epoch (optimistic)",
}


def last_epoch(curve: Sequence[float]) -> float:
    """The accuracy after the last epoch: the model kept, and the reading every table reports first."""
    return float(curve[-1])


def mean_of_last_epochs(curve: Sequence[float], *, epochs: int = LAST_EPOCHS) -> float:
    """The mean accuracy over the last ``epochs`` epochs (Han et al. 2018 report Co-teaching's so); over every epoch
    of a training shorter than that (:func:`epochs_averaged` says how many)."""
    return float(np.mean(curve[-epochs:]))


def epochs_averaged(curve: Sequence[float], *, epochs: int = LAST_EPOCHS) -> int:
    """How many epochs :func:`mean_of_last_epochs` averages: ``epochs``, or all of a shorter training's."""
    return min(len(curve), epochs)


def best_epoch(curve: Sequence[float]) -> tuple[int, float]:
    """The optimistic reading: the first epoch (1-based) with the highest accuracy, and that accuracy. The test set
    chooses it, so it is what the method could reach, not what it delivers without clean labels to stop by."""
    index = int(np.argmax(curve))
    return index + 1, float(curve[index])
