"""CMA-ES driver (pycma ask/tell) with checkpoints, resume, parallel evaluators and run outputs.

Run directory:
  checkpoint.pkl   CMA state + history + best, written atomically after every generation
  history.csv      per generation: best, median, sigma, evaluations, each term of the best (and
                   perturbation_seed under a task with random perturbations), how many
                   candidates walked the full t_max, and whether its lowest objective was a fall
                   below a walker's (fall_ranked_first; log.txt warns of such generations)
  best.json        named parameters of the best solution so far, with its objective terms
  optimized.osim   the creature with the best routing, muscle properties and passive gains
                   written back (+ optimized.meta.json), opens in the OpenSim GUI
  generation-N/    with keep_generation_bests: best.json, optimized.osim (+ meta) and
                   settings.json as written after generation N, for each generation that found
                   a new best, so that every best of the run's history can be re-simulated
  log.txt          command, seed, versions, machine, wall time, stop reason, failed evaluations,
                   the best's parameters within 1 % of a bound, its muscles whose fibres stand
                   outside the working range (a passive spring, a slack muscle), and the "note:" lines people
                   added (kept when the log is rewritten)
  .musclewalk.lock held (flock) by the optimizer for the life of the run

A new run needs an empty (or new) --out; --resume needs the run's checkpoint and refuses settings
that differ from the saved ones. Every setting is checked before the first evaluation.

Settings.parameters (an experiment file's `parameters:`; space.py) narrows bounds or fixes
parameters: a fixed parameter is no CMA-ES coordinate and takes its value in every evaluation,
in best.json and in optimized.osim; the overrides are stored with the settings (settings.json,
the checkpoint), so --resume builds the same space; checkpoints without them mean none.

Under a task with random perturbations (task.py: turns, pushes, ramps) every candidate of a
generation is evaluated under the same perturbations (common random numbers), drawn from
task.generation_seed(seed, generation): the checkpoint's settings (seed, the task definition) and
the generation count decide them, so --resume draws the same ones.

Settings.trials > 1 (beyond the paper, for gaits that survive by luck: a best whose copies moved
by 1e-9 of its ranges fall seconds earlier): every candidate is simulated that many times, itself
under the generation's perturbations, then copies of it moved by +-trial_jitter of each range
(task.trial_signs: the same directions for every candidate of a generation, drawn anew each
generation) under perturbations of their own (task.generation_seed(seed, generation, trial)), and
CMA-ES ranks the mean objective (evaluate.combine_trials). best.json and log.txt say so; the
candidate's own simulation is re-simulated from best.json, its trials' objectives and times are
listed there. Settings.trial_groups narrows the move to some parameter groups (e.g. the initial
state alone: a candidate then has to walk from several starts, which a lone transient of a
chaotic gait does not), and trial_directions "fixed" draws the directions once for the whole run:
the objective is then deterministic, as elitism needs (a task without random perturbations).
Settings.trial_speeds (beyond the paper) simulates further trial k at the run's target speed times
its k-th factor (its start scaled with it, as every start is), so that a candidate scores well
only when it also walks at the faster or slower targets: a target-speed continuation needs walkers
that take the next stage's speed, which walkers optimized at one speed do not (moved by 2.5 % they
fall within 1.5 s; docs/getting-creatures-to-walk.md). With trial_jitter 0 those trials are the
candidate itself, and the objective is deterministic. A trial's speed is the product rounded to
12 digits (`trial_speed`: 1.75 x 1.05 is 1.8375, not 1.8375000000000001), the number best.json
and log.txt give, so that `simulate --speed` with it re-simulates that trial: on error-controlled
steps a walker can walk 10 s at one of the two and fall after 5 s at the other.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import math
import os
import pickle
import platform
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, NamedTuple

import numpy as np

from ..constants import CONTROL_INTERVAL
from ..cpu_dispatch import describe as describe_cpu_dispatch
from ..io_checks import check_model, write_files_together
from ..measures.objective import DEFAULT_OBJECTIVE, Objective, ObjectiveError
from ..model.meta import STANDING_FIBER_LENGTH_BOUNDS, load_meta, meta_bytes, meta_path, one_side
from ..model.osim import write_atomic, xml_bytes
from ..model.vectors import ModelVectors, parse_osim
from ..sim.bridge import control_model_from_meta
from ..sim.parameters import ParameterError, read_parameter_sections
from .evaluate import CPU_PER_SIMULATED_SECOND, EvaluationResult, EvaluationTask, combine_trials
from .evaluators import make_evaluator
from .space import PARAMETER_GROUPS, OverrideError, ParameterSpace, parse_overrides
from .task import (
    TRIAL_DIRECTIONS,
    TRIALS_FIXED,
    TRIALS_PER_GENERATION,
    WALKING_UNPERTURBED,
    Task,
    TaskError,
    generation_seed,
    positive_number,
    trial_signs,
    valid_stop_when_walking,
)

CHECKPOINT = "checkpoint.pkl"
LOCK = ".musclewalk.lock"
MODEL_DIR = "model"  # the run's own model copy (built preset, --scale-passive)
POPULATION = 20  # paper §5
SIGMA0 = 1.0  # paper §5
MAX_DURATION = 600.0  # s of t_max: longer is a typo, not an experiment
FAILURE_LOG = 200  # failed evaluations kept with their reason (all are counted)
UNPERTURBED_CHECKS = 2  # stop_when_walking "unperturbed": a generation's walkers simulated again
# without perturbations, best first (an extra evaluation each)


def trial_speed(speed: float, factor: float) -> float:
    """The target speed (m/s) of a trial at ``factor`` times ``speed`` (Settings.trial_speeds),
    rounded to 12 digits: the decimal a user types back into `simulate --speed` (module doc);
    ``speed`` itself at factor 1, as the candidate's own trial runs."""
    return speed if factor == 1.0 else round(speed * factor, 12)


class OptimizationError(ValueError):
    pass


class ChangedSettingError(OptimizationError):
    """A resume asked for a result-deciding setting other than the one the run started with."""

    def __init__(self, checkpoint: Path, name: str, started, given):
        self.checkpoint, self.name, self.started, self.given = checkpoint, name, started, given
        super().__init__(
            f"{checkpoint}: {name}: the run was started with {started!r}, not {given!r}; resume "
            "without it or start a new run"
        )


