"""Experiments as data: one YAML file says what an optimization is (creature, target speed,
objective, CMA-ES options, warm start) and, for a continuation chain, its stages, each
warm-started from the best of the one before. `musclewalk optimize EXPERIMENT.yaml --out DIR` and
Snakemake read the same file. Format (paths relative to the experiment file's folder):

    description: text
    extends: other.yaml                # optional: that experiment file's values under this one's
    creature: Human                    # a preset name or a creature .yaml file
    variant: human                     # optional: names the run beside others of the same
                                       # creature, task and speed (Snakemake's run
                                       # <creature>-<task>-<speed>-<variant>); [a-z][a-z0-9_]*
    task: walk                         # a name in models/tasks/ or a .yaml file (default walk):
                                       # the perturbations every evaluation is simulated under, and
                                       # speed, duration and objective where this file gives none
    speed: 1.3                         # target speed, m/s (optional when the task has one)
    objective: geijtenbeek2013         # a name in models/objectives/ or a .yaml file (default: the
                                       # task's)
    warm_start: path/to/best.json      # optional: the first stage's --init
    inherit_starts: false              # optional, with extends (default true): the extended
                                       # files' start values do not apply (the warm start's
                                       # values do), this file's own do
    init_from_other_creature: false    # the warm start is another creature's (shared names)
    defaults:                          # stage settings unless a stage says otherwise
      duration: 10                     # t_max, s (default: the task's)
      generations: 60
      seed: 1
      sigma: 0.3
      popsize: 20
    stages:                            # optional: without it one stage with the defaults
      - name: stiff_spine              # its folder: DIR/stages/<name> (the last stage: DIR)
        scale_passive: {spine_flexion: 1.5}   # passive gain bounds x factor in the stage's model
        creature: creatures/soft.yaml  # optional: the stage's model built from this creature
                                       # (a physics variant of the file's, e.g. softer foot
                                       # contact: a physics continuation; the same parameters;
                                       # the last stage runs the file's creature)
        duration: 6
        speed: 1.6                     # optional: the stage's target speed (a target-speed
                                       # continuation; the last stage runs at the file's speed)
        stop_when_walking: true        # move on once a candidate ran the full t_max
                                       # (unperturbed: and ran it again without the task's
                                       # pushes, ramps and turns, a task continuation's check)
        stop_when_met: [speed]         # or: move on once the best ran the full t_max with these
                                       # objective terms under their thresholds (a
                                       # target-speed continuation: at the stage's speed)
        trials: 3                      # simulations per candidate, CMA-ES ranking their mean
                                       # objective: the candidate, then copies moved by
        trial_jitter: 1.0e-6           # +- this fraction of each range, each under perturbations
                                       # of its own (driver.Settings.trials; default 1, 1e-6)
        trial_groups: [initial_state]  # the groups the further trials move (default: all)
        trial_directions: fixed        # one draw of directions for the run (default per_generation)
        trial_speeds: [1.05, 1.1]      # the further trials' target speeds, factors of the stage's
                                       # (one per further trial; default: all at its speed)
        elitist: true                  # CMA-ES recombines the best so far into every generation
                                       # that found none better (pycma CMA_elitist; default false)
        extra_generations: 300         # generations run on once the best meets every objective
                                       # threshold (default 20, the paper's rule; may change on
                                       # resume, as may the generation limit)
        task: tasks/push-30.yaml       # optional: the stage's task (a task continuation, e.g.
                                       # pushes stepped up; the last stage runs the file's task)
        aid_level: 0.35                # optional: the stage's task with its balance aid (assist:
                                       # upright and support) times this (Task.at_aid_level)
        objective: geijtenbeek2013-survive   # optional: the stage's objective (e.g. a first
                                       # stage that rewards staying up before the file's
                                       # objective; the last stage runs the file's)
        parameters:                    # optional: this stage's own overrides, over the file's
          knee.theta: {lower: -0.1, start: -0.1}   # (a key here takes the parameters it
                                       # matches from the file's keys)
    aid_steps:                         # optional: a balance aid taken away in steps, stages run
      task: tasks/aid.yaml             # before `stages`: one per level, named aid_<level:g>
      levels: [1, 0.7, 0.5, 0.35]      # (two levels of one name are refused), each with this
                                       # task (one with an assist) at that aid_level
      seed: 441                        # the first step's seed, each next step's one more
      objective: geijtenbeek2013-progress   # task, levels, seed required; objective and the
      duration: 5                      # stage numbers and switches above (speed ... stop_when_met)
      stop_when_walking: true          # optional, for every step (the file's start values apply
                                       # to the first step, as to a first stage)
    parameters:                        # optional: the search space of every stage
      knee.theta: {lower: 0.0}         # narrowed bounds (lower and/or upper, absolute values
                                       # within the parameter's own bounds)
      "routing.*": {fixed: 0.5}        # not optimized: held at this value
      "knee_overextension.*": {free: true}   # a controller feature beyond the paper (off unless
                                       # named), optimized within its own bounds
      stance_tibialis.stretch_gain: {start: 1.0}   # the search starts here (replaces the
                                       # default and the warm start's value)

`parameters` keys are parameter names or fnmatch patterns over them (as in a best.json, its model
section as routing.NAME, properties.NAME, passive.NAME, normalized to [0, 1]); each parameter may be
matched by one key of a file (or of a stage) only. A fixed parameter is no CMA-ES coordinate (the
dimension shrinks) and has its value in every evaluation, in best.json and in optimized.osim; a warm
start's value for it is replaced (log.txt says so). Narrowed bounds are the parameter's bounds for
the run: CMA-ES's bounds and scale (sigma explores the same fraction of the narrowed range as of a
full one), a default outside them starts at the nearest bound, and a warm-start value outside them
is refused unless --clip-init (then clipped). A start value is the CMA-ES mean's start for that
parameter, with or without a warm start (log.txt lists the replaced values).

A stage's search space (``Stage.parameters``) is the file's ``parameters`` with the stage's own
over them, parameter by parameter (a stage's key takes the parameters it matches from the file's
keys). The file's start values apply to the first stage only: a later stage
continues from the best of the one before (optimize.space.without_starts), unless its own
parameters give a start. So a constraint continuation is data: each stage narrows a bound a step
further and starts that parameter at it, e.g. a knee target moved out of hyperextension in steps
while the rest of the gait adapts. The names are checked against the creature when the file is
loaded (optimize.space: parse_overrides, resolve_overrides); a stage's checkpoint keeps the
overrides it started with and running the file again with other ones is refused.

A file that ``extends`` another (a .yaml file relative to it, itself possibly extending a third)
is that file's values with its own over them: ``defaults`` key by key (a key here replaces the
same key there), ``parameters`` parameter by parameter (a key here takes the parameters it matches
from the keys there, e.g. ``properties.hamstrings.*`` narrowed under an extended file's
``"properties.*": {hold: true}``; optimize.space.layer_overrides), every other key (``stages``
and ``aid_steps`` included) whole:
a file that gives only ``stages`` keeps the extended file's aid steps before them (``aid_steps:
null`` drops them). Relative paths are
resolved against the file that names them. Such a file gives its own ``description`` (the extended
one's would describe another experiment in every log); the extended file must be a valid
experiment on its own (its errors name it). So a try that adds one bound to another's search space
says only that, e.g. a new set of stages over the previous try's space and warm start.
The extended files' start values apply too, over a warm start of this file's own; a file that
continues from another run's best (its own ``warm_start``) says ``inherit_starts: false`` to
start from that best's values instead, keeping the extended files' bounds and its own starts.

Every stage runs in its own folder with its checkpoint: running the experiment again resumes
the unfinished stage and skips finished ones (optimize.runs.run_experiment runs the stages)."""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..io_checks import extended_file, read_yaml
from ..measures.objective import Objective, ObjectiveError, objective_file
from .space import OverrideError, ParameterSpace, layer_overrides, parse_overrides, without_starts
from .task import (
    DEFAULT_TASK,
    TRIAL_DIRECTIONS,
    TRIALS_PER_GENERATION,
    WALKING_UNPERTURBED,
    Task,
    TaskError,
    positive_number,
    task_files,
    valid_stop_when_walking,
)

