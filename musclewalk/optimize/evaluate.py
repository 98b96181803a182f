"""One evaluation: write the candidate's routing, muscle properties and passive gains into a
private copy of the model, simulate the scenario of the run's task (straight and flat, or under the
random turns, pushes and ramps its generation's seed draws: EvaluationTask.scenario), and score it
with the objective. Any failure
(OpenSim exception, NaN, integrator failure, CPU-time limit) is a penalized evaluation, never a
crashed optimization.

The limit on a grinding simulation is CPU time of the evaluating thread per simulated second, not
wall time: wall time grows with the load of the machine (a walker whose 10 s take 30 s on an idle
core was killed by a 60 s wall limit on a busy one, and the optimization reported a faller as its
best), CPU time of the thread does not count the time other processes hold the core. The limit is
set an order of magnitude above what any walking candidate needs, so it only ends simulations that
grind (tiny integrator steps) and the same seed gives the same result on an idle or a busy machine."""

from __future__ import annotations

import copy
import math
import threading
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Mapping

import numpy as np

from ..constants import CONTROL_INTERVAL
from ..measures.objective import DEFAULT_OBJECTIVE, Objective, scored_run
from ..model.meta import load_meta
from ..model.metadata import ModelMeta
from ..model.osim import write_atomic, xml_bytes
from ..model.vectors import ModelVectors, parse_osim
from ..sim.runner import Simulator
from ..sim.scenario import Scenario
from ..sim.terrain import RampTerrain
from .scratch import new_scratch_folder
from .space import model_parameter_spec
from .task import Task

# a failed evaluation ranks below every simulated candidate: a run that falls at once scores
# about 100 (E_speed = 1 over t_max), and |1 - v_base / v| averaged over t_max stays far below
# 100 for any motion a simulation produces
FAILURE_SCORE = 1.0e4


# CPU s per simulated s: ~3 for the 40-muscle Human on an idle core of the development VM, ~2x that
# on a busy hyper-threaded core or a slow phase of the VM; 60 leaves a margin of 10x
CPU_PER_SIMULATED_SECOND = 60.0
CPU_GRACE = 1.0  # simulated s charged at least (start-up costs more than a later step)


class EvaluationTimeout(Exception):
    pass


@dataclass
class EvaluationResult:
    """One candidate's evaluation, from the worker to the driver, its history and best.json."""

    score: float  # the objective (FAILURE_SCORE when the evaluation failed)
    terms: dict  # term name -> weighted, thresholded value
    averages: dict  # term name -> the measure's average over t_max
    simulated_time: float  # s
    terminated: bool  # a termination rule (or a failure) ended it before t_max
    reason: str | None  # the termination rule, or the exception's type
    wall_time: float  # s
    error: str | None = None  # why the evaluation failed (None: it simulated)
    thresholds_met: bool = False  # walked t_max with every term at or under its threshold
    # a run with several trials per candidate (combine_trials): each trial's objective and
    # simulated time, the candidate itself first; None: one simulation
    trial_scores: list | None = None
    trial_times: list | None = None
    trial_errors: list | None = None  # each trial's error (None: it simulated)
    trial_averages: list | None = None  # each trial's averages (stop rules hold for every trial)

    def as_dict(self) -> dict:
        """Plain data (checkpoints keep this, not the class)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping) -> "EvaluationResult":
        """From ``as_dict`` output, also of an earlier version (unknown keys dropped, missing
        optional ones at their defaults)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in names})


@dataclass(frozen=True)
class EvaluationTask:
    model: str  # base .osim (with .meta.json beside it)
    speed: float
    duration: float
    control_interval: float = CONTROL_INTERVAL
    cpu_limit: float = CPU_PER_SIMULATED_SECOND  # CPU s of the evaluating thread per simulated s
    objective: Objective | None = None  # None: the default objective file
    task: Task | None = None  # the run's perturbations (None: straight, flat, as before tasks)
    perturbation_seed: int | None = None  # this generation's (common random numbers)

    def scoring(self) -> Objective:
        return self.objective or default_objective()

    def scenario(self) -> tuple[Scenario, RampTerrain | None]:
        """(scenario, terrain or None) of every evaluation of this task: the plain straight,
        flat scenario unless the run's task has random perturbations, which are then those of
        ``perturbation_seed`` (the same for every candidate of a generation)."""
        if self.task is None:
            return Scenario(
                speed=self.speed, duration=self.duration, control_interval=self.control_interval
            ), None
        return self.task.scenario(self.speed, self.duration, self.perturbation_seed, self.control_interval)


_DEFAULT: list[Objective] = []


def default_objective() -> Objective:
    if not _DEFAULT:
        _DEFAULT.append(Objective.load(DEFAULT_OBJECTIVE))
    return _DEFAULT[0]


def check_model_values(model_values: Mapping[str, Mapping[str, float]]) -> None:
    """Model vectors are normalized to their ranges: a value outside [0, 1] (or NaN) is
    rejected here, before OpenSim sees it. Such a model (e.g. a negative optimal fibre length)
    can make OpenSim throw inside Model.addForce, after which destroying the half-built model
    crashes the whole process instead of failing one evaluation."""
    for kind, vals in model_values.items():
        for name, value in vals.items():
            model_parameter_spec(kind, name).check(value, "model")