@dataclass
class Settings:
    model: str
    speed: float
    duration: float = 10.0
    generations: int = 100
    seed: int = 1
    workers: int = 0  # 0: all cores
    evaluator: str = "process"  # process | serial | dask
    scheduler: str | None = None
    popsize: int = POPULATION
    sigma: float = SIGMA0
    init: str | None = None  # best.json of an earlier run (warm start)
    init_other_creature: bool = False  # allow --init from another creature (shared names)
    extra_generations: int = 20  # keep improving after all thresholds are met
    stagnation: int = 200  # generations without improvement before stopping
    cpu_limit: float = CPU_PER_SIMULATED_SECOND  # CPU s per simulated s of one evaluation
    wall_backstop: float | None = None  # wall s with no finished evaluation (a stuck worker);
    # None: 3 x cpu_limit x duration + 600
    clip_init: bool = False  # --init values outside the bounds: clip (else refuse)
    stop_when_walking: bool | str = False  # stop once a candidate ran the full t_max (a stage
    # of a continuation chain); "unperturbed": once one ran it under its generation's
    # perturbations and again without them (a task with none: as true)
    stop_when_met: tuple = ()  # objective term names: stop once the best candidate ran the full
    # t_max with each of these terms' averages under its threshold (a target-speed continuation
    # stage: ("speed",), at the stage's speed); not together with stop_when_walking
    objective: str = DEFAULT_OBJECTIVE  # a name in models/objectives/ or a .yaml file
    objective_definition: dict | None = None  # the objective's terms as the run started with
    # them (a resumed run keeps them, whatever the file)
    task: str = "walk"  # a name in models/tasks/ or a .yaml file: the perturbations evaluations
    # are simulated under (speed, duration and objective above are the run's own, resolved)
    task_definition: dict | None = None  # the task as the run started with it (a resumed run
    # keeps it, whatever the file)
    parameters: dict = field(default_factory=dict)  # parameter overrides (space.py: pattern ->
    # {lower, upper} or {fixed}; an experiment file's `parameters:`); {}: the full space
    hold_values: dict | None = None  # the values of the parameters held by {hold: true},
    # resolved from the warm start when the run started (a resumed run holds the same)
    parameters_source: str = ""  # where the overrides come from, for messages ("--parameters", an
    # experiment file); "" names the model they do not fit
    command: str = ""
    trials: int = 1  # simulations per candidate, its objective their mean (module doc); 1: one
    trial_jitter: float = 1e-6  # the further trials' move: +- this fraction of each range
    trial_groups: tuple = ()  # the parameter groups (Table 1) the further trials move; (): all
    trial_directions: str = TRIALS_PER_GENERATION  # or TRIALS_FIXED: one draw for the whole run
    trial_speeds: tuple = ()  # factors of speed, one per further trial: its target speed (module
    # doc); (): every trial at the run's speed
    elitist: bool = False  # CMA-ES recombines the best candidate so far into every generation
    # that found none better (pycma's CMA_elitist): the mean stays by a lone outlier of a
    # knife-edge landscape instead of drifting away with the generations' fallers
    keep_generation_bests: bool = False  # also write each new best's files to generation-N/
    # (an output, not a result setting: a resumed run may switch it)

    def backstop(self) -> float:
        if self.wall_backstop is not None:
            return self.wall_backstop
        return 3.0 * self.cpu_limit * self.duration + 600.0

    def validate(self) -> None:
        """OptimizationError naming the first setting the optimizer cannot use."""

        def number(name, value, low=0.0, strict=True, integer=False, high=math.inf):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            if ok and integer:
                ok = float(value).is_integer()
            if ok:
                ok = math.isfinite(value) and (value > low if strict else value >= low) and value <= high
            if not ok:
                kind = "an integer" if integer else "a number"
                bound = f"> {low:g}" if strict else f">= {low:g}"
                upper = f" and <= {high:g}" if math.isfinite(high) else ""
                raise OptimizationError(f"{name}: expected {kind} {bound}{upper}, got {value!r}")

        number("speed", self.speed)
        number("duration", self.duration, high=MAX_DURATION)
        number("generations", self.generations, integer=True)
        # cma draws a random seed for 0: the run would not be reproducible
        number("seed", self.seed, integer=True)
        number("workers", self.workers, strict=False, integer=True)
        number("popsize", self.popsize, low=1, integer=True)
        number("sigma", self.sigma)
        number("extra_generations", self.extra_generations, strict=False, integer=True)
        if not valid_stop_when_walking(self.stop_when_walking):
            raise OptimizationError(
                f"stop_when_walking: expected true, false or {WALKING_UNPERTURBED}, "
                f"got {self.stop_when_walking!r}"
            )
        met = self.stop_when_met
        if not isinstance(met, (tuple, list)) or not all(isinstance(n, str) and n for n in met):
            raise OptimizationError(f"stop_when_met: expected a list of objective term names, got {met!r}")
        if met and self.stop_when_walking:
            raise OptimizationError("stop_when_met: a stage stops either when walking or when terms are met")
        self.stop_when_met = tuple(met)
        number("stagnation", self.stagnation, integer=True)
        number("trials", self.trials, integer=True)
        number("trial_jitter", self.trial_jitter, strict=False, high=0.1)
        groups = self.trial_groups
        if not isinstance(groups, (tuple, list)) or not all(isinstance(g, str) and g for g in groups):
            raise OptimizationError(f"trial_groups: expected a list of parameter group names, got {groups!r}")
        self.trial_groups = trial_group_set(groups)
        unknown = [g for g in self.trial_groups if g not in PARAMETER_GROUPS]
        if unknown:
            raise OptimizationError(
                f"trial_groups: unknown group {', '.join(unknown)} (groups: {', '.join(PARAMETER_GROUPS)})"
            )
        if self.trial_directions not in TRIAL_DIRECTIONS:
            raise OptimizationError(
                f"trial_directions: expected {' or '.join(TRIAL_DIRECTIONS)}, got {self.trial_directions!r}"
            )
        factors = self.trial_speeds
        if not isinstance(factors, (tuple, list)) or not all(positive_number(f) for f in factors):
            raise OptimizationError(f"trial_speeds: expected a list of numbers > 0, got {factors!r}")
        if factors and len(factors) != self.trials - 1:
            raise OptimizationError(
                f"trial_speeds: one factor per further trial: trials {self.trials} needs "
                f"{self.trials - 1}, got {len(factors)}"
            )
        self.trial_speeds = tuple(float(f) for f in factors)
        duplicates = self.trials > 1 and self.trial_jitter == 0 and not self.trial_speeds
        if not isinstance(self.keep_generation_bests, bool):
            raise OptimizationError(
                f"keep_generation_bests: expected true or false, got {self.keep_generation_bests!r}"
            )
        if not isinstance(self.elitist, bool):
            raise OptimizationError(f"elitist: expected true or false, got {self.elitist!r}")
        number("cpu_limit", self.cpu_limit)
        # below the CPU limit of one evaluation, the backstop would decide results on a busy machine
        number("wall_backstop", self.backstop(), low=self.cpu_limit * self.duration, strict=False)
        if self.objective_definition is None:
            try:
                Objective.load(self.objective)
            except ObjectiveError as exc:
                raise OptimizationError(str(exc)) from None
        if not isinstance(self.task, str) or not self.task:
            raise OptimizationError(f"task: expected a task name or a .yaml file, got {self.task!r}")
        try:
            task = self.scenario_task()
            for factor, speed in zip((1.0, *self.trial_speeds), self.target_speeds):
                try:
                    task.check_run(speed, self.duration)
                except TaskError as exc:
                    if factor == 1.0:
                        raise
                    raise TaskError(f"{exc} (a trial speed: trial_speeds factor {factor:g})") from None
        except TaskError as exc:
            raise OptimizationError(str(exc)) from None
        if duplicates and not task.randomized:
            raise OptimizationError(
                f"trials: {self.trials} simulations of the same candidate in the same scenario "
                "(trial_jitter 0, no trial_speeds, a task without random perturbations) would be identical"
            )
        # the best so far keeps its objective from its own generation: comparable with later
        # generations' only when every generation scores a candidate the same way
        noisy_trials = self.trials > 1 and self.trial_directions != TRIALS_FIXED and self.trial_jitter > 0
        if self.elitist and (task.randomized or noisy_trials):
            why = (
                f"task {self.task} draws new perturbations"
                if task.randomized
                else "trials draw new directions"
            )
            raise OptimizationError(
                f"elitist: {why} each generation, so the best so far's objective is not comparable "
                "with a later generation's; use a task without random perturbations, and trials: 1 "
                f"or trial_directions: {TRIALS_FIXED} or trial_jitter: 0"
            )
        if self.evaluator not in ("process", "serial", "dask"):
            raise OptimizationError(f"evaluator: expected process, serial or dask, got {self.evaluator!r}")
        try:
            parse_overrides(self.parameters)
        except OverrideError as exc:
            raise OptimizationError(str(exc)) from None

    @property
    def target_speeds(self) -> list[float]:
        """Each trial's target speed (m/s), the candidate's own first: ``speed`` alone without
        trial_speeds."""
        return [trial_speed(self.speed, f) for f in (1.0, *self.trial_speeds)]

    def scenario_task(self) -> Task:
        """The run's task: from its stored definition (a started run), else from its file.
        TaskError for a bad file or definition."""
        if self.task_definition is not None:
            return Task.from_dict(
                self.task_definition, Path(self.task).stem, source=f"checkpoint task {self.task}"
            )
        return Task.load(self.task)


