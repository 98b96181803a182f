"""Where evaluations run: in this process ("serial"), in a persistent pool of worker processes
("process", default: one per core), or on a Dask cluster ("dask", --scheduler ADDRESS). Each
worker process loads its model once and keeps it (see evaluate.evaluate_task). Results come back
in submission order, so a seed reproduces the same run whatever the worker count."""
from __future__ import annotations

import multiprocessing as mp
import os
from typing import Mapping, Sequence

from .evaluate import EvaluationTask, evaluate_task


class SerialEvaluator:
    def map(self, task: EvaluationTask, values: Sequence[Mapping]) -> list[dict]:
        return [evaluate_task(task, v) for v in values]

    def close(self) -> None:
        pass


class ProcessEvaluator:
    def __init__(self, workers: int):
        self.workers = workers or os.cpu_count() or 1
        # spawn: workers start clean (no OpenSim state inherited from the parent)
        self.pool = mp.get_context("spawn").Pool(self.workers, maxtasksperchild=None)

    def map(self, task, values):
        return self.pool.starmap(evaluate_task, [(task, v) for v in values], chunksize=1)

    def close(self) -> None:
        self.pool.close()
        self.pool.join()


class DaskEvaluator:
    def __init__(self, scheduler):
        try:
            from dask.distributed import Client
        except ImportError:
            raise ValueError("the dask evaluator needs 'dask[distributed]' "
                             "(pip install 'musclewalk[dask]')") from None
        self.client = scheduler if hasattr(scheduler, "submit") else Client(scheduler)
        self._own = not hasattr(scheduler, "submit")

    def map(self, task, values):
        futures = [self.client.submit(evaluate_task, task, v, pure=False) for v in values]
        return self.client.gather(futures)

    def close(self) -> None:
        if self._own:
            self.client.close()


def make_evaluator(kind: str, workers: int = 0, scheduler=None):
    if kind == "serial" or (kind == "process" and workers == 1):
        return SerialEvaluator()
    if kind == "process":
        return ProcessEvaluator(workers)
    if kind == "dask":
        if scheduler is None:
            raise ValueError("--evaluator dask needs --scheduler ADDRESS")
        return DaskEvaluator(scheduler)
    raise ValueError(f"unknown evaluator {kind!r} (serial, process, dask)")