STAGE_KEYS = {
    "speed": float,
    "duration": float,
    "generations": int,
    "seed": int,
    "sigma": float,
    "popsize": int,
    "stop_when_walking": "walking",  # true, false or "unperturbed" (driver.Settings)
    "stop_when_met": "terms",  # objective term names (driver.Settings.stop_when_met)
    "trials": int,  # simulations per candidate (driver.Settings.trials)
    "trial_jitter": "fraction",  # the further trials' move, a fraction of each range
    "trial_groups": "groups",  # the parameter groups the further trials move (default: all)
    "trial_directions": "directions",  # per_generation or fixed (driver.Settings.trial_directions)
    "trial_speeds": "factors",  # the further trials' speeds / the stage's (driver.Settings.trial_speeds)
    "elitist": "switch",  # the best so far recombined into every generation (driver.Settings.elitist)
    "extra_generations": "count",  # generations run on once every threshold is met (the paper's 20)
}
STAGE_ONLY_KEYS = ("name", "creature", "scale_passive", "task", "aid_level", "objective", "parameters")
AID_STEP_KEYS = ("task", "levels", "seed", "objective")  # aid_steps' own keys (and stage values)
TOP_KEYS = {
    "description",
    "extends",
    "creature",
    "speed",
    "objective",
    "warm_start",
    "inherit_starts",
    "init_from_other_creature",
    "defaults",
    "stages",
    "task",
    "parameters",
    "variant",
    "aid_steps",
}
STAGES_DIR = "stages"
# the parts of a run name <creature>-<task>-<speed>[-<variant>] (the workflow's runs, the folders
# under models/optimized/); a speed is written as str(float), e.g. 2.0
CREATURE_PATTERN = r"[A-Za-z0-9_]+"
TASK_PATTERN = r"[a-z]+"
SPEED_PATTERN = r"[0-9]+(?:\.[0-9]+)?"
VARIANT_PATTERN = r"[a-z][a-z0-9_]*"
RUN_NAME_PATTERN = (
    rf"(?P<creature>{CREATURE_PATTERN})-(?P<task>{TASK_PATTERN})-(?P<speed>{SPEED_PATTERN})"
    rf"(?:-(?P<variant>{VARIANT_PATTERN}))?"
)


