"""Data: load arrays, split them reproducibly, and serve them as DataLoaders."""

from pathlib import Path

import lightning as L
import numpy as np
import torch
from lightning.pytorch.overrides.distributed import UnrepeatedDistributedSampler
from torch.utils.data import DataLoader, Sampler, Subset, TensorDataset

from {{ cookiecutter.package_name }}.reproducibility import EpochSeededSampler, run_seed


class DataFileError(ValueError):
    """The data (a file the user pointed at, or the bundled set) cannot be used with the data.*
    settings; the message says why."""


def load_digits_arrays() -> tuple[np.ndarray, np.ndarray]:
    """The 8x8 handwritten digits bundled with scikit-learn: no download needed."""
    from sklearn.datasets import load_digits  # imported here: only this data set needs it

    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)  # (N, 64): 8x8 pixels scaled to [0, 1]
    return x, digits.target.astype(np.int64)


def load_npz_arrays(path: Path, num_classes: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Read arrays ``x`` (features) and ``y`` (integer labels 0..C-1) from an ``.npz`` file.

    With ``num_classes`` given, labels from ``num_classes`` upwards are refused.
    """

    def fail(problem: str) -> DataFileError:
        return DataFileError(
            f"Cannot use data file '{path}': {problem}. A data file is an .npz archive with an "
            "array 'x' of finite numbers (one row per sample) and an array 'y' of integer "
            "class labels 0..C-1 of the same length, written e.g. with "
            "numpy.savez('data.npz', x=x, y=y)."
        )

    if not path.is_file():
        raise fail("no such file")
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except Exception as error:  # numpy raises several types for a corrupt archive
        raise fail(f"it is not a readable .npz archive ({type(error).__name__}: {error})") from None
    if not {"x", "y"} <= arrays.keys():
        raise fail(f"it must hold arrays 'x' and 'y', found {sorted(arrays)}")
    x, y = arrays["x"], arrays["y"]
    if x.ndim < 2 or y.ndim != 1 or len(x) != len(y):
        raise fail(f"'x' has shape {x.shape} and 'y' {y.shape}; expected (N, ...) and (N,)")
    if len(y) == 0:
        raise fail("it holds no samples")
    if not (np.issubdtype(x.dtype, np.floating) or np.issubdtype(x.dtype, np.integer)):
        raise fail(f"'x' has dtype {x.dtype}, expected floats or integers")
    if not np.issubdtype(y.dtype, np.integer):
        raise fail(f"'y' has dtype {y.dtype}, expected integers")
    with np.errstate(over="ignore"):  # values beyond float32's range become Inf: refused below
        x = x.astype(np.float32)
    if not np.isfinite(x).all():
        count = np.size(x) - np.isfinite(x).sum()
        raise fail(f"'x' holds {count} values that are NaN, Inf or beyond float32's range")
    if y.min() < 0:
        raise fail(f"'y' holds the negative label {y.min()}; labels must be 0..C-1")
    if num_classes is not None and y.max() >= num_classes:
        raise fail(
            f"'y' holds the label {y.max()}, out of range for data.num_classes={num_classes} "
            f"(labels 0..{num_classes - 1})"
        )
    return x, y.astype(np.int64)


class ClassificationDataModule(L.LightningDataModule):
    """Serves a classification data set split once, reproducibly, into train / val / test.

    Args:
        data_path: An ``.npz`` file with arrays ``x`` and ``y``; ``None`` uses the bundled digits.
        num_classes: Number of classes; ``None`` takes the largest label + 1 in the data. Set it
            when some class may be absent from a file, or to refuse labels out of range.
        batch_size: Samples per batch and per device.
        val_fraction: Share of the samples held out for validation.
        test_fraction: Share of the samples held out for the final test.
        split_seed: Seed of the split; fixed apart from the training seed so that every run is
            scored on the same test samples.
        num_workers: DataLoader worker processes; 0 loads in the main process.
        pin_memory: Page-locked host memory for faster copies to a GPU; applied only when
            training on a CUDA device (on a CPU it costs and gives nothing).
        persistent_workers: Keep the worker processes between epochs rather than start them
            anew; applies when ``num_workers > 0``.
    """

    def __init__(
        self,
        data_path: Path | None = None,
        num_classes: int | None = None,
        batch_size: int = 64,
        val_fraction: float = 0.15,
        test_fraction: float = 0.15,
        split_seed: int = 0,
        num_workers: int = 0,
        pin_memory: bool = True,
        persistent_workers: bool = True,
    ) -> None:
        super().__init__()
        if not (val_fraction > 0 and test_fraction > 0 and val_fraction + test_fraction < 1):
            raise DataFileError(
                f"data.val_fraction={val_fraction} and data.test_fraction={test_fraction} must be "
                "positive and sum to less than 1."
            )
        # num_classes is logged by the model, which gets it from here (self.num_classes).
        self.save_hyperparameters(ignore=["num_classes"])
        # Loaded here, not in setup(), so that the model's input and output sizes are known when
        # the CLI builds it, and a bad file is reported before anything is written.
        if data_path is None:
            x, y = load_digits_arrays()
            if num_classes is not None and y.max() >= num_classes:
                raise DataFileError(
                    f"data.num_classes={num_classes} is too few for the bundled digits: their "
                    f"labels go up to {y.max()}."
                )
        else:
            x, y = load_npz_arrays(Path(data_path), num_classes)
        self.dataset = TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
        self.num_features = int(np.prod(x.shape[1:]))
        self.num_classes = num_classes or int(y.max()) + 1
        self.train_set, self.val_set, self.test_set = self._split(len(y))

    def _split(self, num_samples: int) -> tuple[Subset, Subset, Subset]:
        generator = torch.Generator().manual_seed(self.hparams.split_seed)
        order = torch.randperm(num_samples, generator=generator).tolist()
        num_val = round(num_samples * self.hparams.val_fraction)
        num_test = round(num_samples * self.hparams.test_fraction)
        if min(num_val, num_test, num_samples - num_val - num_test) < 1:
            raise DataFileError(
                f"{num_samples} samples are too few to split into train, val and test sets."
            )
        val, test, train = np.split(order, [num_val, num_val + num_test])
        return Subset(self.dataset, train), Subset(self.dataset, val), Subset(self.dataset, test)

    def _loader(self, dataset: Subset, sampler: Sampler | None = None) -> DataLoader:
        on_gpu = self.trainer is not None and self.trainer.strategy.root_device.type == "cuda"
        return DataLoader(
            dataset,
            batch_size=self.hparams.batch_size,
            sampler=sampler,
            num_workers=self.hparams.num_workers,
            pin_memory=self.hparams.pin_memory and on_gpu,
            persistent_workers=self.hparams.persistent_workers and self.hparams.num_workers > 0,
        )

    def train_dataloader(self) -> DataLoader:
        # Shuffled in an order that depends only on (seed, epoch), split across DDP processes:
        # what makes a resumed run draw the same batches as an uninterrupted one.
        trainer = self.trainer  # None when the data module is used on its own
        sampler = EpochSeededSampler(
            self.train_set,
            num_replicas=trainer.world_size if trainer else 1,
            rank=trainer.global_rank if trainer else 0,
            seed=run_seed() or 0,
        )
        return self._loader(self.train_set, sampler)

    def _evaluation_loader(self, dataset: Subset) -> DataLoader:
        """Every sample exactly once over all processes, so metrics count none twice.

        Lightning's default DDP sampler pads the last batch with repeated samples; this one gives
        some processes one sample fewer instead. torchmetrics and ``sync_dist`` then combine the
        processes' sums, so ``val/acc`` under DDP equals a single process's on the same weights.
        """
        trainer = self.trainer
        if trainer is None or trainer.world_size == 1:
            return self._loader(dataset)
        sampler = UnrepeatedDistributedSampler(
            dataset, num_replicas=trainer.world_size, rank=trainer.global_rank, shuffle=False
        )
        return self._loader(dataset, sampler)

    def val_dataloader(self) -> DataLoader:
        return self._evaluation_loader(self.val_set)

    def test_dataloader(self) -> DataLoader:
        return self._evaluation_loader(self.test_set)

    def predict_dataloader(self) -> DataLoader:
        return self._loader(self.test_set)  # under DDP Lightning splits it without repeats
