"""The recipe optimizer: SGD bit-identical to torch.optim.SGD + MultiStepLR, and training without torch._dynamo."""

import subprocess
import sys

import numpy as np
import pytest
import torch

from enkcvs.training.optimizer import MomentumSGD, MultiStepDecay, TorchOptimizer, recipe_optimizer
from enkcvs.training.recipe import Recipe


def _model(seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.BatchNorm1d(5), torch.nn.ReLU(), torch.nn.Linear(5, 3))


def _train(model: torch.nn.Module, zero_grad, step, end_epoch, *, epochs: int, frozen: str | None = None) -> None:
    """Epochs of a few seeded regression steps; ``frozen`` names a parameter that gets no gradient."""
    generator = torch.Generator().manual_seed(7)
    for parameter_name, parameter in model.named_parameters():
        parameter.requires_grad_(parameter_name != frozen)
    for _ in range(epochs):
        for _ in range(3):
            x, y = torch.randn(8, 6, generator=generator), torch.randn(8, 3, generator=generator)
            zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            step()
        end_epoch()


@pytest.mark.parametrize("momentum", [0.9, 0.0])
@pytest.mark.parametrize("frozen", [None, "1.weight"])
def test_momentum_sgd_is_bit_identical_to_torch_sgd_with_multistep_lr(momentum, frozen):
    milestones, gamma = [2, 4, 4], 0.1  # 4 listed twice: decayed by gamma**2 there, as MultiStepLR does
    ours, reference = _model(0), _model(0)
    sgd = MomentumSGD(
        ours.parameters(), lr=0.05, momentum=momentum, weight_decay=5e-4, milestones=milestones, gamma=gamma
    )
    _train(ours, sgd.zero_grad, sgd.step, sgd.end_epoch, epochs=6, frozen=frozen)
    torch_sgd = torch.optim.SGD(reference.parameters(), lr=0.05, momentum=momentum, weight_decay=5e-4)
    schedule = torch.optim.lr_scheduler.MultiStepLR(torch_sgd, milestones, gamma=gamma)
    _train(
        reference, lambda: torch_sgd.zero_grad(set_to_none=True), torch_sgd.step, schedule.step, epochs=6, frozen=frozen
    )
    assert sgd.schedule.lr == torch_sgd.param_groups[0]["lr"]
    for (name, mine), theirs in zip(ours.state_dict().items(), reference.state_dict().values()):
        assert torch.equal(mine, theirs), name


def test_multistep_decay_matches_multistep_lr_float_for_float():
    decay = MultiStepDecay(lr=0.01, milestones=[10, 30, 30, 45], gamma=0.3)
    reference = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.01)
    schedule = torch.optim.lr_scheduler.MultiStepLR(reference, [10, 30, 30, 45], gamma=0.3)
    rates = []
    for _ in range(50):
        reference.step()
        schedule.step()
        decay.end_epoch()
        rates.append((decay.lr, reference.param_groups[0]["lr"]))
    assert all(mine == theirs for mine, theirs in rates)
    assert rates[9][0] == 0.01 * 0.3 and rates[8][0] == 0.01


def test_recipe_optimizer_picks_the_recipe_optimizer():
    model = _model(0)
    assert isinstance(
        recipe_optimizer(Recipe(model="mlp", optimizer="sgd", lr=0.1, epochs=1), model.parameters()), MomentumSGD
    )
    adam = recipe_optimizer(
        Recipe(model="mlp", optimizer="adam", lr=0.1, epochs=2, milestones=(1,), lr_decay=0.5), model.parameters()
    )
    assert isinstance(adam, TorchOptimizer) and isinstance(adam.optimizer, torch.optim.Adam)
    _train(model, adam.zero_grad, adam.step, adam.end_epoch, epochs=1)
    assert adam.optimizer.param_groups[0]["lr"] == 0.05


def test_sgd_training_does_not_import_torch_dynamo():
    """The per-job overhead: no torch.optim.Optimizer (which imports torch._dynamo) on the SGD training path."""
    child = (
        "import sys, numpy as np, torch\n"
        "from enkcvs.training.recipe import Recipe\n"
        "from enkcvs.training.train import train_model\n"
        "train_model(recipe=Recipe(model='cnn4', optimizer='sgd', lr=0.01, epochs=2, batch_size=4, milestones=(1,)),\n"
        "            x=np.zeros((8, 1, 28, 28), np.uint8), targets=np.eye(10, dtype=np.float32)[np.arange(8)],\n"
        "            seed=0, device=torch.device('cpu'))\n"
        "print(sorted(name for name in sys.modules if name.startswith('torch._dynamo')))\n"
    )
    imported = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True).stdout
    assert imported.strip() == "[]"