class ExperimentError(ValueError):
    """A bad experiment file; the message names the file and the key."""


# the keys whose values are paths relative to the file that names them
_RELATIVE_KEYS = ("creature", "task", "objective", "warm_start")
# the sections an extending file merges key by key (parameters are layered instead)
_MERGED_KEYS = ("defaults",)
# the extended files' parameters, farthest first, under the file's own (optimize.space.layer_overrides)
_PARAMETER_LAYERS = "extends:parameters"
# how many of those layers (farthest first) lost their start values to an ``inherit_starts: false``
_LAYERS_WITHOUT_STARTS = "extends:layers-without-starts"


def stage_key(index: int, generated: int) -> str:
    """Where an experiment file writes its stage ``index`` when its aid_steps section generated
    the first ``generated`` stages: stages[i], or aid_steps.levels[k] for the k-th step."""
    return f"aid_steps.levels[{index}]" if index < generated else f"stages[{index - generated}]"


def _absolute(value, folder: Path, key: str):
    """A relative path value made absolute against ``folder`` (names and other values as given):
    warm_start is always a path, the others only as a .yaml file."""
    if not isinstance(value, str) or not value:
        return value
    if key == "warm_start" or value.endswith((".yaml", ".yml")):
        return str((folder / value).resolve())
    return value


# the full parameter space of each creature, built once per Experiment.load (its chain of extended
# files names the same creature); None outside a load
_FULL_SPACES: dict | None = None


def _full_space(creature: str) -> ParameterSpace:
    if _FULL_SPACES is None:
        return ParameterSpace.of_creature(creature)
    if creature not in _FULL_SPACES:
        _FULL_SPACES[creature] = ParameterSpace.of_creature(creature)
    return _FULL_SPACES[creature]


def _file_data(path: Path, chain: tuple) -> tuple[dict, tuple[Path, ...]]:
    """An experiment file's values with what it ``extends`` resolved (its paths made absolute)
    and the extended files, nearest first; ExperimentError naming the file and the key."""
    data = read_yaml(path, ExperimentError, "experiment file")
    if not isinstance(data, dict):
        raise ExperimentError(f"{path}: expected a mapping (creature, speed, ...)")
    data = dict(data)
    if "extends" not in data:
        if "inherit_starts" in data:
            raise ExperimentError(f"{path}: inherit_starts: only for a file that extends another")
        return data, ()
    base_path, chain = extended_file(path, data, chain, ExperimentError, "experiment")
    base_path = base_path.resolve()
    base, merged = Experiment._load(base_path, chain)  # valid on its own: its errors name it
    merged = dict(merged)
    for key in _RELATIVE_KEYS:
        if key in merged:
            merged[key] = _absolute(merged[key], base_path.parent, key)
    if isinstance(merged.get("aid_steps"), dict):
        merged["aid_steps"] = {
            k: _absolute(v, base_path.parent, k) if k in ("task", "objective") else v
            for k, v in merged["aid_steps"].items()
        }
    if isinstance(merged.get("stages"), list):
        merged["stages"] = [
            {
                **stage,
                **{
                    k: _absolute(stage[k], base_path.parent, k)
                    for k in ("creature", "task", "objective")
                    if k in stage
                },
            }
            if isinstance(stage, dict)
            else stage
            for stage in merged["stages"]
        ]
    merged.pop("inherit_starts", None)  # the extended file's own choice, not this one's
    inherit = data.get("inherit_starts", True)
    if not isinstance(inherit, bool):
        raise ExperimentError(f"{path}: inherit_starts: expected true or false")
    if not inherit:
        # the extended files' parameters all become layers whose start values are dropped
        layers = [*merged.get(_PARAMETER_LAYERS, []), merged.get("parameters") or {}]
        merged[_PARAMETER_LAYERS] = layers
        merged[_LAYERS_WITHOUT_STARTS] = len(layers)
        merged["parameters"] = {}
    for key, value in data.items():
        if key == "parameters" and isinstance(value, dict) and isinstance(merged.get(key), dict):
            # layered, not merged: which parameters a pattern matches needs the creature
            merged[_PARAMETER_LAYERS] = [*merged.get(_PARAMETER_LAYERS, []), merged[key]]
            merged[key] = value
        elif key in _MERGED_KEYS and isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged, (base.path, *base.extends)


