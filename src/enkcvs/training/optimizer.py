"""The recipe's optimizer and step schedule, behind three calls: ``zero_grad()``, ``step()``, ``end_epoch()``, and
``state_dict()`` / ``load_state_dict()`` for a training resumed from its last epoch (:mod:`enkcvs.training.resume`).

SGD does not go through ``torch.optim.Optimizer``: creating any such optimizer imports ``torch._dynamo`` (its
``add_param_group`` is wrapped by ``torch._disable_dynamo``, which imports dynamo on first call), about 1.1 s of the
2.6 s a training job spends before its first step (benchmarks/README.md, per-job overhead). :class:`MomentumSGD` calls
the kernel ``torch.optim.SGD.step`` calls (``torch.optim.sgd.sgd``) with the same arguments and decays the learning
rate as ``MultiStepLR`` does, so the weights are bit-identical to ``torch.optim.SGD`` + ``MultiStepLR``
(tests/test_optimizer.py). Adam (the text recipes) stays ``torch.optim.Adam``: loading a transformers model imports
``torch._dynamo`` anyway.
"""

from collections import Counter
from collections.abc import Iterable

import torch
from torch.optim.sgd import sgd

from enkcvs.training.recipe import Recipe


class MultiStepDecay:
    """The learning rate of ``torch.optim.lr_scheduler.MultiStepLR``: multiplied by ``gamma`` (to the power of how
    often the epoch is listed) when an epoch in ``milestones`` ends, the same float operations in the same order."""

    def __init__(self, *, lr: float, milestones: Iterable[int], gamma: float) -> None:
        self.lr, self.gamma, self.milestones, self.epochs_done = lr, gamma, Counter(milestones), 0

    def end_epoch(self) -> None:
        self.epochs_done += 1
        if self.epochs_done in self.milestones:
            self.lr = self.lr * self.gamma ** self.milestones[self.epochs_done]

    def state_dict(self) -> dict:
        return {"lr": self.lr, "epochs_done": self.epochs_done}

    def load_state_dict(self, state: dict) -> None:
        self.lr, self.epochs_done = state["lr"], state["epochs_done"]


class MomentumSGD:
    """SGD with momentum and L2 weight decay, as ``torch.optim.SGD(parameters, lr, momentum, weight_decay)`` with a
    ``MultiStepLR(milestones, gamma)`` schedule (dampening 0, no Nesterov), without importing ``torch._dynamo``;
    ``step_decay`` > 0 adds Keras' time-based decay: step s (0-based, over all epochs) uses the epoch's lr
    / (1 + step_decay * s)."""

    def __init__(
        self,
        parameters: Iterable[torch.nn.Parameter],
        *,
        lr: float,
        momentum: float,
        weight_decay: float,
        milestones: Iterable[int],
        gamma: float,
        step_decay: float = 0.0,
    ) -> None:
        self.parameters = list(parameters)
        self.momentum, self.weight_decay, self.step_decay = momentum, weight_decay, step_decay
        self.schedule = MultiStepDecay(lr=lr, milestones=milestones, gamma=gamma)
        self.momentum_buffers: dict[int, torch.Tensor] = {}  # parameter index -> buffer, created by the first step
        self.steps = 0  # optimizer steps taken, for the time-based decay

    @property
    def lr(self) -> float:
        """The learning rate of the next step."""
        if not self.step_decay:
            return self.schedule.lr
        return self.schedule.lr / (1.0 + self.step_decay * self.steps)

    def zero_grad(self) -> None:
        for parameter in self.parameters:
            parameter.grad = None

    @torch.no_grad()
    def step(self) -> None:
        stepped = [index for index, parameter in enumerate(self.parameters) if parameter.grad is not None]
        params = [self.parameters[index] for index in stepped]
        buffers = [self.momentum_buffers.get(index) for index in stepped]
        sgd(
            params,
            [parameter.grad for parameter in params],
            buffers,
            weight_decay=self.weight_decay,
            momentum=self.momentum,
            lr=self.lr,
            dampening=0.0,
            nesterov=False,
            maximize=False,
            has_sparse_grad=False,
        )
        if self.momentum:
            self.momentum_buffers.update(zip(stepped, buffers))
        self.steps += 1

    def end_epoch(self) -> None:
        self.schedule.end_epoch()

    def state_dict(self) -> dict:
        """The momentum buffers (by parameter index), the schedule and the steps taken, for :meth:`load_state_dict`."""
        return {"momentum_buffers": dict(self.momentum_buffers), "schedule": self.schedule.state_dict(),
                "steps": self.steps}

    def load_state_dict(self, state: dict) -> None:
        self.momentum_buffers = {int(index): buffer.to(self.parameters[int(index)].device)
                                 for index, buffer in state["momentum_buffers"].items()}
        self.schedule.load_state_dict(state["schedule"])
        self.steps = state.get("steps", 0)  # checkpoints written before the time-based decay count no steps