# settings a resumed run takes from the command line: how to evaluate, when to stop and what to
# write besides the result, not what a generation does
RUNTIME_SETTINGS = (
    "workers",
    "evaluator",
    "scheduler",
    "wall_backstop",
    "extra_generations",
    "keep_generation_bests",
)
# settings that decide the result: a resumed run must keep them
RESULT_SETTINGS = (
    "model",
    "speed",
    "duration",
    "seed",
    "popsize",
    "sigma",
    "init",
    "init_other_creature",
    "clip_init",
    "stagnation",
    "cpu_limit",
    "objective",
    "stop_when_walking",
    "stop_when_met",
    "task",
    "parameters",
    "trials",
    "trial_jitter",
    "trial_groups",
    "trial_directions",
    "trial_speeds",
    "elitist",
)


def trial_group_set(groups) -> tuple:
    """Settings.trial_groups as the run keeps them: a set (the order named, or a group named twice,
    does not change the run), sorted."""
    return tuple(sorted(set(groups)))


def _same_setting(name: str, given, saved) -> bool:
    """Whether a resume's ``given`` value is the checkpoint's (the trial groups compared as
    trial_group_set: older checkpoints kept the order given)."""
    if name == "trial_groups" and isinstance(given, (tuple, list)) and isinstance(saved, (tuple, list)):
        return trial_group_set(given) == trial_group_set(saved)
    return given == saved


class WarmStart(NamedTuple):
    """An ``--init`` file as the run starts from it: the CMA-ES vector, the file's own values of
    the optimized parameters (the warm-start candidate is simulated with these, not with its
    decoded vector), and what the run's overrides changed (log.txt)."""

    x: np.ndarray
    values: dict[str, float]
    notes: list[str]


@dataclass
class State:
    es: object
    generation: int = 0
    evaluations: int = 0
    wall_time: float = 0.0
    best_x: np.ndarray | None = None
    best_result: EvaluationResult | None = None
    best_generation: int = -1
    thresholds_met_at: int | None = None
    history: list = field(default_factory=list)
    failures: int = 0
    failure_log: list = field(default_factory=list)  # {generation, candidate, error}
    warm_start_notes: list = field(default_factory=list)  # what the warm start changed (log.txt)
    unperturbed_checks: list = field(default_factory=list)  # stop_when_walking "unperturbed": each
    # walker simulated again without perturbations: {generation, candidate, simulated_time, walks,
    # error}
    # the warm start's candidate (x) and its values exactly as the file gave them: decoding x
    # would move some by an ulp, and a gait is chaotic in them
    start_x: np.ndarray | None = None
    start_values: dict | None = None

    @property
    def best_score(self) -> float:
        """The reported best's objective (inf before the first generation)."""
        return self.best_result.score if self.best_result is not None else math.inf


def _scheduler_address(client) -> str | None:
    try:
        return str(client.scheduler.address)
    except Exception:
        return None


