"""The recipe's optimizer and step schedule, behind three calls: ``zero_grad()``, ``step()``, ``end_epoch()``, and
``state_dict()`` / ``load_state_dict()`` for a training resumed from its last epoch (:mod:`enkcvs.training.resume`);
and the same optimizers on the stacked weights of models trained together (:class:`StackedSGD`, :class:`StackedAdam`,
:mod:`enkcvs.training.stacked`), one call updating all.

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
        return {
            "momentum_buffers": dict(self.momentum_buffers),
            "schedule": self.schedule.state_dict(),
            "steps": self.steps,
        }

    def load_state_dict(self, state: dict) -> None:
        self.momentum_buffers = {
            int(index): buffer.to(self.parameters[int(index)].device)
            for index, buffer in state["momentum_buffers"].items()
        }
        self.schedule.load_state_dict(state["schedule"])
        self.steps = state.get("steps", 0)  # checkpoints written before the time-based decay count no steps


class LinearDecay:
    """Co-teaching's authors' plan for Adam (Han et al. 2018, bhanML/Co-teaching ``main.py``: ``alpha_plan`` and
    ``beta1_plan``): the lr is constant until 1-based epoch ``start``, then ``lr * (epochs + 1 - epoch) / (epochs + 1
    - start)`` at each epoch, and beta1 is ``beta1`` from ``start`` on (None: unchanged). Their epoch 0 only
    evaluates, so their ``n_epoch`` is ``epochs + 1`` here. A scheduler stepped at each epoch's end, as
    ``MultiStepLR``."""

    def __init__(
        self, optimizer: torch.optim.Optimizer, *, lr: float, epochs: int, start: int, beta1: float | None
    ) -> None:
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
            parameters,
            lr=recipe.lr,
            momentum=recipe.momentum,
            weight_decay=recipe.weight_decay,
            milestones=recipe.milestones,
            gamma=recipe.lr_decay,
            step_decay=recipe.lr_step_decay,
        )
    if recipe.optimizer == "adam":
        adam = torch.optim.Adam(parameters, lr=recipe.lr, weight_decay=recipe.weight_decay)
        if recipe.lr_linear_decay_from:
            return TorchOptimizer(
                adam,
                schedule=LinearDecay(
                    adam,
                    lr=recipe.lr,
                    epochs=recipe.epochs,
                    start=recipe.lr_linear_decay_from,
                    beta1=recipe.beta1_after_decay,
                ),
            )
        return TorchOptimizer(
            adam, schedule=torch.optim.lr_scheduler.MultiStepLR(adam, list(recipe.milestones), gamma=recipe.lr_decay)
        )
    raise ValueError(f"unknown optimizer {recipe.optimizer!r}; use 'sgd' or 'adam'")


class StackedSGD:
    """SGD with momentum and L2 weight decay on stacked weights (G, ...), with the recipe's milestone schedule: the
    update ``torch.optim.SGD`` makes of each model's own weights (dampening 0, no Nesterov), for all G models in one
    call, or for the ``rows`` of a step some models sit out, with the same float operations. Where its step is
    ``captured`` as a CUDA graph the learning rate is a tensor on the device, so that a replay reads the current one
    (its product rounds once more than the scalar's)."""

    def __init__(
        self, params: dict[str, torch.Tensor], *, recipe: Recipe, device: torch.device, captured: bool = False
    ):
        self.params, self.momentum, self.weight_decay = params, recipe.momentum, recipe.weight_decay
        self.schedule = MultiStepDecay(lr=recipe.lr, milestones=recipe.milestones, gamma=recipe.lr_decay)
        self.lr = torch.tensor(recipe.lr, device=device) if captured else recipe.lr
        # zero buffers: the first step's momentum * 0 + gradient is the gradient, as torch.optim.SGD's first step
        self.buffers = {name: torch.zeros_like(param) for name, param in params.items()}

    @torch.no_grad()
    def step(self, rows: torch.Tensor | None = None) -> None:
        for name, param in self.params.items():
            weights, gradient = (param, param.grad) if rows is None else (param[rows], param.grad[rows])
            if self.weight_decay:
                gradient = gradient.add(weights, alpha=self.weight_decay)
            if self.momentum:
                buffer = self.buffers[name] if rows is None else self.buffers[name][rows]
                buffer.mul_(self.momentum).add_(gradient)
                if rows is not None:
                    self.buffers[name][rows] = buffer
                gradient = buffer
            step = gradient * -self.lr if torch.is_tensor(self.lr) else None
            if rows is None:
                param.add_(step) if step is not None else param.add_(gradient, alpha=-self.lr)
            else:
                param[rows] = weights + step if step is not None else weights.add(gradient, alpha=-self.lr)

    def end_epoch(self) -> None:
        self.schedule.end_epoch()
        self._set_lr()

    def _set_lr(self) -> None:
        if torch.is_tensor(self.lr):
            self.lr.fill_(self.schedule.lr)
        else:
            self.lr = self.schedule.lr

    def state_dict(self) -> dict:
        return {"buffers": dict(self.buffers), "schedule": self.schedule.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        for name, buffer in state["buffers"].items():
            self.buffers[name].copy_(buffer)
        self.schedule.load_state_dict(state["schedule"])
        self._set_lr()


class StackedAdam:
    """Adam with L2 weight decay on stacked weights (G, ...), with the recipe's milestone schedule: the update
    ``torch.optim.Adam`` makes of each model's own weights (no AMSGrad), for all G models at once or for ``rows``.
    Each model counts its own steps in a tensor beside its weights (a model that skips a step does not advance)."""

    betas, eps = (0.9, 0.999), 1e-8  # torch.optim.Adam's defaults, as recipe_optimizer builds it

    def __init__(
        self, params: dict[str, torch.Tensor], *, recipe: Recipe, device: torch.device, captured: bool = False
    ):
        self.params, self.weight_decay = params, recipe.weight_decay
        self.schedule = MultiStepDecay(lr=recipe.lr, milestones=recipe.milestones, gamma=recipe.lr_decay)
        self.lr = torch.tensor(recipe.lr, dtype=torch.float64, device=device)
        self.steps = torch.zeros(len(next(iter(params.values()))), dtype=torch.float64, device=device)
        self.moments = {name: (torch.zeros_like(param), torch.zeros_like(param)) for name, param in params.items()}

    @torch.no_grad()
    def step(self, rows: torch.Tensor | None = None) -> None:
        beta1, beta2 = self.betas
        if rows is None:
            self.steps += 1
            steps = self.steps
        else:
            self.steps[rows] += 1
            steps = self.steps[rows]
        correction1, correction2 = 1 - beta1**steps, (1 - beta2**steps).sqrt()  # (g,)
        for name, param in self.params.items():
            shape = (-1, *[1] * (param.ndim - 1))
            weights, gradient = (param, param.grad) if rows is None else (param[rows], param.grad[rows])
            first, second = self.moments[name] if rows is None else (moment[rows] for moment in self.moments[name])
            if self.weight_decay:
                gradient = gradient.add(weights, alpha=self.weight_decay)
            first.lerp_(gradient, 1 - beta1)
            second.mul_(beta2).addcmul_(gradient, gradient, value=1 - beta2)
            denominator = (second.sqrt() / correction2.view(shape).to(second.dtype)).add_(self.eps)
            step_size = (self.lr / correction1).view(shape).to(param.dtype)
            if rows is None:
                param.sub_(step_size * first / denominator)
            else:
                param[rows] = weights - step_size * first / denominator
                self.moments[name][0][rows], self.moments[name][1][rows] = first, second

    def end_epoch(self) -> None:
        self.schedule.end_epoch()
        self.lr.fill_(self.schedule.lr)

    def state_dict(self) -> dict:
        return {"moments": dict(self.moments), "steps": self.steps.clone(), "schedule": self.schedule.state_dict()}

    def load_state_dict(self, state: dict) -> None:
        for name, (first, second) in state["moments"].items():
            self.moments[name][0].copy_(first)
            self.moments[name][1].copy_(second)
        self.steps.copy_(state["steps"])
        self.schedule.load_state_dict(state["schedule"])
        self.lr.fill_(self.schedule.lr)


#: The stacked optimizers by ``recipe.optimizer``.
STACKED_OPTIMIZERS = {"sgd": StackedSGD, "adam": StackedAdam}
