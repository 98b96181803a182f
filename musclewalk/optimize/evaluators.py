"""Where evaluations run: in this process ("serial"), in a persistent pool of worker processes
("process", default: one per core), or on a Dask cluster ("dask", --scheduler ADDRESS). Each
worker process loads its model once and keeps it (see evaluate.evaluate_task). Results come back
in submission order, so a seed reproduces the same run whatever the worker count."""
from __future__ import annotations

import multiprocessing as mp
import os
from concurrent.futures import ProcessPoolExecutor
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
        libc.prctl(1, int(signal.SIGKILL))       # PR_SET_PDEATHSIG
    except OSError:
        return
    if os.getppid() != parent_pid:               # the parent died before prctl took effect
        os._exit(1)


class SerialEvaluator:
    def map(self, task: EvaluationTask, values: Sequence[Mapping]) -> list[dict]:
        return [evaluate_task(task, v) for v in values]

    def close(self) -> None:
        pass


class ProcessEvaluator:
    """Persistent pool of spawned worker processes. A worker that dies (OpenSim can abort the
    process on a pathological model) breaks the pool: it is restarted and the unfinished
    candidates are evaluated again; a candidate that breaks the pool twice is a failure."""

    def __init__(self, workers: int):
        self.workers = workers or os.cpu_count() or 1
        self.pool = self._new_pool()

    def _new_pool(self):
        return ProcessPoolExecutor(self.workers, mp_context=mp.get_context("spawn"),
                                   initializer=_die_with_parent, initargs=(os.getpid(),))

    def map(self, task, values):
        results: list = [None] * len(values)
        strikes = [0] * len(values)
        pending = list(range(len(values)))
        while pending:
            futures = {i: self.pool.submit(evaluate_task, task, values[i]) for i in pending}
            broken = []
            for i, fut in futures.items():
                try:
                    results[i] = fut.result()
                except BrokenProcessPool:
                    broken.append(i)
            if not broken:
                break
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = self._new_pool()
            pending = []
            for i in broken:
                strikes[i] += 1
                if strikes[i] >= 2:
                    results[i] = failed_result("worker process died (BrokenProcessPool)")
                else:
                    pending.append(i)
            if len(broken) > 1:
                # evaluate the suspects one at a time so only the culprit is penalized
                for i in list(pending):
                    try:
                        results[i] = self.pool.submit(evaluate_task, task, values[i]).result()
                    except BrokenProcessPool:
                        results[i] = failed_result("worker process died (BrokenProcessPool)")
                        self.pool.shutdown(wait=False, cancel_futures=True)
                        self.pool = self._new_pool()
                pending = []
        return results

    def close(self) -> None:
        self.pool.shutdown(wait=True)


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
