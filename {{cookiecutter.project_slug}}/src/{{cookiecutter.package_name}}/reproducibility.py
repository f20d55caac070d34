"""Reproducibility: the same seed gives the same weights, bit for bit, also across a resume.

Lightning's checkpoints hold the model, optimizer, scheduler and loop state, but not where the
random number generators and the shuffling stood, so a resumed run would draw other dropout masks
and another data order than the run it continues. Two rules close that gap, and both depend on
nothing but numbers a checkpoint restores:

- the training order of each epoch is a function of (seed, epoch): ``EpochSeededSampler``;
- the random state at each training batch is a function of (seed, rank, epoch, batch):
  ``ExactResume`` re-seeds torch, numpy and ``random`` before every batch.

A run resumed mid-epoch also has to skip the samples it already trained on; ``ExactResume`` tells
the sampler how many. Random work in DataLoader worker processes is not covered: its seeds come
from the global generator when an epoch's workers start. The example loads in the main process.
"""

import os
import random
from collections.abc import Iterator

import lightning as L
import numpy as np
import torch
from lightning.pytorch.utilities import rank_zero_warn
from torch.utils.data import DistributedSampler


def run_seed() -> int | None:
    """The run's seed, as set by ``seed_everything`` (``None`` when seeding is off)."""
    seed = os.environ.get("PL_GLOBAL_SEED")  # set by lightning's seed_everything, for every rank
    return None if seed is None else int(seed)


class EpochSeededSampler(DistributedSampler):
    """Shuffles the training set in an order that depends only on (seed, epoch).

    Lightning calls ``set_epoch`` before every epoch, so the order needs no state of its own. The
    same class serves one process (``num_replicas=1``) and DDP (each rank gets every
    ``num_replicas``-th sample of the shuffled order).
    """

    def __init__(self, dataset, num_replicas: int, rank: int, seed: int) -> None:
        super().__init__(dataset, num_replicas=num_replicas, rank=rank, shuffle=True, seed=seed)
        self.samples_to_skip = 0

    def skip_once(self, num_samples: int) -> None:
        """Leave out the first ``num_samples`` of the next epoch's order: they were trained on."""
        self.samples_to_skip = num_samples

    def __iter__(self) -> Iterator[int]:
        indices = list(super().__iter__())
        skip, self.samples_to_skip = self.samples_to_skip, 0
        return iter(indices[skip:])


class ExactResume(L.Callback):
    """Makes a resumed run continue exactly as the uninterrupted run would have."""

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if run_seed() is None:
            rank_zero_warn("seed_everything is off: the run cannot be repeated or resumed exactly.")
        # When resuming mid-epoch, Lightning continues the batch count but a plain DataLoader
        # starts the epoch's order from its beginning: skip what the checkpoint already trained.
        # The epoch's iterator is created after this hook, so the skip applies to that epoch.
        completed = trainer.fit_loop.epoch_loop.batch_progress.current.completed
        if 0 < completed < trainer.num_training_batches:
            sampler = trainer.train_dataloader.sampler
            if not isinstance(sampler, EpochSeededSampler):
                raise TypeError(
                    "Resuming mid-epoch needs the training DataLoader to use EpochSeededSampler, "
                    f"not {type(sampler).__name__}."
                )
            sampler.skip_once(completed * trainer.train_dataloader.batch_size)

    def on_train_batch_start(
        self, trainer: L.Trainer, pl_module: L.LightningModule, batch, batch_idx: int
    ) -> None:
        seed = run_seed()
        if seed is not None:
            seed_batch(seed, trainer.global_rank, trainer.current_epoch, batch_idx)


def seed_batch(seed: int, rank: int, epoch: int, batch_idx: int) -> None:
    """Seed torch, numpy and ``random`` from a training batch's coordinates.

    What the batch draws (dropout masks, ...) is then the same whether or not the run was
    interrupted before it. The rank makes each DDP process draw its own masks.
    """
    entropy = [seed, rank, epoch, batch_idx]
    batch_seed = int(np.random.SeedSequence(entropy).generate_state(1)[0])
    # Not torch.manual_seed: where CUDA is not in use it queues the seed for CUDA with a stack
    # trace, 0.34 ms a batch here. The CPU generator always; a GPU's only when it is in use.
    torch.default_generator.manual_seed(batch_seed)
    if torch.cuda.is_initialized():
        torch.cuda.manual_seed_all(batch_seed)
    if torch.backends.mps.is_available():
        torch.mps.manual_seed(batch_seed)
    np.random.seed(batch_seed)
    random.seed(batch_seed)