def is_experiment_file(path) -> bool:
    """Whether ``path`` is meant as an experiment file: a YAML file that names its creature (a
    creature file does not). A bad experiment file is one (Experiment.load says what is wrong)."""
    import yaml

    from .. import yaml_io

    if not str(path).endswith((".yaml", ".yml")) or not Path(path).is_file():
        return False
    try:
        data = yaml_io.safe_load(Path(path).read_text())
    except yaml.YAMLError:
        return False
    return isinstance(data, dict) and ("creature" in data or "extends" in data)


@dataclass(frozen=True)
class Stage:
    name: str
    speed: float | None = None  # target speed of the stage (None: the experiment's)
    duration: float = 10.0
    generations: int = 100
    seed: int = 1
    sigma: float = 0.5
    popsize: int = 20
    stop_when_walking: bool | str = False  # or "unperturbed" (driver.Settings.stop_when_walking)
    stop_when_met: tuple = ()  # objective term names (driver.Settings.stop_when_met)
    trials: int = 1  # simulations per candidate, its objective their mean (driver.Settings.trials)
    trial_jitter: float = 1e-6  # the further trials' move (driver.Settings.trial_jitter)
    trial_groups: tuple = ()  # the groups the further trials move (driver.Settings.trial_groups)
    trial_directions: str = TRIALS_PER_GENERATION  # (driver.Settings.trial_directions)
    trial_speeds: tuple = ()  # the further trials' speed factors (driver.Settings.trial_speeds)
    elitist: bool = False  # the best so far recombined into every generation (driver.Settings.elitist)
    extra_generations: int = 20  # run on once every threshold is met (driver.Settings.extra_generations)
    scale_passive: dict = field(default_factory=dict)
    creature: str | None = None  # the stage's creature, as Experiment.creature (None: the
    # experiment's): a variant of its physics with the same parameters
    task: str | None = None  # the stage's task, as Experiment.task (None: the experiment's)
    aid_level: float | None = None  # the stage's task with its aid scaled (Task.at_aid_level)
    objective: str | None = None  # the stage's objective, as Experiment.objective (None: the
    # experiment's)
    parameters: dict = field(default_factory=dict)  # the stage's search space (the file's
    # overrides with the stage's own over them, stored form); {}: the full space


