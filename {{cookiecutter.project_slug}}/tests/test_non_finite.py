"""The NaN guard names what went non-finite, skips when told to, and never saves NaN weights."""

from types import SimpleNamespace

import pytest
import torch

from {{ cookiecutter.package_name }}.non_finite import NonFiniteError, NonFiniteGuard


def fake_trainer() -> SimpleNamespace:
    """The few trainer attributes the guard reads, at epoch 2, batch 5, step 45."""
    epoch_loop = SimpleNamespace(batch_idx=5)
    return SimpleNamespace(
        precision="32-true",
        current_epoch=2,
        global_step=45,
        fit_loop=SimpleNamespace(epoch_loop=epoch_loop),
    )


def model_with_gradients(bad_value: float | None) -> torch.nn.Module:
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
    model(torch.ones(1, 3)).sum().backward()
    if bad_value is not None:
        model[1].weight.grad[0, 0] = bad_value
    return model


def test_finite_step_passes_untouched():
    guard, model = NonFiniteGuard(), model_with_gradients(None)
    guard.on_before_backward(fake_trainer(), model, torch.tensor(0.5))
    guard.on_before_optimizer_step(fake_trainer(), model, optimizer=None)
    assert all(p.grad is not None for p in model.parameters())


@pytest.mark.parametrize("bad_value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_gradients_stop_naming_the_parameters_and_the_step(bad_value):
    guard, model = NonFiniteGuard(), model_with_gradients(bad_value)
    with pytest.raises(NonFiniteError) as error:
        guard.on_before_optimizer_step(fake_trainer(), model, optimizer=None)
    message = str(error.value)
    assert "epoch 2, batch 5, optimizer step 45" in message
    assert "the gradients of 1.weight are not finite" in message


def test_non_finite_loss_is_named_before_the_gradients():
    guard, model = NonFiniteGuard(), model_with_gradients(float("nan"))
    guard.on_before_backward(fake_trainer(), model, torch.tensor(float("inf")))
    with pytest.raises(NonFiniteError, match="the loss is inf"):
        guard.on_before_optimizer_step(fake_trainer(), model, optimizer=None)


def test_skip_policy_drops_the_gradients_and_counts():
    guard, model = NonFiniteGuard(policy="skip"), model_with_gradients(float("nan"))
    guard.on_before_optimizer_step(fake_trainer(), model, optimizer=None)
    assert all(p.grad is None for p in model.parameters())  # the optimizer leaves them as they are
    assert guard.state_dict() == {"skipped_steps": 1}


def test_huge_but_finite_gradients_pass():
    guard, model = NonFiniteGuard(), model_with_gradients(3e38)
    model[1].weight.grad[0, 1] = 3e38  # their sum overflows float32: the exact check decides
    guard.on_before_optimizer_step(fake_trainer(), model, optimizer=None)
    assert all(p.grad is not None for p in model.parameters())


def test_checkpoint_with_non_finite_weights_is_refused():
    guard, module = NonFiniteGuard(), torch.nn.Module()
    module.net = torch.nn.Linear(2, 1)
    # A metric's running maximum is -inf before the first validation: not a weight, allowed.
    metric_state = {"val_acc_best.max_value": torch.tensor(float("-inf"))}
    bad = {"net.weight": torch.tensor([[1.0, float("nan")]]), "net.bias": torch.zeros(1)}
    with pytest.raises(NonFiniteError, match="non-finite weights in net.weight"):
        guard.on_save_checkpoint(fake_trainer(), module, {"state_dict": bad | metric_state})
    good = {"net.weight": torch.ones(1, 2), "net.bias": torch.zeros(1)}
    guard.on_save_checkpoint(fake_trainer(), module, {"state_dict": good | metric_state})
