"""Export a trained checkpoint to a deployable artifact, checked against the eager network."""

import tempfile
from pathlib import Path

import torch

from {{ cookiecutter.package_name }}.checkpointing import CheckpointError, check_checkpoint_fits
from {{ cookiecutter.package_name }}.cli import create_cli


class ExportError(RuntimeError):
    """The export cannot be written, or does not compute what the trained network computes."""


def export_checkpoint(
    ckpt_path: Path, output: Path | None = None, tolerance: float = 1e-5
) -> tuple[Path, float]:
    """Export the network of a run's checkpoint with ``torch.export``; return the file and the
    largest difference from the eager network's logits on the run's test samples.

    The run folder's ``config.yaml`` builds the network and the data, as at training time. The
    exported program takes any batch size, runs without this project's code (``torch.export.load
    (path).module()(x)``), and is written only when its logits match the eager network's within
    ``tolerance``, on a full test batch and on a single sample.
    """
    run_folder = Path(ckpt_path).resolve().parents[1]  # <run>/checkpoints/<file>.ckpt
    output = Path(output) if output is not None else run_folder / "model.pt2"
    if output.suffix != ".pt2":
        raise ExportError(f"The output must be a .pt2 file (torch.export's archive), not {output}.")
    config = run_folder / "config.yaml"
    if not config.is_file():
        raise CheckpointError(
            f"'{ckpt_path}' is not in a run folder beside its config.yaml ({config} is missing), "
            "which export needs to build the network and the data as they were trained."
        )
    with tempfile.TemporaryDirectory() as scratch:  # nothing of the Trainer's lands in the run
        args = ["--config", str(config), "--trainer.logger=false"]
        cli = create_cli([*args, f"--trainer.default_root_dir={scratch}"], run=False)
    model, data = cli.model, cli.datamodule
    checkpoint = check_checkpoint_fits(model, ckpt_path)  # loaded once: checked, then used
    model.load_state_dict(checkpoint["state_dict"])
    network = model.net.eval()
    x, _ = next(iter(data.test_dataloader()))  # (batch, *features), as the network was trained

    batch = torch.export.Dim("batch")
    shapes = ({0: batch},)
    exported = torch.export.export(network, (x,), dynamic_shapes=shapes)
    partial = output.with_name(f".{output.stem}.partial.pt2")  # renamed into place when checked
    try:
        torch.export.save(exported, partial)
        program = torch.export.load(partial).module()
        with torch.no_grad():
            difference = max(
                (program(inputs) - network(inputs)).abs().max().item() for inputs in (x, x[:1])
            )
        if difference > tolerance:
            raise ExportError(
                f"The exported network's logits differ from the checkpoint's by {difference:.3g} "
                f"(more than {tolerance:g}) on the test samples; nothing was written."
            )
        partial.replace(output)
    finally:
        partial.unlink(missing_ok=True)
    return output, difference