def _atomic_pickle(path: Path, obj) -> None:
    write_atomic(path, pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


START_MATCH = 1e-12  # in CMA-ES coordinates; any other candidate lies orders of magnitude farther away
CHECKPOINT_FORMAT = 2  # 1: pickled Settings and State objects; 2: their fields as plain data
SETTINGS_FILE = "settings.json"  # the run's settings, readable beside the checkpoint


def _from_fields(cls, values: Mapping):
    """A dataclass from stored fields: fields it no longer has are dropped (a later version
    removed them), fields it gained get their defaults (below)."""
    obj = cls.__new__(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    for name, value in values.items():
        if name in names:
            setattr(obj, name, value)
    return obj


def run_model(out: Path, model: str | Path) -> Path:
    """The model a run at ``out`` optimizes: its own copy in ``out/model/`` when ``model`` names
    such a copy (a run directory that moved, e.g. committed under models/optimized/, keeps it
    there), else ``model`` as given."""
    model = Path(model)
    local = Path(out) / MODEL_DIR / model.name
    return local if model.parent.name == MODEL_DIR and local.exists() else model


def generation_folder(generation: int) -> str:
    """The folder (in a run directory) of the best found in ``generation`` (keep_generation_bests)."""
    return f"generation-{generation}"


def write_result(out: Path, best: Mapping, model: Path, meta) -> None:
    """``out``'s best.json, optimized.osim (``model`` with best["parameters"]["model"]'s values
    written in) and its metadata: they belong together, so all are written or none."""
    tree = parse_osim(model)
    vectors = ModelVectors(meta)
    vectors.write(tree, best["parameters"]["model"])
    updated = dataclasses.replace(vectors.updated_meta(tree), optimized_from=str(model))
    osim = Path(out) / "optimized.osim"
    write_files_together(
        {
            Path(out) / "best.json": (json.dumps(best, indent=1) + "\n").encode(),
            osim: xml_bytes(tree),
            meta_path(osim): meta_bytes(updated),
        }
    )


def load_checkpoint(path: Path) -> tuple[Settings, State]:
    try:
        data = pickle.loads(path.read_bytes())
        settings, state = data["settings"], data["state"]
        # runs from before task files simulated straight walking on flat ground
        before_tasks = "task" not in (settings if isinstance(settings, Mapping) else vars(settings))
        if data.get("format") == CHECKPOINT_FORMAT:
            settings = _from_fields(Settings, settings)
            state = _from_fields(State, state)
    except FileNotFoundError:
        raise OptimizationError(f"{path}: no checkpoint to resume from") from None
    except Exception as exc:
        raise OptimizationError(f"{path}: corrupt checkpoint ({type(exc).__name__}: {exc})") from None
    # checkpoints of earlier versions lack the newer fields: their defaults
    for obj, cls in ((settings, Settings), (state, State)):
        for f in dataclasses.fields(cls):
            if not hasattr(obj, f.name):
                default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
                setattr(obj, f.name, default)
    if before_tasks:
        settings.task_definition = Task.straight().as_dict()
    if hasattr(settings, "timeout"):  # the wall-clock evaluation limit of earlier versions
        del settings.timeout
    if isinstance(state.best_result, Mapping):  # stored as plain data
        state.best_result = EvaluationResult.from_dict(state.best_result)
    state.__dict__.pop("best_score", None)  # a field of earlier versions, now derived
    return settings, state


_HELD_LOCKS: dict[str, int] = {}


def acquire_run_lock(out: Path) -> None:
    """Hold OUT/.musclewalk.lock (flock) until release_run_lock or the end of the process, so
    that two optimizers never write one run directory. Re-entrant within a process."""
    out = Path(out)
    key = str(out.resolve())
    if key in _HELD_LOCKS:
        return
    while True:
        try:
            out.mkdir(parents=True, exist_ok=True)
            fd = os.open(out / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise OptimizationError(
                f"{out}: cannot create the run directory ({exc.strerror or exc})"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise OptimizationError(
                f"{out}: another optimization (pid {holder}) is running in "
                "this directory; wait for it or choose another --out"
            ) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(out / LOCK).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # locked a lock file its holder unlinked while releasing: take the new one
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())
    _HELD_LOCKS[key] = fd


def release_run_lock(out: Path) -> None:
    fd = _HELD_LOCKS.pop(str(Path(out).resolve()), None)
    if fd is None:
        return
    try:
        (Path(out) / LOCK).unlink()
    except OSError:
        pass
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


def check_out_dir(out: Path) -> None:
    """A run directory may be missing or a directory, never another file."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OptimizationError(f"{out}: --out exists and is not a directory")


def check_new_run_dir(out: Path) -> None:
    """A new run may only start in a missing or empty directory (or one holding just the model
    copy and lock of an earlier start that ended before its first generation): never over
    another run's results."""
    out = Path(out)
    check_out_dir(out)
    if (out / CHECKPOINT).exists():
        raise OptimizationError(
            f"{out / CHECKPOINT}: a checkpoint exists; use --resume to continue or choose another --out"
        )
    if out.is_dir():
        # stages/: the earlier stages of an experiment whose last stage writes into out
        other = sorted(p.name for p in out.iterdir() if p.name not in (MODEL_DIR, LOCK, "stages"))
        if other:
            shown = ", ".join(other[:4]) + (", ..." if len(other) > 4 else "")
            raise OptimizationError(
                f"{out}: --out is not empty ({shown}) and holds no "
                "checkpoint to resume; choose a new directory"
            )


def scaled_passive_model(model: Path, out: Path, factors: Mapping[str, float]) -> Path:
    """OUT/model/<model> with the passive gains in ``factors`` scaled (initial value and bounds;
    a continuation stage): the run's own copy, so that the source model is untouched and
    --resume finds the scaled metadata. ValueError naming the metadata file for an unknown gain
    or a bad factor."""
    from ..model.meta import scale_passive_bounds, write_meta

    model, out = Path(model), Path(out)
    if (out / CHECKPOINT).exists():
        return model  # the optimizer refuses to overwrite the run; leave it untouched
    try:
        meta = load_meta(model)
        if meta.passive_scale == dict(factors) and model.parent.resolve() == (out / MODEL_DIR).resolve():
            return model  # scaled by an earlier start of this run that stopped before generation 1
        scaled = scale_passive_bounds(meta, dict(factors))
    except ValueError as exc:
        raise ValueError(f"{meta_path(model)}: {exc}") from None
    target = out / MODEL_DIR / model.name
    if target.resolve() != model.resolve():
        write_atomic(target, model.read_bytes())
    write_meta(meta_path(target), scaled)
    return target


def _first(items, shown: int = 3) -> str:
    """The first ``shown`` of ``items``, comma-separated, ", ..." when there are more."""
    items = list(items)
    return ", ".join(items[:shown]) + (", ..." if len(items) > shown else "")


def walked(result: EvaluationResult) -> bool:
    """Whether an evaluation simulated its full t_max (every trial): no error, no termination."""
    return result.error is None and not result.terminated


def best_key(result: EvaluationResult | None) -> tuple:
    """Ordering of the reported best (CMA-ES itself ranks by objective alone): a candidate that ran
    the full t_max beats any that a termination rule stopped, however low the latter's objective
    (§5 charges a fall only E_speed = 1 for the time left, so one near the end can score lower
    than a walker); among equals the lower objective wins. No result yet: worst of all."""
    if result is None:
        return (True, math.inf)
    return (bool(result.terminated), result.score)


class Optimization:
    """One CMA-ES run in a run directory. ``requested``: the settings the user gave explicitly
    (on --resume each must equal the saved value, except the generation limit, which may grow,
    and how evaluations are spread over processes, which does not change results)."""

    def __init__(
        self,
        settings: Settings,
        out_dir: Path,
        resume: bool = False,
        progress: bool = True,
        on_generation: Callable | None = None,
        requested: Mapping | None = None,
    ):
        self.out = Path(out_dir)
        self.progress = progress
        self.on_generation = on_generation
        self.resumed = resume
        acquire_run_lock(self.out)
        try:
            self._setup(settings, resume, requested or {})
        except BaseException:
            release_run_lock(self.out)
            raise

    def _setup(self, settings: Settings, resume: bool, requested: Mapping) -> None:
        import cma

        ckpt = self.out / CHECKPOINT
        if resume:
            saved, self.state = load_checkpoint(ckpt)
            # a run directory that moved (e.g. committed under models/optimized/) keeps its model
            # copy in <run>/model/: use that one
            saved.model = str(run_model(self.out, saved.model))
            for name, value in requested.items():
                if name == "parameters" and value != saved.parameters:
                    raise OptimizationError(
                        f"{ckpt}: parameters: the run's search space was defined by "
                        f"{json.dumps(saved.parameters)}, not {json.dumps(value, default=str)}; restore the "
                        "experiment file's parameters or start a new run"
                    )
                if (
                    name in RESULT_SETTINGS
                    and name != "model"
                    and not _same_setting(name, value, getattr(saved, name))
                ):
                    raise ChangedSettingError(ckpt, name, getattr(saved, name), value)
            saved.generations = max(saved.generations, settings.generations)
            # when to stop, not what a generation does: a resumed run may run on past its thresholds
            for name in RUNTIME_SETTINGS:
                if name in requested:
                    setattr(saved, name, requested[name])
            self.settings = saved
        else:
            check_new_run_dir(self.out)
            self.settings = settings
        s = self.settings
        s.validate()
        self.objective = self._objective(s)
        try:
            self.objective.check_stop_terms(s.stop_when_met)
        except ObjectiveError as exc:
            raise OptimizationError(f"stop_when_met: {exc}") from None
        self.scenario_task = self._task(s)
        self.meta = load_meta(s.model)
        try:  # e.g. a metabolic effort term for a model with ideal muscles
            self.objective.check_muscle_model(self.meta.muscle_model, s.model)
        except ObjectiveError as exc:
            raise OptimizationError(str(exc)) from None
        self.control_model = control_model_from_meta(self.meta, CONTROL_INTERVAL)
        try:
            self.space = ParameterSpace(self.meta, self.control_model, s.parameters, s.hold_values)
            if not resume and self.space.hold_names:
                s.hold_values = self._hold_values(self.space)
                self.space = ParameterSpace(self.meta, self.control_model, s.parameters, s.hold_values)
        except OverrideError as exc:
            source = ckpt if resume else s.parameters_source or f"{s.model}"
            raise OptimizationError(f"{source}: {exc}") from None
        s.parameters = self.space.overrides  # stored as resolved: float values
        self._trial_mask = self._trial_groups_mask()
        self._check_model()
        if not resume:
            warm = self._warm_start(Path(s.init)) if s.init else WarmStart(np.zeros(len(self.space)), {}, [])
            x0 = warm.x
            opts = {
                "popsize": s.popsize,
                "seed": s.seed,
                "verbose": -9,
                "bounds": [list(self.space.lower_x), list(self.space.upper_x)],
                "tolfun": 0,
                "tolfunhist": 0,
                "tolx": 1e-12,
                "maxiter": 10**9,
                "CMA_elitist": s.elitist,
            }
            es = cma.CMAEvolutionStrategy(np.clip(x0, self.space.lower_x, self.space.upper_x), s.sigma, opts)
            if s.init:
                # the warm start itself (with the overrides' start values, if any) is a candidate
                # of the first generation, so a short run (the quick budget) never reports a best
                # worse than the point it started from; injected as the genotype whose
                # bound-transformed candidate is exactly x0
                x0c = np.clip(x0, self.space.lower_x, self.space.upper_x)
                es.inject([es.boundary_handler.inverse(x0c)], force=True)
            self.state = State(es=es, warm_start_notes=warm.notes)
            if s.init:
                self.state.start_x = x0c
                self.state.start_values = warm.values
        self.task = EvaluationTask(
            str(Path(s.model).resolve()),
            s.speed,
            s.duration,
            cpu_limit=s.cpu_limit,
            objective=self.objective,
            task=self.scenario_task,
        )

    def _trial_groups_mask(self) -> np.ndarray:
        """1 for each CMA-ES coordinate the further trials move (Settings.trial_groups), else 0;
        OptimizationError naming a group without an optimized parameter."""
        groups = self.settings.trial_groups
        present = sorted(self.space.group_counts())
        missing = [g for g in groups if g not in present]
        if missing:
            raise OptimizationError(
                f"trial_groups: {', '.join(missing)}: no optimized parameter of {self.settings.model} "
                f"in it (its groups: {', '.join(present)})"
            )
        return np.array([1.0 if not groups or e.group in groups else 0.0 for e in self.space.optimized])

    @staticmethod
    def _objective(s: Settings) -> Objective:
        """The run's objective: read from its file when the run starts, and from the definition
        stored in the checkpoint when it resumes (checkpoints from before objective files scored
        with the default objective, whose file holds the same terms)."""
        try:
            if s.objective_definition is not None:
                return Objective.from_dict(
                    s.objective_definition,
                    Path(s.objective).stem,
                    source=f"checkpoint objective {s.objective}",
                )
            objective = Objective.load(s.objective)
        except ObjectiveError as exc:
            raise OptimizationError(str(exc)) from None
        s.objective_definition = objective.as_dict()
        return objective

    @staticmethod
    def _task(s: Settings) -> Task:
        """The run's task: read from its file when the run starts (and stored in the settings),
        from the stored definition when it resumes (checkpoints from before task files: straight
        walking on flat ground, load_checkpoint)."""
        try:
            task = s.scenario_task()
        except TaskError as exc:
            raise OptimizationError(str(exc)) from None
        s.task_definition = task.as_dict()
        return task

    def perturbation_seed(self, generation: int, trial: int = 0) -> int | None:
        """The seed of the perturbations every candidate of ``generation`` (1-based) is evaluated
        under (task.generation_seed; common random numbers), in its trial ``trial`` (0: the
        candidate itself); None for a task without random perturbations."""
        if not self.scenario_task.randomized:
            return None
        return generation_seed(self.settings.seed, generation, trial)

    def _check_model(self) -> None:
        """The model, its metadata and the default candidate load in OpenSim, before the first
        generation (a foreign .osim used to fail only after a whole generation of evaluations)."""
        from ..sim.engine import EngineError
        from ..sim.runner import Simulator
        from .evaluate import Evaluator

        model = self.settings.model
        try:
            check_model(model, self.meta)  # the one model-vs-metadata check
            evaluator = Evaluator(model, self.meta)
            _, model_values = ParameterSpace.split(self.space.values(np.zeros(len(self.space))))
            path, meta = evaluator.candidate_model(model_values)
            Simulator(path, meta=meta)
        except (EngineError, ValueError, KeyError) as exc:
            msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            raise OptimizationError(f"{model}: cannot be optimized: {msg}") from None
        finally:
            if "evaluator" in locals():
                shutil.rmtree(evaluator.tmpdir, ignore_errors=True)

    def _hold_values(self, space: ParameterSpace) -> dict[str, float]:
        """The values the held parameters keep: the warm start's (the defaults without one, and
        for a name it lacks; a file that cannot be read is _warm_start's error to report)."""
        values = {n: space.fixed[n] for n in space.hold_names}
        if self.settings.init:
            try:
                _, params = read_parameter_sections(Path(self.settings.init))
            except ParameterError:
                return values
            flat = space.flatten(params)
            values.update({n: float(flat[n]) for n in values if isinstance(flat.get(n), (int, float))})
        return dict(sorted(values.items()))

    def _warm_start(self, path: Path) -> WarmStart:
        """The CMA-ES start of ``--init``, its values, and notes (for log.txt) on what the run's
        parameter overrides changed: a fixed parameter takes its fixed value, not the file's; a
        value outside narrowed bounds is refused unless clip_init (then clipped, as outside a
        parameter's own bounds)."""
        s = self.settings
        # the overrides' start values replace the file's
        starts = self.space.starts
        try:
            creature, params = read_parameter_sections(path)
        except ParameterError as exc:
            raise OptimizationError(
                str(exc).replace("parameter file not found", "--init file not found")
            ) from None
        if creature and creature != self.meta.creature and not s.init_other_creature:
            raise OptimizationError(
                f"{path}: creature: parameters of '{creature}' cannot start "
                f"an optimization of '{self.meta.creature}' (use "
                "--init-from-other-creature to carry over the parameters "
                "both share)"
            )
        flat = self.space.flatten(params)
        converted = self._slack_as_standing(flat, params)
        unknown = [k for k in flat if k not in self.space.names]
        known = len(flat) - len(unknown)
        if known == 0:
            raise OptimizationError(f"{path}: parameters: none of them belongs to this model")
        for name, value in flat.items():
            if name in unknown:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise OptimizationError(f"{path}: {name}: expected a finite number, got {value!r}")
        if not s.init_other_creature:
            # parameters of another creature's shared structure (e.g. HumanLegs -> Human) carry
            # over and the rest keep their defaults; a file of this creature must be complete
            # (but for the fixed parameters, which take their fixed value anyway)
            missing = [
                e.name
                for e in self.space.optimized
                if e.name not in flat and not e.extension and e.name not in starts
            ]
            if unknown or missing:
                what = (
                    f"{len(missing)} parameters missing (e.g. {missing[0]})"
                    if missing
                    else f"{len(unknown)} unknown parameters (e.g. {unknown[0]})"
                )
                raise OptimizationError(
                    f"{path}: parameters: {what} for this model; use "
                    "--init-from-other-creature to start from the parameters "
                    "it shares with the model, the rest at their defaults"
                )
        outside = [
            (e.name, flat[e.name], e.lower, e.upper)
            for e in self.space.optimized
            if e.name in flat and e.name not in starts and not e.lower <= flat[e.name] <= e.upper
        ]
        if outside and not s.clip_init:
            name, value, lo, hi = outside[0]
            more = f" (and {len(outside) - 1} more)" if len(outside) > 1 else ""
            narrowed = " (narrowed by the run's parameters)" if name in self.space.narrowed else ""
            raise OptimizationError(
                f"{path}: {name}: {value:g} is outside the bounds "
                f"[{lo:g}, {hi:g}]{narrowed}{more}; --clip-init starts from the "
                "nearest bound instead"
            )
        notes = []
        if converted:
            notes.append(
                f"tendon slack lengths of independent muscle properties as standing fibre lengths "
                f"(physics.muscle_properties: working_range; clipped into their bounds): {len(converted)}: "
                + _first(f"{n} {length:.3f}" for n, length in converted)
            )
        clipped_narrowed = [o for o in outside if o[0] in self.space.narrowed]
        if clipped_narrowed:
            notes.append(
                f"clipped into narrowed bounds (--clip-init): {len(clipped_narrowed)}: "
                + _first(f"{n} {v:g} -> {min(max(v, lo), hi):g}" for n, v, lo, hi in clipped_narrowed)
            )
        # a feature is in use when one of its gains (its parameters whose default, off, is 0) is not
        held = self.space.held
        used = sorted(
            {ext for n, ext in self.space.off.items() if held[n] == 0.0 and flat.get(n, 0.0) != 0.0}
        )
        if used:
            raise OptimizationError(
                f"{path}: the warm start uses {', '.join(used)} (a controller feature beyond the paper) "
                f"that this run keeps off; name its parameters in the run's parameters "
                f"(e.g. '{used[0]}.*': {{free: true}}) to keep it"
            )
        replaced = [
            (n, flat[n], v)
            for n, v in self.space.fixed.items()
            if n in flat and flat[n] != v and n not in self.space.hold_names
        ]
        if replaced:
            notes.append(
                f"fixed parameters take their fixed value, not the warm start's: {len(replaced)}: "
                + _first(f"{n} {old:g} -> {v:g}" for n, old, v in replaced)
            )
        started = [(n, flat[n], v) for n, v in starts.items() if n in flat and flat[n] != v]
        if started:
            notes.append(
                f"start values replace the warm start's: {len(started)}: "
                + _first(f"{n} {old:g} -> {v:g}" for n, old, v in started)
            )
        values = {k: v for k, v in flat.items() if k not in unknown}
        values.update(starts)
        start_values = {
            e.name: min(max(float(values[e.name]), e.lower), e.upper)
            for e in self.space.optimized
            if e.name in values
        }
        return WarmStart(self.space.x_from_values(values), start_values, notes)

    def _values(self, x: np.ndarray) -> dict[str, float]:
        """Every parameter of candidate ``x`` by name; the warm start's candidate (x within
        START_MATCH of it: CMA-ES's bound transform returns it to within a few ulps) gets the
        warm start's own values."""
        values = self.space.values(x)
        st = self.state
        if st.start_x is not None and np.max(np.abs(np.asarray(x) - st.start_x)) <= START_MATCH:
            values.update(st.start_values)
        return values

    def _slack_as_standing(self, flat: dict, params: Mapping) -> list[tuple[str, float]]:
        """A warm start of independent muscle properties (``properties.<group>.tendon_slack_length``)
        for a working_range model: its slack lengths become the model's standing fibre lengths, in
        ``flat`` in place. (name, standing length before clipping) of each converted one."""
        standing = [n for n in self.space.names if n.endswith(".standing_fiber_length")]
        if not standing or any(n in flat for n in standing):
            return []
        vectors = ModelVectors(self.meta)
        values = vectors.standing_from_slack(parse_osim(self.settings.model), params.get("model") or {})
        out = []
        for entry, (u, length) in values.items():
            flat.pop(f"properties.{entry.rsplit('.', 1)[0]}.tendon_slack_length", None)
            flat[f"properties.{entry}"] = u
            out.append((f"properties.{entry}", length))
        return out

    # ------------------------------------------------------------------ loop
    def run(self) -> State:
        """Generations until a stop rule fires (see _stop_reason); the lock is released at the
        end, whatever happened."""
        s, st = self.settings, self.state
        self.out.mkdir(parents=True, exist_ok=True)
        evaluator = make_evaluator(s.evaluator, s.workers, s.scheduler, s.backstop())
        bar = self._progress_bar()
        first = st.generation
        try:
            while (stop := self._stop_reason()) is None:
                self._generation(evaluator, bar)
            if st.generation > first or not self._log_says(f"stop: {stop}"):
                # a finished run resumed (e.g. an experiment's earlier stage) keeps its log as it was
                self._write_log(stop)
        finally:
            evaluator.close()
            if bar is not None:
                bar.close()
            release_run_lock(self.out)
        return st

    def _progress_bar(self):
        if not self.progress:
            return None
        from tqdm import tqdm

        return tqdm(
            total=self.settings.generations,
            initial=self.state.generation,
            unit="gen",
            dynamic_ncols=True,
            file=sys.stderr,
        )

    def _generation(self, evaluator, bar) -> None:
        """One generation: ask, evaluate, tell, keep the best, write the outputs and the
        checkpoint, report."""
        st = self.state
        t0 = time.perf_counter()
        X = st.es.ask()
        seed = self.perturbation_seed(st.generation + 1)
        results = self._evaluate(evaluator, X, seed)
        scores = self._tell(X, results)
        fall_ranked_first = self._fall_ranked_first(results)
        self._keep_best(X, results)
        self._check_unperturbed(evaluator, X, results)
        self._note_thresholds()
        elapsed = time.perf_counter() - t0
        st.wall_time += elapsed
        row = self._history_row(scores, elapsed, seed)
        row["walkers"] = sum(map(walked, results))
        row["fall_ranked_first"] = int(fall_ranked_first)
        st.history.append(row)
        self._save()
        self._show_progress(bar, len(X) * self.settings.trials, elapsed)
        if self.on_generation:
            self.on_generation(st)

    def _evaluate(self, evaluator, X, seed: int | None = None) -> list[dict]:
        """The candidates' results, all under the perturbations of ``seed`` (None: a task without
        any); failed evaluations go to the failure log. A generation in which every evaluation
        failed ends the run before CMA-ES hears of it: in the first, the model or the settings
        cannot work; later, something around the run broke (a deleted working directory, a full
        disk, a machine so loaded that every candidate ran out of CPU time), and telling CMA-ES a
        generation of equal penalties would only move its search at random. The checkpoint stays
        at the generation before, so the run resumes once the cause is fixed."""
        st = self.state
        task = self._task_under(seed)
        results = evaluator.map(task, [self._values(x) for x in X])
        if self.settings.trials > 1:
            results = self._further_trials(evaluator, X, results)
        failed = [(k, r.error) for k, r in enumerate(results) if r.error is not None]
        if st.generation == 0 and len(failed) == len(results):
            raise OptimizationError(
                f"{self.settings.model}: every evaluation of the first generation failed; the "
                f"first: {failed[0][1]}"
            )
        st.failure_log += [
            {
                "generation": st.generation + 1,
                "candidate": k,
                **({"trial": t} if r.trial_errors else {}),
                "error": e,
            }
            for k, r in enumerate(results)
            for t, e in enumerate(r.trial_errors or [r.error])
            if e is not None
        ]
        del st.failure_log[:-FAILURE_LOG]
        if len(failed) == len(results):
            stop = (
                f"every evaluation of generation {st.generation + 1} failed (the first: "
                f"{failed[0][1]}); the checkpoint is of generation {st.generation}: resume once "
                f"the cause is fixed"
            )
            self._write_log(stop)
            raise OptimizationError(f"{self.out}: {stop}")
        return results

    def _task_under(self, seed: int | None) -> EvaluationTask:
        """The run's evaluation task under the perturbations of ``seed`` (None: a task without)."""
        return self.task if seed is None else dataclasses.replace(self.task, perturbation_seed=seed)

    def _further_trials(self, evaluator, X, results: list) -> list:
        """Each candidate's result combined with its further trials' (module doc): trial k moves
        every candidate by +-trial_jitter of each range of its trial groups in this generation's
        directions k (the run's, with fixed directions) and simulates it under the perturbations
        of seed (generation, k), at the run's speed times trial_speeds[k - 1] when given."""
        s, generation = self.settings, self.state.generation + 1
        directions = 0 if s.trial_directions == TRIALS_FIXED else generation  # generations are 1-based
        trials = [[r] for r in results]
        for k in range(1, s.trials):
            seed = self.perturbation_seed(generation, k)
            task = self._task_under(seed)
            if s.trial_speeds:
                task = dataclasses.replace(task, speed=s.target_speeds[k])
            if s.trial_jitter > 0:
                signs = trial_signs(s.seed, directions, k, len(self.space)) * self._trial_mask
                moved = [self._trial_values(x, signs) for x in X]
            else:  # the candidates themselves, a warm start's with its file's values
                moved = [self._values(x) for x in X]
            for own, result in zip(trials, evaluator.map(task, moved)):
                own.append(result)
        return [combine_trials(own) for own in trials]

    def _trial_values(self, x, signs) -> dict[str, float]:
        """Candidate ``x`` moved along ``signs`` for a further trial: its own values (the warm
        start's, for its candidate) with the moved coordinates' values decoded from the move."""
        values = self._values(x)
        decoded = self.space.values(self.space.moved(x, signs, self.settings.trial_jitter))
        for spec, sign in zip(self.space.optimized, signs):
            if sign != 0.0:
                values[spec.name] = decoded[spec.name]
        return values

    def _tell(self, X, results: list[dict]) -> list[float]:
        """CMA-ES ranks by the objective alone; the generation is counted."""
        st = self.state
        scores = [r.score for r in results]
        st.es.tell(X, scores)
        st.generation += 1
        st.evaluations += len(X)
        st.failures += sum(sum(e is not None for e in (r.trial_errors or [r.error])) for r in results)
        return scores

    def _fall_ranked_first(self, results: list) -> bool:
        """Whether the lowest objective of this generation is a candidate that fell while a walker
        (one of this generation's, or the best so far) scored higher: the objective charges a fall
        less than it charges walking, and CMA-ES, ranking by the objective alone, moves toward
        falls (log.txt counts such generations)."""
        st = self.state
        first = results[int(np.argmin([r.score for r in results]))]
        if first.error is not None or not first.terminated:
            return False
        walkers = [r.score for r in results if walked(r)]
        if st.best_result is not None and not st.best_result.terminated:
            walkers.append(st.best_result.score)
        return bool(walkers) and first.score < min(walkers)

    def _keep_best(self, X, results: list[dict]) -> None:
        """The reported best (best_key: a walker before a faller)."""
        st = self.state
        preferred = min(range(len(X)), key=lambda k: best_key(results[k]))
        if best_key(results[preferred]) < best_key(st.best_result):
            self._make_best(X[preferred], results[preferred])

    def _make_best(self, x, result) -> None:
        st = self.state
        st.best_x = np.array(x)
        st.best_result, st.best_generation = result, st.generation

    def _note_thresholds(self) -> None:
        """The generation in which the reported best (after the unperturbed check, which may
        replace it) first met every objective threshold."""
        st = self.state
        if st.best_result and st.best_result.thresholds_met and st.thresholds_met_at is None:
            st.thresholds_met_at = st.generation

    def _needs_unperturbed_walk(self) -> bool:
        unperturbed = self.settings.stop_when_walking == WALKING_UNPERTURBED
        return unperturbed and self.scenario_task.eased_or_perturbed

    def _check_unperturbed(self, evaluator, X, results: list) -> None:
        """stop_when_walking "unperturbed" under a task with random perturbations or a balance
        aid: this generation's candidates that ran the full t_max under its perturbations are
        simulated again without them (and without the aid; a speed change kept), best first (at most
        UNPERTURBED_CHECKS). The first that walks the full t_max again becomes the run's best,
        even if an earlier generation's scored lower under other perturbations, and ends the run
        (_stop_reason): the walker a continuation stage hands on must walk unperturbed, not only
        have survived one push sequence."""
        st = self.state
        if not self._needs_unperturbed_walk() or self._unperturbed_walker() is not None:
            return
        walkers = sorted(
            (k for k, r in enumerate(results) if walked(r)),
            key=lambda k: best_key(results[k]),
        )[:UNPERTURBED_CHECKS]
        if not walkers:
            return
        unperturbed = dataclasses.replace(
            self.task, task=self.scenario_task.unperturbed(), perturbation_seed=None
        )
        values = [self._values(X[k]) for k in walkers]
        # with trial_speeds at each trial's speed: the walker must walk unperturbed at all of them
        per_speed = [
            evaluator.map(dataclasses.replace(unperturbed, speed=speed), values)
            for speed in self.settings.target_speeds
        ]
        for i, k in enumerate(walkers):
            at_speeds = [checks[i] for checks in per_speed]
            walks = all(walked(c) for c in at_speeds)
            check = min(at_speeds, key=lambda c: (walked(c), c.simulated_time))
            st.unperturbed_checks.append(
                {
                    "generation": st.generation,
                    "candidate": k,
                    "simulated_time": check.simulated_time,
                    "walks": walks,
                    "error": check.error,
                }
            )
            if walks:
                self._make_best(X[k], results[k])
                return

    def _unperturbed_walker(self) -> dict | None:
        return next((c for c in self.state.unperturbed_checks if c["walks"]), None)

    def _history_row(self, scores: list[float], elapsed: float, seed: int | None = None) -> dict:
        st = self.state
        row = {
            "generation": st.generation,
            "evaluations": st.evaluations,
            "best": st.best_score,
            "generation_best": scores[int(np.argmin(scores))],
            "median": float(np.median(scores)),
            "sigma": float(st.es.sigma),
            "wall_time": st.wall_time,
            "failures": st.failures,
            "generation_wall": elapsed,
            "best_simulated_time": st.best_result.simulated_time,
        }
        if seed is not None:  # a task with random perturbations: this generation's
            row["perturbation_seed"] = seed
        row.update({f"term_{k}": st.best_result.terms[k] for k in self.objective.term_names})
        row.update({f"avg_{k}": st.best_result.averages[k] for k in self.objective.term_names})
        return row

    def _show_progress(self, bar, evaluations: int, elapsed: float) -> None:
        if bar is None:
            return
        st = self.state
        bar.update(1)
        bar.set_postfix_str(
            f"best {st.best_score:.2f} ["
            + " ".join(f"{k} {st.best_result.terms[k]:.2f}" for k in self.objective.term_names)
            + f"] {evaluations / elapsed * 60:.0f} eval/min"
        )

    def _stop_reason(self) -> str | None:
        s, st = self.settings, self.state
        if st.generation >= s.generations:
            return f"generation limit ({s.generations})"
        if st.thresholds_met_at is not None and st.generation >= st.thresholds_met_at + s.extra_generations:
            return (
                f"all objective thresholds met at generation {st.thresholds_met_at}, then "
                f"{s.extra_generations} more generations"
            )
        if self._needs_unperturbed_walk():
            walker = self._unperturbed_walker()
            if walker is not None:
                return (
                    f"a candidate ran the full t_max under generation {walker['generation']}'s "
                    f"perturbations and without them (candidate {walker['candidate']})"
                )
        elif s.stop_when_walking and st.best_result and not st.best_result.terminated:
            return f"a candidate ran the full t_max at generation {st.best_generation}"
        if s.stop_when_met and self.objective.met(st.best_result, s.stop_when_met):
            return (
                f"the best candidate ran the full t_max with {', '.join(s.stop_when_met)} under "
                f"threshold at generation {st.best_generation}"
            )
        if st.best_generation >= 0 and st.generation - st.best_generation >= s.stagnation:
            return f"stagnation ({s.stagnation} generations without improvement)"
        return None

    # ------------------------------------------------------------------ outputs
    def _save(self) -> None:
        """Outputs first, the checkpoint last: a run killed in between redoes this generation
        on resume (the same candidates: the pickled CMA state carries its random generator) and
        rewrites the same outputs, instead of never writing the best of a generation the
        checkpoint already holds."""
        st, s = self.state, self.settings
        import pandas as pd

        tmp = self.out / ".history.csv.tmp"
        pd.DataFrame(st.history).to_csv(tmp, index=False, float_format="%.6g")
        os.replace(tmp, self.out / "history.csv")
        best = None
        if st.best_x is not None and st.best_generation == st.generation:
            best = self._write_best()
        self._write_log(None)
        if s.scheduler is not None and not isinstance(s.scheduler, str):
            # a dask Client object cannot be pickled: keep its scheduler's address
            s = dataclasses.replace(s, scheduler=_scheduler_address(s.scheduler))
        settings = dataclasses.asdict(s)
        settings_bytes = (json.dumps(settings, indent=1) + "\n").encode()
        write_atomic(self.out / SETTINGS_FILE, settings_bytes)
        if best is not None and s.keep_generation_bests:
            kept = self.out / generation_folder(st.generation)
            write_result(kept, best, Path(s.model), self.meta)
            write_atomic(kept / SETTINGS_FILE, settings_bytes)
        # plain data only (and the cma object): renaming or moving a class of musclewalk does not
        # break --resume of a committed run
        _atomic_pickle(
            self.out / CHECKPOINT,
            {
                "format": CHECKPOINT_FORMAT,
                "settings": settings,
                "state": {
                    f.name: getattr(st, f.name)
                    if f.name != "best_result" or st.best_result is None
                    else st.best_result.as_dict()
                    for f in dataclasses.fields(State)
                },
            },
        )

    def _write_best(self) -> dict:
        """best.json and optimized.osim of the best so far; returns best.json's content."""
        st, s = self.state, self.settings
        values = self._values(st.best_x)
        structured = self.space.structured(values)
        best = {
            "creature": self.meta.creature,
            "model": s.model,
            "speed": s.speed,
            "duration": s.duration,
            "task": s.task,
            # what it was scored under: an aid step's task with its aid scaled, where "task"
            # names the file at full aid
            "task_definition": s.task_definition,
            "seed": s.seed,
            "generation": st.best_generation,
            "evaluations": st.evaluations,
            "wall_time": st.wall_time,
            "objective": st.best_score,
            "terms": st.best_result.terms,
            "averages": st.best_result.averages,
            "objective_name": self.objective.name,
            "simulated_time": st.best_result.simulated_time,
            "terminated": st.best_result.terminated,
            "termination_reason": st.best_result.reason,
            "parameters": structured,
        }
        seed = self.perturbation_seed(st.best_generation)
        if seed is not None:  # the perturbations its objective was scored under
            best["perturbation_seed"] = seed
        if s.trials > 1:  # its objective is a mean: what re-simulating it gives is trial 0's
            best["trials"] = {
                "count": s.trials,
                "jitter": s.trial_jitter,
                "groups": list(s.trial_groups),  # []: every group
                "directions": s.trial_directions,
                # each trial's target speed, the candidate's own first (as objectives and times)
                **({"speeds": s.target_speeds} if s.trial_speeds else {}),
                "objectives": st.best_result.trial_scores,
                "simulated_times": st.best_result.trial_times,
            }
        write_result(self.out, best, Path(s.model), self.meta)
        return best

    def _trial_lines(self) -> list[str]:
        """log.txt: how a candidate is scored with several trials (none with one)."""
        s = self.settings
        if s.trials == 1:
            return []
        own = "its own perturbations" if self.scenario_task.randomized else "the same scenario"
        which = f" of the {', '.join(s.trial_groups)} parameters" if s.trial_groups else ""
        drawn = "once for the run" if s.trial_directions == TRIALS_FIXED else "per generation"
        speeds = (
            " at target speeds " + ", ".join(f"{v!r}" for v in s.target_speeds[1:]) + " m/s"
            if s.trial_speeds
            else ""
        )
        copies = (
            f"then {s.trials - 1} copies moved by +-{s.trial_jitter:g} of each range{which} "
            f"(directions drawn {drawn}, the same for every candidate)"
            if s.trial_jitter > 0
            else f"then itself {s.trials - 1} more times"
        )
        return [
            f"trials: {s.trials} simulations per candidate, its objective their mean: the candidate, "
            f"{copies}{speeds}, each under {own}; the best's trials in best.json"
        ]

    def _override_lines(self) -> list[str]:
        """log.txt lines on the run's parameter overrides (none without any)."""
        space = self.space
        if not space.overrides:
            return []
        return [
            f"parameter overrides: {json.dumps(space.overrides)} ({len(space)} of "
            f"{len(space.names) - len(space.off)} parameters optimized)",
            *space.describe_overrides(),
        ]

    def _bound_lines(self, shown: int = 12) -> list[str]:
        """A log.txt line on the best's parameters against their bounds (none without a best)."""
        st = self.state
        if st.best_x is None:
            return []
        at = self.space.at_bounds(self._values(st.best_x))
        listed = ", ".join(
            f"{name} {value:.4g} ({side} {bound:g})" for name, value, side, bound in at[:shown]
        )
        more = f", and {len(at) - shown} more" if len(at) > shown else ""
        return [
            f"best at a bound (within 1 % of its range): {len(at)} of {len(self.space)} optimized"
            + (f": {listed}{more}" if at else "")
        ]

    def _standing_lines(self) -> list[str]:
        """A log.txt line on the best's muscles whose fibres stand outside the working range
        (STANDING_FIBER_LENGTH_BOUNDS, in the base pose): a passive spring or a slack muscle,
        which the paper's independent properties allow (none without a best or a fibre)."""
        osim = self.out / "optimized.osim"
        if self.state.best_x is None or not osim.is_file():
            return []
        lo, hi = STANDING_FIBER_LENGTH_BOUNDS
        lengths = ModelVectors(self.meta).standing_lengths(parse_osim(osim))
        if not lengths:  # ideal muscles: no fibre
            return []
        outside = [(name, lengths[name]) for name in one_side(lengths) if not lo <= lengths[name] <= hi]
        listed = ", ".join(f"{name} {v:.2f}" for name, v in outside)
        return [
            f"best's fibres standing outside {lo:g}-{hi:g} optimal lengths (base pose; right side): "
            + (f"{len(outside)}: {listed}" if outside else "none")
        ]

    def _fall_ranking_lines(self) -> list[str]:
        """log.txt's warning when the objective ranked a fall above a walker (_fall_ranked_first)."""
        flagged = [row["generation"] for row in self.state.history if row.get("fall_ranked_first")]
        if not flagged:
            return []
        shown = ", ".join(map(str, flagged[-20:])) + (", ..." if len(flagged) > 20 else "")
        return [
            f"falls ranked above walkers: in {len(flagged)} of {self.state.generation} generations "
            f"(the last: {shown}) the lowest objective was a candidate that fell, below a walker's "
            "(that generation's or the best so far): the objective charges a fall less than its "
            "terms charge walking the time left, so CMA-ES moves toward falls (e.g. a time-after-"
            "termination term, as in models/objectives/human-firstpeak-cycle-cadence-upright.yaml)"
        ]

    def _write_log(self, stop: str | None) -> None:
        import cma
        import opensim

        s, st = self.settings, self.state
        lines = [
            f"command: {s.command}",
            f"model: {s.model} (creature {self.meta.creature})",
            f"speed: {s.speed} m/s, duration (t_max): {s.duration} s",
            f"objective: {s.objective} " + json.dumps(self.objective.as_dict()["terms"]),
            f"task: {s.task}: {self.scenario_task.summary()}",
            f"seed: {s.seed}, population: {s.popsize}, sigma0: {s.sigma}, "
            f"evaluator: {s.evaluator}, workers: {s.workers or os.cpu_count()}"
            + (", elitist (the best so far recombined into every generation)" if s.elitist else ""),
            *self._trial_lines(),
            f"warm start: {s.init or 'none (template defaults)'}",
            *(f"warm start: {note}" for note in st.warm_start_notes),
            f"parameters: {len(self.space)} " + json.dumps(self.space.group_counts()),
            *self._override_lines(),
            f"generations: {st.generation}, evaluations: {st.evaluations}"
            + (f" candidates of {s.trials} trials each" if s.trials > 1 else "")
            + f", failed evaluations: {st.failures}"
            + (" (simulations)" if s.trials > 1 else ""),
            f"wall time: {st.wall_time:.1f} s ({st.wall_time / 3600:.2f} h)",
            f"best objective: {st.best_score:.4f} at generation {st.best_generation}",
            "best terms: " + json.dumps(st.best_result.terms if st.best_result else {}),
            *self._bound_lines(),
            *self._standing_lines(),
            *self._fall_ranking_lines(),
            f"thresholds met at generation: {st.thresholds_met_at}",
            f"limits: {s.cpu_limit:g} CPU s per simulated s of an evaluation; wall-clock "
            f"backstop {s.backstop():g} s without a finished evaluation"
            + (
                ""
                if s.evaluator == "process" and s.workers != 1
                else " (only with worker processes: none for this evaluator)"
            ),
            f"stop: {stop or 'running (written after every generation)'}",
            f"versions: python {platform.python_version()}, opensim {opensim.__version__}, "
            f"cma {cma.__version__}, numpy {np.__version__}",
            f"numerics: {describe_cpu_dispatch()}",
            f"machine: {platform.node()} {platform.machine()} {os.cpu_count()} cores, {platform.platform()}",
            f"written: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
        ]
        if st.failure_log:
            shown = st.failure_log[-50:]
            lines.append(
                f"failed evaluations (generation, candidate, why; the last {len(shown)} of {st.failures}):"
                if len(shown) < st.failures
                else "failed evaluations (generation, candidate, why):"
            )
            lines += [
                f"  {f['generation']}, {f['candidate']}"
                + (f" (trial {f['trial']})" if "trial" in f else "")
                + f": {f['error']}"
                for f in shown
            ]
        if self._needs_unperturbed_walk() and self._unperturbed_walker() is None:
            lines.append(
                "unperturbed check: no walker has yet walked the full t_max again without the "
                "perturbations (the best above survived only its generation's)"
            )
        if st.unperturbed_checks:
            shown = st.unperturbed_checks[-50:]
            lines.append(
                "walkers simulated again without the perturbations (generation, candidate, simulated s"
                + (
                    f"; the last {len(shown)} of {len(st.unperturbed_checks)}"
                    if len(shown) < len(st.unperturbed_checks)
                    else ""
                )
                + "):"
            )
            lines += [
                f"  {c['generation']}, {c['candidate']}: {c['simulated_time']:.2f} s"
                + (" (walks)" if c["walks"] else f" ({c['error']})" if c["error"] else " (falls)")
                for c in shown
            ]
        lines += self._log_notes()
        write_atomic(self.out / "log.txt", ("\n".join(lines) + "\n").encode())

    def _log_says(self, line: str) -> bool:
        try:
            return line in (self.out / "log.txt").read_text(errors="replace").splitlines()
        except FileNotFoundError:
            return False

    def _log_notes(self) -> list[str]:
        """The "note:" lines of the run's log.txt (what people wrote about the run, e.g. why it
        was stopped and how to resume it), kept when the log is rewritten."""
        try:
            text = (self.out / "log.txt").read_text(errors="replace")
        except FileNotFoundError:
            return []
        return [line for line in text.splitlines() if line.startswith("note:")]
