"""Export: the deployable program computes what the trained network computes, or is not written."""

import subprocess
import sys

import pytest
import torch

from {{ cookiecutter.package_name }}.checkpointing import CheckpointError
from {{ cookiecutter.package_name }}.export import ExportError, export_checkpoint
from {{ cookiecutter.package_name }}.network import MLP

from .conftest import FAST, PROJECT_ROOT, run_folders, train


@pytest.fixture(scope="module")
def best_checkpoint(tmp_path_factory):
    root = tmp_path_factory.mktemp("export")
    train("fit", "--config=configs/default.yaml", f"--trainer.default_root_dir={root}", *FAST)
    [run] = run_folders(root)
    return run / "checkpoints" / "best.ckpt"


def trained_network(ckpt_path) -> MLP:
    checkpoint = torch.load(ckpt_path, weights_only=True)
    sizes = ("num_features", "num_classes", "hidden_dim", "dropout")
    network = MLP(*(checkpoint["hyper_parameters"][name] for name in sizes))
    weights = {k.removeprefix("net."): v for k, v in checkpoint["state_dict"].items()}
    network.load_state_dict({k: v for k, v in weights.items() if k in network.state_dict()})
    return network.eval()


def test_exported_program_gives_the_trained_networks_logits_for_any_batch(best_checkpoint):
    result = subprocess.run(
        [sys.executable, "export.py", str(best_checkpoint)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    exported = best_checkpoint.parents[1] / "model.pt2"
    assert f"to {exported}; largest logit difference" in result.stdout
    program = torch.export.load(exported).module()
    network = trained_network(best_checkpoint)
    for batch_size in (1, 5, 200):  # none of them the batch it was exported with
        x = torch.rand(batch_size, 64)
        torch.testing.assert_close(program(x), network(x), rtol=0, atol=1e-5)


def test_an_export_that_fails_its_check_writes_nothing(best_checkpoint, tmp_path):
    output = tmp_path / "model.pt2"
    with pytest.raises(ExportError, match="nothing was written"):
        export_checkpoint(best_checkpoint, output, tolerance=-1.0)  # no difference is small enough
    assert list(tmp_path.iterdir()) == []


def test_export_refuses_what_it_cannot_use(best_checkpoint, tmp_path):
    with pytest.raises(ExportError, match="must be a .pt2 file"):
        export_checkpoint(best_checkpoint, tmp_path / "model.onnx")
    stray = tmp_path / "checkpoints" / "best.ckpt"
    stray.parent.mkdir()
    stray.write_bytes(best_checkpoint.read_bytes())
    with pytest.raises(CheckpointError, match="not in a run folder beside its config.yaml"):
        export_checkpoint(stray)
