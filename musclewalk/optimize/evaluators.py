"""Where evaluations run: in this process ("serial"), in a persistent pool of worker processes
("process", default: one per core), or on a Dask cluster ("dask", --scheduler ADDRESS). Each
worker process loads its model once and keeps it (see evaluate.evaluate_task). Results come back
in submission order, so a seed reproduces the same run whatever the worker count."""

from __future__ import annotations

import multiprocessing as mp
import os
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Mapping, Sequence

from .evaluate import EvaluationTask, evaluate_task, failed_result


def _die_with_parent(parent_pid: int) -> None:
    """Worker initializer: on Linux, the kernel kills the worker when the optimizer process ends
    (also by SIGKILL), so no orphan keeps simulating a candidate nobody waits for."""
    import sys

    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except OSError:
        return
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)


class SerialEvaluator:
    def map(self, task: EvaluationTask, values: Sequence[Mapping]) -> list[dict]:
        return [evaluate_task(task, v) for v in values]

    def close(self) -> None:
        pass


class ProcessEvaluator:
    """Persistent pool of spawned worker processes. A worker that dies (OpenSim can abort the
    process on a pathological model) breaks the pool: it is restarted and the unfinished
    candidates are evaluated again; a candidate that breaks the pool twice is a failure.

    Wall-clock backstop: when no candidate finishes for ``backstop`` seconds, a worker has stopped
    making progress (the CPU-time limit of each evaluation is checked between control steps, so it
    cannot end a call into OpenSim that never returns). The workers are killed and the candidates
    that were running are evaluated again, one at a time; one that is stuck twice is a failure. The
    backstop is far above any evaluation's CPU limit, so it never decides a result on a merely
    busy machine."""

    def __init__(self, workers: int, backstop: float = 3600.0):
        self.workers = workers or os.cpu_count() or 1
        self.backstop = backstop
        self.pool = self._new_pool()

    def _new_pool(self):
        return ProcessPoolExecutor(
            self.workers,
            mp_context=mp.get_context("spawn"),
            initializer=_die_with_parent,
            initargs=(os.getpid(),),
        )

    def _restart(self, kill: bool = False) -> None:
        if kill:
            for proc in list(getattr(self.pool, "_processes", {}).values()):
                proc.kill()
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.pool = self._new_pool()

    def _batch(self, task, values, indices, results) -> list[int]:
        """Evaluate ``indices`` in the pool; returns the ones to blame for a broken or stuck pool
        (their results stay unset)."""
        try:
            futures = {self.pool.submit(evaluate_task, task, values[i]): i for i in indices}
        except BrokenProcessPool:  # a worker died between generations
            self._restart()
            futures = {self.pool.submit(evaluate_task, task, values[i]): i for i in indices}
        waiting, suspects = set(futures), []
        while waiting:
            done, waiting = wait(waiting, timeout=self.backstop, return_when=FIRST_COMPLETED)
            if not done:
                running = [futures[f] for f in waiting if f.running()]
                queued = [futures[f] for f in waiting if not f.running()]
                self._restart(kill=True)
                if not running:
                    return suspects + queued
                return suspects + running + self._batch(task, values, queued, results)
            for f in done:
                try:
                    results[futures[f]] = f.result()
                except BrokenProcessPool:
                    suspects.append(futures[f])
        if suspects:
            self._restart()
        return suspects

    def map(self, task, values):
        results: list = [None] * len(values)
        suspects = self._batch(task, values, list(range(len(values))), results)
        # the suspects one at a time, so that only the culprit is penalized
        for i in suspects:
            if results[i] is not None:
                continue
            if self._batch(task, values, [i], results):
                results[i] = failed_result(
                    "worker process died or returned no result within the wall-clock backstop of "
                    f"{self.backstop:g} s, twice",
                    getattr(task, "objective", None),
                )
        return results

    def close(self) -> None:
        import sys

        if sys.exc_info()[0] is not None:  # interrupted or failed: do not wait for the workers
            for proc in list(getattr(self.pool, "_processes", {}).values()):
                proc.kill()
            self.pool.shutdown(wait=False, cancel_futures=True)
        else:
            self.pool.shutdown(wait=True)


class DaskEvaluator:
    def __init__(self, scheduler):
        try:
            from dask.distributed import Client
        except ImportError:
            raise ValueError(
                "the dask evaluator needs 'dask[distributed]' (pip install 'musclewalk[dask]')"
            ) from None
        self.client = scheduler if hasattr(scheduler, "submit") else Client(scheduler)
        self._own = not hasattr(scheduler, "submit")

    def map(self, task, values):
        futures = [self.client.submit(evaluate_task, task, v, pure=False) for v in values]
        return self.client.gather(futures)

    def close(self) -> None:
        if self._own:
            self.client.close()


def make_evaluator(kind: str, workers: int = 0, scheduler=None, backstop: float = 3600.0):
    if kind == "serial" or (kind == "process" and workers == 1):
        return SerialEvaluator()
    if kind == "process":
        return ProcessEvaluator(workers, backstop)
    if kind == "dask":
        if scheduler is None:
            raise ValueError("--evaluator dask needs --scheduler ADDRESS")
        return DaskEvaluator(scheduler)
    raise ValueError(f"unknown evaluator {kind!r} (serial, process, dask)")