class Evaluator:
    """Per worker process: parses the base model once; each evaluation writes the candidate
    model to a private temporary file and loads it."""

    def __init__(self, model: str, meta: ModelMeta | None = None):
        self.model = str(model)
        self.meta = load_meta(model) if meta is None else meta  # a caller's, loaded once
        self.vectors = ModelVectors(self.meta)
        self.base_tree = parse_osim(model)
        self.tmpdir = new_scratch_folder()  # also removes those of killed processes

    def candidate_model(self, model_values: Mapping) -> tuple[Path, ModelMeta]:
        """The candidate's .osim (private file) and its metadata."""
        tree = copy.deepcopy(self.base_tree)
        self.vectors.write(tree, model_values)
        # one file per thread: a dask worker may run several evaluations at once
        path = self.tmpdir / f"candidate-{threading.get_ident()}.osim"
        write_atomic(path, xml_bytes(tree))
        return path, self.vectors.updated_meta(tree)

    def evaluate(self, task: EvaluationTask, values: Mapping[str, float]) -> EvaluationResult:
        from .space import ParameterSpace

        t0 = time.perf_counter()
        objective = task.scoring()
        try:
            sim_values, model_values = ParameterSpace.split(values)
            check_model_values(model_values)
            path, meta = self.candidate_model(model_values)
            scenario, terrain = task.scenario()
            sim = Simulator(path, meta=meta, control_interval=task.control_interval, terrain=terrain)
            cpu0 = time.thread_time()

            def cpu_budget(sensors, *_):
                used = time.thread_time() - cpu0
                if used > task.cpu_limit * max(sensors.t, CPU_GRACE):
                    raise EvaluationTimeout(
                        f"CPU time {used:.1f} s at {sensors.t:.3f} s simulated, over the limit of "
                        f"{task.cpu_limit:g} CPU s per simulated s"
                    )

            run = scored_run(sim, scenario, sim_values, objective, observers=[cpu_budget])
            result, averages, terms, score = run.result, run.averages, run.terms, run.score
            if not math.isfinite(score):
                raise FloatingPointError("objective is not finite")
            return EvaluationResult(
                score,
                terms,
                averages,
                result.simulated_time,
                result.terminated,
                result.reason,
                time.perf_counter() - t0,
                thresholds_met=(not result.terminated) and objective.thresholds_met(averages),
            )
        except Exception as exc:  # a failing candidate is penalized, never fatal
            nan = dict.fromkeys(objective.term_names, float("nan"))
            return EvaluationResult(
                FAILURE_SCORE,
                nan,
                dict(nan),
                0.0,
                True,
                type(exc).__name__,
                time.perf_counter() - t0,
                error=f"{type(exc).__name__}: {exc}"[:500],
            )


def combine_trials(trials: list[EvaluationResult]) -> EvaluationResult:
    """One candidate's result from its trials (driver.Settings.trials; the candidate itself
    first): the objective is the trials' mean (a failed trial counts FAILURE_SCORE), the terms and
    averages the means over the trials that simulated; it is terminated, with the reason of its
    shortest trial, when any trial was, and its simulated time is the shortest; the thresholds
    are met when every trial met them. An error only when every trial failed (the first's); each
    trial's error and averages are kept (the failure log lists every failed trial, and a stage's
    stop_when_met asks every trial to meet its terms)."""
    if len(trials) == 1:
        return trials[0]
    simulated = [r for r in trials if r.error is None] or trials
    names = list(trials[0].terms)

    def mean(kind: str) -> dict:
        return {k: float(np.mean([getattr(r, kind)[k] for r in simulated])) for k in names}

    shortest = min(trials, key=lambda r: (not r.terminated, r.simulated_time))
    errors = [r.error for r in trials if r.error is not None]
    return EvaluationResult(
        float(np.mean([r.score for r in trials])),
        mean("terms"),
        mean("averages"),
        min(r.simulated_time for r in trials),
        any(r.terminated for r in trials),
        shortest.reason,
        sum(r.wall_time for r in trials),
        error=errors[0] if len(errors) == len(trials) else None,
        thresholds_met=all(r.thresholds_met for r in trials),
        trial_scores=[r.score for r in trials],
        trial_times=[r.simulated_time for r in trials],
        trial_errors=[r.error for r in trials],
        trial_averages=[dict(r.averages) for r in trials],
    )


def failed_result(error: str, objective: Objective | None = None) -> EvaluationResult:
    """The penalized result of an evaluation that produced none (its worker died)."""
    nan = dict.fromkeys((objective or default_objective()).term_names, float("nan"))
    return EvaluationResult(FAILURE_SCORE, nan, dict(nan), 0.0, True, "failure", 0.0, error=error)


_EVALUATORS: dict[str, Evaluator] = {}


def evaluate_task(task: EvaluationTask, values: Mapping[str, float]) -> EvaluationResult:
    """Entry point for worker processes (multiprocessing or dask): one Evaluator per model
    and process, created on first use."""
    ev = _EVALUATORS.get(task.model)
    if ev is None:
        ev = _EVALUATORS[task.model] = Evaluator(task.model)
    return ev.evaluate(task, values)
