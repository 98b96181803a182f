"""Evaluation functions for worker-process tests (importable by spawned workers): one that
never returns for a marked candidate, as a call into OpenSim that stopped making progress."""

import time

from musclewalk.optimize.evaluate import EvaluationResult


def maybe_hang(task, values):
    if values.get("hang"):
        time.sleep(3600)
    return EvaluationResult(float(values["x"]), {}, {}, 0.0, False, None, 0.0)
