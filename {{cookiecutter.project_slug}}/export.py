"""Export a checkpoint for deployment, checked against the trained network.

    python export.py logs/csv/version_0/checkpoints/best.ckpt

Writes ``model.pt2`` (a ``torch.export`` program) in the checkpoint's run folder, after checking
its outputs against the trained network's on the run's test samples. Load it anywhere with
``torch.export.load("model.pt2").module()``: it takes a batch of any size, shaped as the data.
"""

import argparse
import logging
import sys
from pathlib import Path

from {{ cookiecutter.package_name }}.checkpointing import CheckpointError
from {{ cookiecutter.package_name }}.export import ExportError, export_checkpoint


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", type=Path, help="a best.ckpt or last.ckpt in a run folder")
    parser.add_argument("--output", type=Path, help="default: model.pt2 in the run folder")
    parser.add_argument(
        "--tolerance", type=float, default=1e-5, help="largest allowed logit difference"
    )
    args = parser.parse_args()
    sys.argv = sys.argv[:1]  # the run's config goes to the CLI as `args`: Lightning warns of both
    # The Trainer built from the run's config reports the hardware it would train on: not needed.
    logging.getLogger("lightning.pytorch").setLevel(logging.WARNING)
    try:
        output, difference = export_checkpoint(args.checkpoint, args.output, args.tolerance)
    except (CheckpointError, ExportError) as error:
        sys.exit(f"error: {error}")
    print(f"Exported {args.checkpoint} to {output}; largest logit difference {difference:.2g}.")


if __name__ == "__main__":
    main()
