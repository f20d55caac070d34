"""The baked project's benchmarks run, in their short mode, and print what users read.

Only the output's shape and the sides' agreement are checked: timings belong to the benchmark on
a quiet machine, not to CI. The parity run covers both training-step variants (automatic and
manual), whose plain-loop twin must reach the same validation accuracy, and every logger (W&B
prints to stdout after the run's figures).
"""

import re
import subprocess
import sys

import pytest

from .conftest import baked_project_env, run

NUMBER = r"-?\d+\.\d+"
SIDES = ("lightning", "plain")


@pytest.mark.parametrize(
    ("optimization", "logger"),
    [("automatic", "csv"), ("manual", "wandb"), ("automatic", "tensorboard")],
)
def test_parity_benchmark_short_mode_prints_the_table_and_the_ratio(bake, optimization, logger):
    project = bake(optimization=optimization, logger=logger)
    result = run(
        *[sys.executable, "benchmarks/parity.py", "--repeats", "1", "--trainer.max_epochs=1"],
        cwd=project,
        env=baked_project_env(project),
    )
    lines = result.stdout.strip().splitlines()
    assert re.fullmatch(rf"repetition 1/1: lightning {NUMBER} s, plain {NUMBER} s", lines[0])
    rows = {}
    for fields in map(str.split, lines):
        if fields and fields[0] in SIDES:
            rows[fields[0]] = fields
    assert rows.keys() == set(SIDES)
    # side, median s, min s, samples/s, peak MiB, val/acc: the same work gives the same accuracy
    assert rows["lightning"][5] == rows["plain"][5]
    assert float(rows["plain"][5]) > 0.5  # one epoch on the digits is well above chance
    assert re.search(r"data loading: \d+\.\d% of the plain loop's time", result.stdout)
    assert re.fullmatch(rf"ratio {NUMBER}", lines[-1])


@pytest.mark.parametrize(
    ("flag", "refusal"),
    [
        ("accumulate_grad_batches=2", "trainer.accumulate_grad_batches=1 only, not 2"),
        ("limit_train_batches=5", "trainer.limit_train_batches=1.0 only, not 5"),
    ],
)
def test_parity_benchmark_refuses_what_its_plain_loop_does_not_do(bake, flag, refusal):
    project = bake()
    result = run_failing(
        sys.executable,
        "benchmarks/parity.py",
        *["--repeats", "1", "--trainer.max_epochs=1", f"--trainer.{flag}"],
        project=project,
    )
    assert f"the plain loop supports {refusal}" in result


def test_startup_benchmark_short_mode_prints_the_extra_time(bake):
    project = bake()
    result = run(
        sys.executable,
        *["benchmarks/startup.py", "--repeats", "1"],
        cwd=project,
        env=baked_project_env(project),
    )
    lines = result.stdout.strip().splitlines()
    assert re.fullmatch(rf"import lightning +median {NUMBER} s +\(min {NUMBER} s\)", lines[0])
    assert re.fullmatch(rf"train.py --help +median {NUMBER} s +\(min {NUMBER} s\)", lines[1])
    assert re.fullmatch(rf"startup_extra {NUMBER}", lines[-1])


def run_failing(*command: str, project) -> str:
    """Run a command that must fail; return its standard error."""
    result = subprocess.run(
        command, cwd=project, env=baked_project_env(project), capture_output=True, text=True
    )
    assert result.returncode != 0, result.stdout[-2000:]
    return result.stderr