def test_the_time_based_decay_divides_each_steps_lr_by_one_plus_decay_times_the_steps_taken():
    """Keras' SGD(decay=d) inside the milestone schedule: step s of the whole run uses the epoch's lr / (1 + d s)."""
    decay, ours, reference = 5e-3, _model(0), _model(0)
    sgd = MomentumSGD(
        ours.parameters(), lr=0.1, momentum=0.9, weight_decay=0.0, milestones=[2], gamma=0.1, step_decay=decay
    )
    torch_sgd = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    taken = {"steps": 0, "epochs": 0}

    def reference_step():
        epoch_lr = 0.1 * 0.1 if taken["epochs"] >= 2 else 0.1
        torch_sgd.param_groups[0]["lr"] = epoch_lr / (1.0 + decay * taken["steps"])
        torch_sgd.step()
        taken["steps"] += 1

    _train(ours, sgd.zero_grad, sgd.step, sgd.end_epoch, epochs=4)
    _train(
        reference,
        lambda: torch_sgd.zero_grad(set_to_none=True),
        reference_step,
        lambda: taken.update(epochs=taken["epochs"] + 1),
        epochs=4,
    )
    assert sgd.steps == 12 and sgd.lr == 0.1 * 0.1 / (1.0 + decay * 12)
    for (name, mine), theirs in zip(ours.state_dict().items(), reference.state_dict().values()):
        assert torch.equal(mine, theirs), name


def test_a_resumed_optimizer_goes_on_with_the_steps_it_had_taken():
    model = _model(0)
    sgd = MomentumSGD(
        model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.0, milestones=[], gamma=0.1, step_decay=0.01
    )
    _train(model, sgd.zero_grad, sgd.step, sgd.end_epoch, epochs=2)
    resumed = MomentumSGD(
        model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.0, milestones=[], gamma=0.1, step_decay=0.01
    )
    resumed.load_state_dict(sgd.state_dict())
    assert resumed.steps == 6 and resumed.lr == sgd.lr == 0.1 / 1.06
    assert (
        recipe_optimizer(
            Recipe(model="mlp", optimizer="sgd", lr=0.1, epochs=1, lr_step_decay=0.01), model.parameters()
        ).step_decay
        == 0.01
    )


def _authors_plan(epoch: int, *, lr: float, n_epoch: int, decay_start: int) -> tuple[float, float]:
    """Co-teaching's own code's lr and beta1 at its epoch ``epoch`` (bhanML/Co-teaching main.py's alpha_plan and
    beta1_plan, rewritten here as they read)."""
    if epoch < decay_start:
        return lr, 0.9
    return float(n_epoch - epoch) / (n_epoch - decay_start) * lr, 0.1


def test_the_linear_decay_gives_each_epoch_the_lr_and_beta1_of_coteachings_authors_plan():
    """Their 200 epochs, the first only evaluating, are 199 trained ones whose 1-based number is theirs."""
    model = _model(0)
    recipe = Recipe(model="mlp", optimizer="adam", lr=0.001, epochs=199, lr_linear_decay_from=80, beta1_after_decay=0.1)
    adam = recipe_optimizer(recipe, model.parameters())
    seen = []
    for epoch in range(1, 200):
        group = adam.optimizer.param_groups[0]
        seen.append((group["lr"], group["betas"][0]))
        if epoch == 120:  # resumed from the checkpoint of epoch 119's end: the same plan goes on
            resumed = recipe_optimizer(recipe, model.parameters())
            resumed.load_state_dict(adam.state_dict())
            assert resumed.optimizer.param_groups[0]["lr"] == group["lr"]
            assert resumed.optimizer.param_groups[0]["betas"] == group["betas"]
        adam.end_epoch()
    expected = [_authors_plan(epoch, lr=0.001, n_epoch=200, decay_start=80) for epoch in range(1, 200)]
    np.testing.assert_allclose(seen, expected, rtol=1e-12)
    assert seen[78] == (0.001, 0.9) and seen[79] == (0.001, 0.1) and seen[-1][0] == pytest.approx(0.001 / 120)


def test_the_linear_decay_is_refused_where_it_would_not_apply():
    with pytest.raises(ValueError, match="applies to optimizer adam without milestones"):
        Recipe(model="mlp", optimizer="sgd", lr=0.1, epochs=10, lr_linear_decay_from=5)
    with pytest.raises(ValueError, match="applies to optimizer adam without milestones"):
        Recipe(model="mlp", optimizer="adam", lr=0.1, epochs=10, milestones=(3,), lr_linear_decay_from=5)
    with pytest.raises(ValueError, match="must be an epoch in 0..10"):
        Recipe(model="mlp", optimizer="adam", lr=0.1, epochs=10, lr_linear_decay_from=11)
    with pytest.raises(ValueError, match="comes with lr_linear_decay_from"):
        Recipe(model="mlp", optimizer="adam", lr=0.1, epochs=10, beta1_after_decay=0.1)