@dataclass(frozen=True)
class Experiment:
    name: str
    path: Path
    creature: str
    speed: float
    objective: str
    stages: tuple[Stage, ...]
    warm_start: Path | None = None
    init_from_other_creature: bool = False
    description: str = ""
    task: str = DEFAULT_TASK  # a name in models/tasks/ or the absolute path of a task file
    parameters: dict = field(default_factory=dict)  # the file's parameter overrides
    # (optimize.space), stored form; each stage's own space is Stage.parameters
    variant: str = ""  # "" or the run-name suffix of an experiment beside others of its run
    extends: tuple[Path, ...] = ()  # the files it extends, nearest first (absolute)
    aid_steps: int = 0  # how many of the stages (the first) its aid_steps section generated

    def stage_key(self, index: int) -> str:
        """Where the file writes stage ``index``: stages[i], or aid_steps for a generated one."""
        return stage_key(index, self.aid_steps)

    @property
    def files(self) -> tuple[Path, ...]:
        """What its runs depend on: the experiment file and every file it extends, and the
        creature, task (with the tasks it extends) and objective files of the file and of its
        stages, each once (a stage without an objective runs the file's). Not its warm start: a
        best.json another run may still be rewriting is where a run starts, not what defines it."""
        from ..model.template import resolve_creature

        files = [self.path, *self.extends]
        for stage in (None, *self.stages):
            creature = self.creature if stage is None else stage.creature
            task = self.task if stage is None else stage.task
            objective = self.objective if stage is None else stage.objective
            if creature is not None:
                files.append(resolve_creature(creature))
            if task is not None:
                files.extend(task_files(task))
            if objective is not None:
                files.append(objective_file(objective))
        return tuple(dict.fromkeys(Path(f).resolve() for f in files))

    def stage_dir(self, out: Path, index: int) -> Path:
        """The last stage writes the experiment's result into ``out`` itself."""
        if index == len(self.stages) - 1:
            return Path(out)
        return Path(out) / STAGES_DIR / self.stages[index].name

    @classmethod
    def load(cls, path) -> "Experiment":
        """The experiment of a file; ExperimentError naming the file and the key."""
        global _FULL_SPACES
        outermost = _FULL_SPACES is None
        if outermost:
            _FULL_SPACES = {}  # the files of one chain check their spaces against one build
        try:
            return cls._load(Path(path), ())[0]
        finally:
            if outermost:
                _FULL_SPACES = None

    @classmethod
    def _load(cls, path: Path, chain: tuple) -> tuple["Experiment", dict]:
        """The experiment of a file and its values with what it extends resolved (``chain``: the
        files extending it, to refuse a cycle)."""
        data, extends = _file_data(path, chain)

        def err(key, message):
            return ExperimentError(f"{path}: {key}: {message}")

        unknown = sorted(set(data) - TOP_KEYS - {_PARAMETER_LAYERS, _LAYERS_WITHOUT_STARTS})
        if unknown:
            raise err(unknown[0], f"unknown key (known: {', '.join(sorted(TOP_KEYS))})")
        creature = cls._creature(data.get("creature"), path, lambda m: err("creature", m))
        task_name, task = cls._task(data, path, err)
        # checked in the order of the file format (the first bad key is the one reported)
        speed = cls._speed(data, task, err)
        objective = cls._relative_file(data.get("objective", task.objective), path, "objective", err)
        try:
            Objective.load(objective)
        except ObjectiveError as exc:
            raise err("objective", str(exc)) from None
        warm_start = cls._warm_start(data.get("warm_start"), path, err)
        variant = cls._variant(data.get("variant", ""), err)
        other = data.get("init_from_other_creature", False)
        if not isinstance(other, bool):
            raise err("init_from_other_creature", "expected true or false")
        parameters = cls._overrides(data.get("parameters"), "parameters", err)
        extended = [cls._overrides(layer, "parameters", err) for layer in data.get(_PARAMETER_LAYERS, [])]
        defaults = cls._stage_values(data.get("defaults", {}) or {}, "defaults", err, stage_keys=())
        if "speed" in defaults:
            raise err(
                "defaults.speed", "the experiment's speed is its top-level speed (a stage may set its own)"
            )
        defaults.setdefault("duration", task.duration)
        raw_stages = data.get("stages")
        if raw_stages is None:
            raw_stages = [{"name": path.stem}]
        if not isinstance(raw_stages, list) or not raw_stages:
            raise err("stages", "expected a non-empty list of stages")
        aid_stages = cls._aid_steps(data.get("aid_steps"), path, err)
        stages = cls._stages([*aid_stages, *raw_stages], defaults, path, err, first=-len(aid_stages))
        stages = cls._same_creature_as_file(stages, creature)
        parameters, stages = cls._stage_spaces(
            stages,
            [*extended, parameters],
            creature,
            err,
            len(aid_stages),
            without_starts_in=data.get(_LAYERS_WITHOUT_STARTS, 0),
        )
        cls._check_stage_creatures(stages, creature, err, len(aid_stages))
        cls._check_stop_terms(stages, objective, err, len(aid_stages))
        last = f"stages[{len(raw_stages) - 1}]"
        if stages[-1].speed not in (None, speed):
            raise err(
                f"{last}.speed",
                f"the last stage runs at the experiment's speed ({speed:g} m/s), not {stages[-1].speed:g}",
            )
        if stages[-1].creature not in (None, creature):
            raise err(
                f"{last}.creature",
                f"the last stage runs the experiment's creature ({data['creature']}), which names the run, "
                f"not {stages[-1].creature}",
            )
        if stages[-1].objective not in (None, objective):
            raise err(
                f"{last}.objective",
                f"the last stage runs the experiment's objective ({data.get('objective', task.objective)}), "
                f"not {stages[-1].objective}",
            )
        if stages[-1].task not in (None, task_name):
            raise err(
                f"{last}.task",
                f"the last stage runs the experiment's task ({data.get('task', DEFAULT_TASK)}), not "
                f"{stages[-1].task}",
            )
        if stages[-1].aid_level is not None:
            raise err(
                f"{last}.aid_level",
                "the last stage runs the experiment's task as it is, without an aid level",
            )
        experiment = cls(
            name=path.stem,
            path=path.resolve(),
            creature=creature,
            speed=speed,
            objective=objective,
            stages=stages,
            warm_start=warm_start,
            init_from_other_creature=other,
            description=str(data.get("description", "")),
            task=task_name,
            parameters=parameters,
            variant=variant,
            extends=extends,
            aid_steps=len(aid_stages),
        )
        return experiment, data

    @staticmethod
    def _check_stop_terms(stages: tuple, objective: str, err, generated: int) -> None:
        """Each stage's stop_when_met names terms of the objective that have a threshold, and the
        stage does not also stop when walking; its trial_speeds has one factor per further trial
        (an error names aid_steps for a generated step: its values are written there)."""

        def written(i):
            return "aid_steps" if i < generated else stage_key(i, generated)

        loaded = None
        for i, stage in enumerate(stages):
            if stage.trial_speeds and len(stage.trial_speeds) != stage.trials - 1:
                raise err(
                    f"{written(i)}.trial_speeds",
                    f"one factor per further trial: trials {stage.trials} needs {stage.trials - 1}, "
                    f"got {len(stage.trial_speeds)}",
                )
            if not stage.stop_when_met:
                continue
            if stage.stop_when_walking:
                raise err(
                    f"{written(i)}.stop_when_met",
                    "a stage stops either when walking or when terms are met",
                )
            if stage.objective is not None:
                own = Objective.load(stage.objective)  # loaded once already (Experiment._stages)
            elif loaded is None:
                try:
                    own = loaded = Objective.load(objective)
                except ObjectiveError as exc:
                    raise err("objective", str(exc)) from None
            else:
                own = loaded
            try:
                own.check_stop_terms(stage.stop_when_met)
            except ObjectiveError as exc:
                raise err(f"{written(i)}.stop_when_met", str(exc)) from None

    @staticmethod
    def _task(data, path: Path, err) -> tuple[str, Task]:
        """(a name in models/tasks/ or the absolute path of a task file, the task)."""
        task_name = data.get("task", DEFAULT_TASK)
        if not isinstance(task_name, str) or not task_name:
            raise err("task", "expected a task name (models/tasks/) or a .yaml file")
        if task_name.endswith((".yaml", ".yml")):
            task_name = str((path.parent / task_name).resolve())
        try:
            return task_name, Task.load(task_name)
        except TaskError as exc:
            raise err("task", str(exc)) from None

    @staticmethod
    def _speed(data, task: Task, err) -> float:
        speed = data.get("speed", task.speed)
        if (
            isinstance(speed, bool)
            or not isinstance(speed, (int, float))
            or not math.isfinite(speed)
            or speed <= 0
        ):
            given = "" if "speed" in data else f" (the task '{task.name}' gives none)"
            raise err("speed", f"expected a speed > 0 (m/s), got {speed!r}{given}")
        return float(speed)

    @staticmethod
    def _relative_file(objective, path: Path, key: str, err) -> str:
        """An objective name, or a .yaml file relative to the experiment file (made absolute)."""
        if not isinstance(objective, str):
            raise err(key, "expected an objective name or a .yaml file")
        if objective.endswith((".yaml", ".yml")):
            return str((path.parent / objective).resolve())
        return objective

    @staticmethod
    def _warm_start(warm, path: Path, err) -> Path | None:
        if warm is None:
            return None
        if not isinstance(warm, str):
            raise err("warm_start", "expected the path of a best.json")
        warm = (path.parent / warm).resolve()
        if not warm.is_file():
            raise err("warm_start", f"{warm}: file not found")
        return warm

    @staticmethod
    def _variant(variant, err) -> str:
        if not isinstance(variant, str) or (variant and not re.fullmatch(VARIANT_PATTERN, variant)):
            raise err(
                "variant",
                f"expected a name of lowercase letters, digits and _ ({VARIANT_PATTERN}), got {variant!r}",
            )
        return variant

    @classmethod
    def _aid_steps(cls, raw, path: Path, err) -> list[dict]:
        """The stages of an ``aid_steps`` section (raw, as a stage list writes them; [] without
        it), its own values checked here so that an error names aid_steps, not a generated stage."""
        if raw is None:
            return []
        if not isinstance(raw, dict):
            raise err("aid_steps", f"expected a mapping ({', '.join(AID_STEP_KEYS)} and stage values)")
        if "task" not in raw:
            raise err("aid_steps.task", "required: the task whose balance aid the levels scale")
        task_name, task = cls._task(raw, path, lambda k, m: err(f"aid_steps.{k}", m))
        if not task.assist:
            raise err("aid_steps.task", f"{task_name}: has no balance aid (assist) to take away")
        levels = raw.get("levels")
        if not isinstance(levels, list) or not levels:
            raise err("aid_steps.levels", "expected a non-empty list of aid levels > 0")
        for i, level in enumerate(levels):
            if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < math.inf:
                raise err(f"aid_steps.levels[{i}]", f"expected a number > 0, got {level!r}")
        names = [f"aid_{level:g}" for level in levels]
        if len(set(names)) < len(names):
            raise err("aid_steps.levels", "a level is given twice")
        seed = raw.get("seed")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 1:
            raise err("aid_steps.seed", f"expected the first step's seed, an integer >= 1, got {seed!r}")
        values = {k: v for k, v in raw.items() if k not in AID_STEP_KEYS}
        cls._stage_values(
            values, "aid_steps", err, stage_keys=tuple(k for k in AID_STEP_KEYS if k not in STAGE_KEYS)
        )
        if "objective" in raw:
            values["objective"] = cls._relative_file(raw["objective"], path, "aid_steps.objective", err)
            try:
                Objective.load(values["objective"])
            except ObjectiveError as exc:
                raise err("aid_steps.objective", str(exc)) from None
        return [
            {**values, "name": name, "task": task_name, "aid_level": float(level), "seed": seed + i}
            for i, (name, level) in enumerate(zip(names, levels))
        ]

    @classmethod
    def _stages(cls, raw_stages: list, defaults: dict, path: Path, err, first: int = 0) -> tuple[Stage, ...]:
        """The stages, each with the defaults under its own values; ``first``: the index in the
        file's stage list of ``raw_stages[0]`` (negative: stages generated by aid_steps come
        first; an error in one names aid_steps)."""
        stages, names = [], set()
        for i, raw in enumerate(raw_stages, start=first):
            key = f"stages[{i}]" if i >= 0 else f"aid_steps.levels[{i - first}]"
            if not isinstance(raw, dict):
                raise err(key, "expected a mapping with a name")
            name = raw.get("name")
            if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
                raise err(f"{key}.name", "expected a folder name")
            if name in names:
                raise err(f"{key}.name", f"{name!r} used twice")
            names.add(name)
            scale = raw.get("scale_passive", {}) or {}
            if not isinstance(scale, dict) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in scale.values()
            ):
                raise err(f"{key}.scale_passive", "expected passive gain name -> factor > 0")
            own = {k: v for k, v in raw.items() if k not in STAGE_ONLY_KEYS}
            values = {**defaults, **cls._stage_values(own, key, err, STAGE_ONLY_KEYS)}
            creature = None
            if "creature" in raw:
                creature = cls._creature(raw["creature"], path, lambda m, key=key: err(f"{key}.creature", m))
            task = None
            if "task" in raw:
                task, loaded = cls._task(raw, path, lambda k, m, key=key: err(f"{key}.{k}", m))
            aid_level = raw.get("aid_level")
            if aid_level is not None:
                if task is None:
                    raise err(f"{key}.aid_level", "scales the stage's own task's aid: give the stage a task")
                try:
                    loaded.at_aid_level(aid_level)
                except TaskError as exc:
                    raise err(f"{key}.aid_level", str(exc)) from None
                aid_level = float(aid_level)
            objective = None
            if "objective" in raw:
                objective = cls._relative_file(raw["objective"], path, f"{key}.objective", err)
                try:
                    Objective.load(objective)
                except ObjectiveError as exc:
                    raise err(f"{key}.objective", str(exc)) from None
            stages.append(
                Stage(
                    name=name,
                    scale_passive={str(k): float(v) for k, v in scale.items()},
                    creature=creature,
                    task=task,
                    aid_level=aid_level,
                    objective=objective,
                    parameters=cls._overrides(raw.get("parameters"), f"{key}.parameters", err),
                    **values,
                )
            )
        return tuple(stages)

    @staticmethod
    def _same_creature_as_file(stages: tuple, creature: str) -> tuple:
        """The stages with a creature that is the file's under another spelling (a preset's name
        and its file) running the file's creature (None): one creature is one creature."""
        from ..model.template import CreatureError, resolve_creature

        def where(c: str):
            """The creature's file (a preset's, resolved); an unknown preset stays a name."""
            try:
                return resolve_creature(c).resolve()
            except CreatureError:
                return c  # reported where it is checked

        own = where(creature)
        return tuple(
            dataclasses.replace(stage, creature=None)
            if stage.creature is not None and where(stage.creature) == own
            else stage
            for stage in stages
        )

    @staticmethod
    def _check_stage_creatures(stages: tuple, creature: str, err, generated: int) -> None:
        """A stage's own creature is the file's creature but for its physics (the same bodies,
        muscles, contacts and parameters with their bounds): the stages warm-start each other by
        name, and the search space was checked against the file's."""
        own = {stage.creature for stage in stages if stage.creature not in (None, creature)}
        if not own:
            return
        from ..model.meta import build_meta
        from ..model.template import load_creature

        def body(c) -> dict:
            """The model's metadata but for what names it and its physics."""
            meta = build_meta(load_creature(c)).to_dict()
            return {k: v for k, v in meta.items() if k not in ("creature", "source", "physics")}

        try:
            base = body(creature)
        except (ValueError, OSError) as exc:
            raise err("creature", f"cannot check the stages' creatures against it: {exc}") from None
        for i, stage in enumerate(stages):
            if stage.creature not in own:
                continue
            key = f"{stage_key(i, generated)}.creature"
            try:
                got = body(stage.creature)
            except (ValueError, OSError) as exc:
                raise err(key, str(exc)) from None
            differ = [k for k in base if got.get(k) != base[k]]
            if differ:
                raise err(
                    key,
                    f"it differs from the experiment's creature in {', '.join(differ)}: a stage's "
                    "creature may change the physics only",
                )

    @staticmethod
    def _creature(creature, path: Path, err) -> str:
        """A preset name, or a creature .yaml file relative to the experiment file (absolute)."""
        if not isinstance(creature, str) or not creature:
            raise err("expected a creature preset name or a creature .yaml file")
        if creature.endswith((".yaml", ".yml")):
            creature = str((path.parent / creature).resolve())
            if not Path(creature).is_file():
                raise err(f"{creature}: file not found")
            return creature
        from ..model.template import CreatureError, resolve_creature

        try:
            resolve_creature(creature)
        except CreatureError as exc:
            raise err(str(exc)) from None
        return creature

    @staticmethod
    def _overrides(raw, key: str, err) -> dict:
        """Parameter overrides in their stored form (structure only; _stage_spaces checks them
        against the creature)."""
        try:
            return parse_overrides(raw)
        except OverrideError as exc:
            raise err(exc.key.replace("parameters", key, 1), exc.reason) from None

    @staticmethod
    def _stage_spaces(
        stages: tuple, layers: list[dict], creature: str, err, generated: int, without_starts_in: int = 0
    ) -> tuple[dict, tuple[Stage, ...]]:
        """The file's overrides and the stages with their search spaces. The file's are its own
        over those of the files it extends (``layers``, farthest first; layer_overrides; the first
        ``without_starts_in`` of them without their start values: ``inherit_starts: false``); a
        stage's space is the file's (without their start values after the first stage) with the
        stage's own over them; all checked against the creature's parameters (its template's,
        without building the model); an error names the key where it was written."""
        if not any(layers) and not any(stage.parameters for stage in stages):
            return {}, stages
        try:
            full = _full_space(creature)
        except (ValueError, OSError) as exc:
            raise err("creature", f"cannot check the parameters against it: {exc}") from None
        names = list(full.names)
        parameters: dict = {}
        for i, layer in enumerate(layers, start=1):
            parameters = layer_overrides(parameters, layer, names)
            if i == without_starts_in:
                # after the layering, so that a key giving only a start keeps its parameter out of
                # an earlier layer's pattern (e.g. one muscle's property under "properties.*": hold)
                parameters = without_starts(parameters, full.entries)
        out = []
        for i, stage in enumerate(stages):
            inherited = parameters if i == 0 else without_starts(parameters, full.entries)
            space = layer_overrides(inherited, stage.parameters, names)
            try:
                ParameterSpace(full.meta, full.control_model, space)
            except OverrideError as exc:
                own = any(exc.key.startswith(f"parameters[{pattern}]") for pattern in stage.parameters)
                where = f"{stage_key(i, generated)}.parameters" if own else "parameters"
                raise err(exc.key.replace("parameters", where, 1), exc.reason) from None
            out.append(dataclasses.replace(stage, parameters=space))
        return parameters, tuple(out)

    @staticmethod
    def _stage_values(raw, key, err, stage_keys: tuple = STAGE_ONLY_KEYS) -> dict:
        """The numbers and switches of a stage (or of ``defaults``, which has no stage-only keys:
        ``stage_keys`` are the other keys the error message lists as known)."""
        if not isinstance(raw, dict):
            raise err(key, "expected a mapping")
        out = {}
        for name, value in raw.items():
            kind = STAGE_KEYS.get(name)
            if kind is None:
                raise err(
                    f"{key}.{name}",
                    f"unknown key (known: {', '.join((*stage_keys, *STAGE_KEYS))})",
                )
            if kind == "walking":
                ok = valid_stop_when_walking(value)
            elif kind in ("terms", "groups"):  # [] clears a stop rule the defaults set
                ok = isinstance(value, list) and all(isinstance(n, str) and n for n in value)
            elif kind == "directions":
                ok = value in TRIAL_DIRECTIONS
            elif kind == "factors":
                ok = isinstance(value, list) and all(positive_number(f) for f in value)
            elif kind is int:
                ok = isinstance(value, int) and not isinstance(value, bool) and value >= 1
            elif kind == "count":
                ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
            elif kind == "fraction":
                ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 0.1
            elif kind == "switch":
                ok = isinstance(value, bool)
            else:
                ok = (
                    isinstance(value, (int, float))
                    and not isinstance(value, bool)
                    and math.isfinite(value)
                    and value > 0
                )
            if not ok:
                wanted = {
                    "walking": f"true, false or {WALKING_UNPERTURBED}",
                    "terms": "a list of objective term names (e.g. [speed])",
                    "groups": "a list of parameter group names (e.g. [initial_state])",
                    "directions": " or ".join(TRIAL_DIRECTIONS),
                    "factors": "a list of numbers > 0 (factors of the stage's speed)",
                    int: "an integer >= 1",
                    "count": "an integer >= 0",
                    "fraction": "a fraction of the range in [0, 0.1]",
                    "switch": "true or false",
                    float: "a number > 0",
                }
                raise err(f"{key}.{name}", f"expected {wanted[kind]}, got {value!r}")
            if kind in ("walking", "switch", "directions"):
                out[name] = value
            elif kind in ("terms", "groups"):
                out[name] = tuple(value)
            elif kind == "factors":
                out[name] = tuple(float(f) for f in value)
            elif kind == "fraction":
                out[name] = float(value)
            elif kind == "count":
                out[name] = int(value)
            else:
                out[name] = kind(value)
        return out
