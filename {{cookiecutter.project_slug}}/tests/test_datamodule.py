"""The data module: reproducible splits, the user's own data, and clear errors for bad files."""

from pathlib import Path

import numpy as np
import pytest

from {{ cookiecutter.package_name }}.datamodule import ClassificationDataModule, DataFileError

from .conftest import train


def test_split_is_disjoint_complete_and_repeatable():
    first = ClassificationDataModule(split_seed=3)
    second = ClassificationDataModule(split_seed=3)
    splits = [first.train_set.indices, first.val_set.indices, first.test_set.indices]
    assert sorted(np.concatenate(splits).tolist()) == list(range(len(first.dataset)))
    assert [len(split) for split in splits] == [1257, 270, 270]
    assert list(second.test_set.indices) == list(first.test_set.indices)
    other = ClassificationDataModule(split_seed=4)
    assert list(other.test_set.indices) != list(first.test_set.indices)


def test_users_npz_file_sets_input_and_class_sizes(npz_file: Path):
    data = ClassificationDataModule(data_path=npz_file)
    assert (data.num_features, data.num_classes) == (2, 3)
    x, y = next(iter(data.train_dataloader()))
    assert x.shape == (64, 2) and y.dtype.is_floating_point is False


def write_npz(path: Path, **arrays) -> Path:
    np.savez(path, **arrays)
    return path


@pytest.mark.parametrize(
    ("arrays", "problem"),
    [
        ({"x": np.zeros((4, 2))}, "must hold arrays 'x' and 'y'"),
        ({"x": np.zeros((4, 2)), "y": np.zeros(3, dtype=int)}, "expected (N, ...) and (N,)"),
        ({"x": np.zeros((4, 2)), "y": np.zeros(4)}, "'y' has dtype float64"),
        ({"x": np.array([["a", "b"]] * 4), "y": np.zeros(4, dtype=int)}, "'x' has dtype <U1"),
        ({"x": np.full((4, 2), np.nan), "y": np.zeros(4, dtype=int)}, "8 values that are NaN"),
        # Finite as float64, Inf as float32, which the network trains in.
        ({"x": np.full((4, 2), 1e300), "y": np.zeros(4, dtype=int)}, "8 values that are NaN"),
        ({"x": np.zeros((4, 2)), "y": np.array([0, 1, -1, 0])}, "negative label -1"),
        ({"x": np.zeros((0, 2)), "y": np.zeros(0, dtype=int)}, "holds no samples"),
    ],
)
def test_bad_npz_content_is_refused_with_the_reason(tmp_path, arrays, problem):
    path = write_npz(tmp_path / "bad.npz", **arrays)
    with pytest.raises(DataFileError) as error:
        ClassificationDataModule(data_path=path)
    assert str(path) in str(error.value)
    assert problem in str(error.value)


def test_missing_or_unreadable_file_is_refused(tmp_path):
    with pytest.raises(DataFileError, match="no such file"):
        ClassificationDataModule(data_path=tmp_path / "missing.npz")
    not_npz = tmp_path / "notes.npz"
    not_npz.write_text("not an archive")
    with pytest.raises(DataFileError, match="not a readable .npz archive"):
        ClassificationDataModule(data_path=not_npz)


def test_too_few_samples_to_split_is_refused(tmp_path):
    path = write_npz(tmp_path / "tiny.npz", x=np.zeros((3, 2)), y=np.array([0, 1, 0]))
    with pytest.raises(DataFileError, match="too few to split"):
        ClassificationDataModule(data_path=path)


def test_labels_beyond_the_configured_classes_are_refused(tmp_path):
    path = write_npz(tmp_path / "labels.npz", x=np.zeros((4, 2)), y=np.array([0, 1, 2, 3]))
    with pytest.raises(DataFileError, match="label 3, out of range for data.num_classes=3"):
        ClassificationDataModule(data_path=path, num_classes=3)
    with pytest.raises(DataFileError, match="num_classes=9 is too few for the bundled digits"):
        ClassificationDataModule(num_classes=9)


@pytest.mark.parametrize(("val_fraction", "test_fraction"), [(0.0, 0.2), (0.5, 0.5), (0.9, 0.2)])
def test_split_fractions_that_leave_no_training_set_are_refused(val_fraction, test_fraction):
    with pytest.raises(DataFileError, match=f"data.val_fraction={val_fraction} and"):
        ClassificationDataModule(val_fraction=val_fraction, test_fraction=test_fraction)


BAD_FILES = {  # what the file holds -> (extra arguments, the problem the error must name)
    "missing": ([], "no such file"),
    "not an npz": ([], "it is not a readable .npz archive"),
    "no y": ([], "it must hold arrays 'x' and 'y', found ['x']"),
    "lengths differ": ([], "'x' has shape (10, 2) and 'y' (9,)"),
    "float labels": ([], "'y' has dtype float64, expected integers"),
    "labels out of range": (["--data.num_classes=3"], "'y' holds the label 9, out of range"),
}


def write_bad_file(path: Path, kind: str) -> None:
    x, y = np.zeros((10, 2)), np.arange(10)
    if kind == "not an npz":
        path.write_text("a,b\n1,2\n")
    elif kind == "no y":
        np.savez(path, x=x)
    elif kind == "lengths differ":
        np.savez(path, x=x, y=y[:9])
    elif kind == "float labels":
        np.savez(path, x=x, y=y.astype(float))
    elif kind == "labels out of range":
        np.savez(path, x=x, y=y)


@pytest.mark.parametrize(
    "kind", [pytest.param(k, marks=[] if k == "missing" else pytest.mark.slow) for k in BAD_FILES]
)
def test_cli_reports_a_bad_data_file_in_one_paragraph_and_writes_nothing(tmp_path, kind):
    extra_args, problem = BAD_FILES[kind]
    path = tmp_path / "data.npz"
    write_bad_file(path, kind)
    root = tmp_path / "runs"
    result = train(
        "fit",
        "--config=configs/default.yaml",
        f"--trainer.default_root_dir={root}",
        f"--data.data_path={path}",
        *extra_args,
        check=False,
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    [message] = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert f"error: Cannot use data file '{path}': {problem}" in message
    assert not root.exists()