class LinearDecay:
    """Co-teaching's authors' plan for Adam (Han et al. 2018, bhanML/Co-teaching ``main.py``: ``alpha_plan`` and
    ``beta1_plan``): the lr is constant until 1-based epoch ``start``, then ``lr * (epochs + 1 - epoch) / (epochs + 1
    - start)`` at each epoch, and beta1 is ``beta1`` from ``start`` on (None: unchanged). Their epoch 0 only
    evaluates, so their ``n_epoch`` is ``epochs + 1`` here. A scheduler stepped at each epoch's end, as
    ``MultiStepLR``."""

    def __init__(self, optimizer: torch.optim.Optimizer, *, lr: float, epochs: int, start: int,
                 beta1: float | None) -> None:
        self.optimizer, self.lr, self.epochs, self.start, self.beta1 = optimizer, lr, epochs, start, beta1
        self.epochs_done = 0
        self._apply()

    def _apply(self) -> None:
        """Set the lr and betas of the next epoch."""
        epoch = self.epochs_done + 1
        if epoch < self.start:
            return
        for group in self.optimizer.param_groups:
            group["lr"] = self.lr * (self.epochs + 1 - epoch) / (self.epochs + 1 - self.start)
            if self.beta1 is not None:
                group["betas"] = (self.beta1, group["betas"][1])

    def step(self) -> None:
        self.epochs_done += 1
        self._apply()

    def state_dict(self) -> dict:
        return {"epochs_done": self.epochs_done}

    def load_state_dict(self, state: dict) -> None:
        self.epochs_done = state["epochs_done"]
        self._apply()


class TorchOptimizer:
    """A ``torch.optim`` optimizer and its epoch schedule (``MultiStepLR`` or :class:`LinearDecay`) under
    :class:`MomentumSGD`'s three calls."""

    def __init__(self, optimizer: torch.optim.Optimizer, *, schedule) -> None:
        self.optimizer, self.schedule = optimizer, schedule

    def zero_grad(self) -> None:
        self.optimizer.zero_grad(set_to_none=True)

    def step(self) -> None:
        self.optimizer.step()

    def end_epoch(self) -> None:
        self.schedule.step()

    def state_dict(self) -> dict:
        return {"optimizer": self.optimizer.state_dict(), "schedule": self.schedule.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.schedule.load_state_dict(state["schedule"])


def recipe_optimizer(recipe: Recipe, parameters: Iterable[torch.nn.Parameter]) -> MomentumSGD | TorchOptimizer:
    """The optimizer ``recipe.optimizer`` names ("sgd" with ``recipe.momentum``, or "adam"), with the recipe's learning
    rate, weight decay and step schedule (``lr_decay`` at each of ``milestones``, or for Adam the linear decay from
    ``lr_linear_decay_from``: :class:`LinearDecay`)."""
    if recipe.optimizer == "sgd":
        return MomentumSGD(
            parameters, lr=recipe.lr, momentum=recipe.momentum, weight_decay=recipe.weight_decay,
            milestones=recipe.milestones, gamma=recipe.lr_decay, step_decay=recipe.lr_step_decay,
        )
    if recipe.optimizer == "adam":
        adam = torch.optim.Adam(parameters, lr=recipe.lr, weight_decay=recipe.weight_decay)
        if recipe.lr_linear_decay_from:
            return TorchOptimizer(adam, schedule=LinearDecay(adam, lr=recipe.lr, epochs=recipe.epochs,
                                                             start=recipe.lr_linear_decay_from,
                                                             beta1=recipe.beta1_after_decay))
        return TorchOptimizer(adam, schedule=torch.optim.lr_scheduler.MultiStepLR(
            adam, list(recipe.milestones), gamma=recipe.lr_decay))
    raise ValueError(f"unknown optimizer {recipe.optimizer!r}; use 'sgd' or 'adam'")
