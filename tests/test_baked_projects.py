"""The baked project's own test suite passes, for every combination of options that changes code.

`optimization` and `logger` change the generated code: all six combinations run their suite.
The slow tests (marked `slow`: the full default fit held to 95% test accuracy, exact resume,
signals, the NaN guard, manual = automatic, DDP resume and metrics) run on two bakes that between
them cover every code path: the default (automatic, csv) and manual with W&B (the hand-written
loop, and the logger whose resume differs). The other four run everything else: presets, DDP,
torchrun and SLURM launches, errors.
`license` and `ci` only add or remove files (checked for every combination in test_bake.py);
they vary across these six bakes so that each of their values is baked with a running suite too.
"""

import sys

import pytest

from .conftest import baked_project_env, run

ALL_TESTS, FAST_TESTS = [], ["-m", "not slow"]
CODE_COMBINATIONS = [
    ("automatic", "csv", "MIT", "github", ALL_TESTS),
    ("automatic", "tensorboard", "Apache-2.0", "none", FAST_TESTS),
    ("automatic", "wandb", "BSD-3-Clause", "github", FAST_TESTS),
    ("manual", "csv", "none", "none", FAST_TESTS),
    ("manual", "tensorboard", "MIT", "github", FAST_TESTS),
    ("manual", "wandb", "Apache-2.0", "none", ALL_TESTS),
]


@pytest.mark.parametrize(
    ("optimization", "logger", "license", "ci", "selection"),
    CODE_COMBINATIONS,
    ids=lambda value: "all" if value == ALL_TESTS else "fast" if value == FAST_TESTS else value,
)
def test_baked_project_test_suite_passes(bake, optimization, logger, license, ci, selection):
    project = bake(optimization=optimization, logger=logger, license=license, ci=ci)
    result = run(
        sys.executable,
        *["-m", "pytest", "-q", "-p", "no:cacheprovider", *selection],
        cwd=project,
        env=baked_project_env(project),
    )
    print(result.stdout[-3000:])
