"""Several processes on one CPU machine: Lightning's DDP launcher, torchrun, and SLURM's srun.

The ranks must split the data without repeats, agree with a single process on the same weights,
write logs, checkpoints and config once, and resume exactly, as one process does.
"""

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from lightning.fabric.plugins.environments.lightning import find_free_network_port

from .conftest import (
    FAST,
    PROJECT_ROOT,
    last_checkpoint,
    max_weight_difference,
    read_metrics,
    run_folders,
    train,
)

DDP = [
    "--config=configs/ddp.yaml",
    "--trainer.accelerator=cpu",
    "--trainer.devices=2",
    "--trainer.enable_progress_bar=false",
    "--trainer.enable_model_summary=false",
]
EPOCHS = 2  # of 10 steps per process
DDP_FIT = [
    "fit",
    "--config=configs/default.yaml",
    *DDP,
    f"--trainer.max_epochs={EPOCHS}",
    f"--model.scheduler.init_args.T_max={EPOCHS}",
    "--test_after_fit=false",
]


@pytest.fixture(scope="module")
def ddp_run(tmp_path_factory) -> Path:
    """A two-process run, straight through; returns its root folder."""
    root = tmp_path_factory.mktemp("ddp")
    result = train(*DDP_FIT, f"--trainer.default_root_dir={root}")
    output = result.stdout + result.stderr
    assert output.count("Effective batch: 2 process(es) x 64 (data.batch_size)") == 1  # rank 0
    return root


@pytest.mark.slow
def test_ddp_writes_one_run_folder_and_resumes_exactly(ddp_run, tmp_path):
    [run] = run_folders(ddp_run)
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == ["best.ckpt", "last.ckpt"]
    train(*DDP_FIT, f"--trainer.default_root_dir={tmp_path}", "--trainer.max_epochs=1")
    train(*DDP_FIT, f"--trainer.default_root_dir={tmp_path}", "--ckpt_path=last")
    assert max_weight_difference(last_checkpoint(ddp_run), last_checkpoint(tmp_path)) == 0.0


@pytest.mark.slow
def test_ddp_sigterm_mid_epoch_saves_and_resumes_exactly(ddp_run, tmp_path):
    # The main process gets the signal (`kill -TERM <pid of train.py>`): Lightning's launcher
    # passes it on to the processes it started.
    stop = tmp_path / "stop.yaml"
    stop.write_text(
        "trainer:\n  callbacks:\n    - class_path: tests.signal_at_step.SignalAtStep\n"
        "      init_args:\n        step: 15\n        rank: 0\n"
    )
    root = tmp_path / "runs"
    stopped = train(*DDP_FIT, f"--trainer.default_root_dir={root}", f"--config={stop}", check=False)
    assert stopped.returncode == 143
    assert "Traceback" not in stopped.stderr
    checkpoint = torch.load(last_checkpoint(root), weights_only=True)
    assert (checkpoint["epoch"], checkpoint["global_step"]) == (1, 15)
    train(*DDP_FIT, f"--trainer.default_root_dir={root}", "--ckpt_path=last")
    assert max_weight_difference(last_checkpoint(ddp_run), last_checkpoint(root)) == 0.0


@pytest.mark.slow
def test_ddp_validation_and_prediction_match_one_process(ddp_run, tmp_path):
    best = last_checkpoint(ddp_run).with_name("best.ckpt")
    # 20% of 1797 samples: 359 for validation, an odd number that two processes cannot split
    # evenly; a padding sampler would count one sample twice.
    args = ["--config=configs/default.yaml", f"--ckpt_path={best}", "--data.val_fraction=0.2"]
    results = {}
    for name, extra in [("one", []), ("two", DDP)]:
        root = tmp_path / name
        train("validate", *args, *extra, f"--trainer.default_root_dir={root}")
        train("predict", *args, *extra, f"--trainer.default_root_dir={root}")
        validated, predicted = run_folders(root)
        with open(predicted / "predictions.csv") as file:
            predictions = [row["prediction"] for row in csv.DictReader(file)]
        results[name] = (read_metrics(validated, "validate")["val/acc"], predictions)
    assert results["two"] == results["one"]
    assert len(results["one"][1]) == 270  # the test split: every sample once, in order


def test_torchrun_starts_the_processes(tmp_path):
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    command += ["train.py", "fit", "--config=configs/default.yaml", *DDP, *FAST]
    command += [f"--trainer.default_root_dir={tmp_path}"]
    result = run_ranks([command], {})
    assert result[0].count("Effective batch: 2 process(es)") == 1
    [run] = run_folders(tmp_path)
    assert (run / "checkpoints" / "last.ckpt").is_file()


def test_slurm_script_srun_line_runs_with_slurms_variables(tmp_path):
    """What srun does for one node with two tasks: the same command, once per rank."""
    script = (PROJECT_ROOT / "scripts" / "slurm.sbatch").read_text()
    [srun_line] = [line for line in script.splitlines() if line.startswith("srun ")]
    command = srun_line.removeprefix("srun ").replace('"${RESUME[@]}" ', "")
    extra = ["--trainer.accelerator=cpu", *FAST, "--trainer.max_epochs=2"]
    slurm = {
        "SLURM_JOB_ID": "4242",
        "SLURM_JOB_NAME": "train",
        "SLURM_NNODES": "1",
        "SLURM_NODEID": "0",
        "SLURM_NODELIST": "localhost",
        "SLURM_NTASKS": "2",
        "SLURM_NTASKS_PER_NODE": "2",
        "SLURM_SUBMIT_DIR": str(PROJECT_ROOT),
        # Lightning derives the port from SLURM_JOB_ID: suites running at the same moment (the
        # template's CI runs several bakes in parallel) would meet on it. A free one, as srun's
        # jobs have distinct ids.
        "MASTER_PORT": str(find_free_network_port()),
    }
    ranks = [
        ["bash", "-c", command, "slurm", *extra, f"--trainer.default_root_dir={tmp_path}"]
        for _ in range(2)
    ]
    outputs = run_ranks(ranks, slurm, per_rank=lambda r: {"SLURM_PROCID": r, "SLURM_LOCALID": r})
    assert "MEMBER: 2/2" in "".join(outputs)
    [run] = run_folders(tmp_path)
    assert torch.load(run / "checkpoints" / "last.ckpt", weights_only=True)["global_step"] == 6


def run_ranks(commands: list[list[str]], env: dict[str, str], per_rank=None) -> list[str]:
    """Start the commands together (as a launcher does), wait for all, return their outputs."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"  # `python`: this one
    base = {**os.environ, "PATH": path, "WANDB_MODE": "offline", "WANDB_SILENT": "true", **env}
    processes = [
        subprocess.Popen(
            command,
            cwd=PROJECT_ROOT,
            env={**base, **{k: str(v) for k, v in (per_rank(rank) if per_rank else {}).items()}},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for rank, command in enumerate(commands)
    ]
    try:
        outputs = [process.communicate(timeout=600)[0] for process in processes]
    finally:
        for process in processes:
            process.kill()  # after a timeout or a failure: leave no process waiting for its peer
    for process, output in zip(processes, outputs, strict=True):
        assert process.returncode == 0, output[-4000:]
    return outputs
