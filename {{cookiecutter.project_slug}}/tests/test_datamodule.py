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
        ({"x": np.full((4, 2), np.nan), "y": np.zeros(4, dtype=int)}, "8 non-finite values"),
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


def test_cli_reports_a_bad_data_file_in_one_paragraph_and_writes_nothing(tmp_path):
    root = tmp_path / "runs"
    result = train(
        "fit",
        "--config=configs/default.yaml",
        f"--trainer.default_root_dir={root}",
        f"--data.data_path={tmp_path / 'missing.npz'}",
        check=False,
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert f"Cannot use data file '{tmp_path / 'missing.npz'}': no such file" in result.stderr
    assert not root.exists()
