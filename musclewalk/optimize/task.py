"""Tasks as data: what an evaluation simulates and scores. A task file (``models/tasks/NAME.yaml``,
or any .yaml file) gives the target speed, t_max and objective a new run takes where it is not told
otherwise, and the random perturbations every evaluation of the run is simulated under: a heading
path with random turns at a fixed turning rate (paper §6, steering), pushes on the trunk in random
horizontal directions (0.2 s each), and terrain of 1 m ramps whose slope changes randomly each
metre. Format (every key optional; the format is also documented in models/README.md):

    description: text
    speed: 4.0                  # target speed, m/s; absent: the run's (--speed, experiment speed)
    duration: 10                # t_max, s (default 10)
    objective: geijtenbeek2013  # a name in models/objectives/ or a .yaml file (relative to this
                                # file's folder); default geijtenbeek2013
    heading:                    # random turns (HeadingPath); absent: straight ahead
      turn_rate: 12             # deg/s at which the target heading turns (0: straight)
      hold: 3                   # s between new heading goals (default 3)
      max_change: 60            # deg: a new goal lies within this of the current heading (60)
    pushes:                     # random pushes on the trunk (0.2 s each); absent: none
      magnitude: 100            # N, horizontal, in a random direction
      start: 1.0                # s: the first push (default 1)
      interval: 1.0             # s between pushes (default 1)
      jitter: 0.25              # s: each push starts up to this much earlier or later (default 0)
    terrain:                    # ramps (RampTerrain); absent: flat ground
      max_slope: 5              # deg: each 1 m ramp's slope is uniform in [-max_slope, max_slope]
    assist:                     # a balance aid on the trunk (scenario.Assist), beyond the paper:
                                # for bootstrap stages, taken away stage by stage; absent: none
      upright: 0.5              # torque toward the trunk's base-pose orientation at the target
                                # heading, M g L per rad
      support: 0.2              # constant upward force, a fraction of body weight
      hold_heading: true        # false: the upright torque leaves the yaw free (default true)
    speed_change:               # the target speed changing within the run (scenario.SpeedChange),
                                # beyond the paper; absent: the speed throughout
      start: 2                  # s: the target holds the run's speed until then
      duration: 6               # s: and moves linearly to factor x speed over this (0: a step)
      factor: 1.1               # the target after the change, times the run's speed
    termination:                # the paper's early-termination rules (§5), tightened; absent: as
                                # the paper has them
      max_heading_error: 20     # deg: the trunk heading's largest error before the run ends
                                # (default 45, the paper's); for aid stages that leave the heading
                                # to the walker, so that the aid cannot carry a gait that yaws

Precedence for a new run: a value given explicitly (command line, or an experiment file's speed,
stage duration and objective) wins over the task's, and the task's over the optimizer's defaults.
The perturbations come from the task only. A resumed run keeps the task definition stored in its
checkpoint, whatever the file says by then.

Common random numbers: every candidate of a generation is simulated under the same perturbations
(the same heading path, push times and directions, ramps), drawn anew each generation from the
seed ``generation_seed(run seed, generation)``; history.csv records it per generation
(``perturbation_seed``). A task without random perturbations (walk, run) simulates exactly the
plain straight, flat scenario and needs no seed."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from ..constants import CONTROL_INTERVAL
from ..io_checks import extended_file, read_json_object, read_yaml
from ..measures.objective import DEFAULT_OBJECTIVE, Objective, ObjectiveError
from ..model.template import models_dir
from ..sim.scenario import MAX_DURATION, PUSH_DURATION, Assist, Push, Scenario, SpeedChange, top_target_speed
from ..sim.termination import MAX_HEADING_ERROR
from ..sim.terrain import MAX_LENGTH, RampTerrain

DEFAULT_TASK = "walk"
DEFAULT_DURATION = 10.0  # s, as the optimizer's default t_max
WALKING_UNPERTURBED = "unperturbed"  # stop_when_walking: the walker must also walk without the
# task's perturbations (driver.Settings.stop_when_walking)
TOP_KEYS = (
    "description",
    "speed",
    "duration",
    "objective",
    "heading",
    "pushes",
    "terrain",
    "assist",
    "termination",
    "speed_change",
    "extends",
)
# the perturbation sections: the independent random streams of one perturbation seed (SeedSequence
# spawn keys), each merged key by key over an extended task's
STREAMS = ("heading", "pushes", "terrain")
MERGED_SECTIONS = (*STREAMS, "assist", "termination", "speed_change")
PAPER_MAX_HEADING_ERROR = round(math.degrees(MAX_HEADING_ERROR), 9)  # deg, the paper's heading rule


def positive_number(value) -> bool:
    """A finite number above 0, not a bool (a trial_speeds factor)."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return number and math.isfinite(value) and value > 0


def valid_stop_when_walking(value) -> bool:
    """A stage's stop rule: true, false or WALKING_UNPERTURBED."""
    return isinstance(value, bool) or value == WALKING_UNPERTURBED


class TaskError(ValueError):
    """A bad task file; the message names the file and the key."""


def generation_seed(run_seed: int, generation: int, trial: int = 0) -> int:
    """The perturbation seed of ``generation`` (1-based, as history.csv counts) of a run with
    CMA-ES seed ``run_seed``: numpy's SeedSequence(run_seed, spawn_key=(generation,)), its first
    32-bit word. Deterministic across machines and numpy versions (SeedSequence's algorithm is
    fixed), different for every generation, and a function of the checkpointed settings and the
    generation count only, so a resumed run draws the same perturbations. ``trial`` k >= 1: the
    seed of a candidate's k-th further simulation in a run with several trials per candidate
    (driver.Settings.trials), spawn key (generation, k)."""
    key = (int(generation),) if trial == 0 else (int(generation), int(trial))
    return int(np.random.SeedSequence(int(run_seed), spawn_key=key).generate_state(1)[0])


TRIALS_PER_GENERATION = "per_generation"  # trial directions drawn anew each generation
TRIALS_FIXED = "fixed"  # drawn once for the run: a deterministic objective
TRIAL_DIRECTIONS = (TRIALS_PER_GENERATION, TRIALS_FIXED)


def trial_signs(run_seed: int, generation: int, trial: int, size: int) -> np.ndarray:
    """The directions (+-1 per CMA-ES coordinate) in which trial ``trial`` (>= 1) of
    ``generation`` moves every candidate (driver.Settings.trial_jitter): the same for all
    candidates of a generation (common random numbers), drawn anew each generation, from the
    checkpointed seed and the generation count only (spawn key (generation, trial, 0), distinct
    from the perturbation seeds'). Generation 0 is the run's fixed draw (trial_directions
    "fixed")."""
    seq = np.random.SeedSequence(int(run_seed), spawn_key=(int(generation), int(trial), 0))
    return np.where(np.random.default_rng(seq).random(size) < 0.5, -1.0, 1.0)


def stream_seeds(seed: int) -> dict[str, int]:
    """Independent seeds for the heading path, the pushes and the terrain of one perturbation
    seed (one stream each, so that e.g. the first ramp's slope is not the first turn scaled)."""
    return {
        name: int(np.random.SeedSequence(int(seed), spawn_key=(k,)).generate_state(1)[0])
        for k, name in enumerate(STREAMS)
    }


@dataclass(frozen=True)
class Heading:
    turn_rate: float = 0.0  # deg/s; 0: straight
    hold: float = 3.0  # s between new goals
    max_change: float = 60.0  # deg


@dataclass(frozen=True)
class Pushes:
    magnitude: float  # N
    start: float = 1.0  # s
    interval: float = 1.0  # s
    jitter: float = 0.0  # s

    def draw(self, duration: float, seed: int) -> list[Push]:
        """The pushes that start within ``duration``: the k-th at start + k x interval, moved by
        a uniform draw in [-jitter, jitter], in a uniform random horizontal direction."""
        rng = np.random.default_rng(seed)
        out = []
        k = 0
        while (nominal := self.start + k * self.interval) < duration:
            when = nominal + rng.uniform(-self.jitter, self.jitter)
            angle = rng.uniform(0.0, 2.0 * math.pi)
            if when < duration:
                force = (self.magnitude * math.cos(angle), 0.0, self.magnitude * math.sin(angle))
                out.append(Push(max(when, 0.0), force))
            k += 1
        return out


@dataclass(frozen=True)
class Terrain:
    max_slope: float  # deg


@dataclass(frozen=True)
class Task:
    name: str
    description: str = ""
    speed: float | None = None  # m/s; None: the run gives it
    duration: float = DEFAULT_DURATION  # s
    objective: str = DEFAULT_OBJECTIVE
    heading: Heading = field(default_factory=Heading)
    pushes: Pushes | None = None
    terrain: Terrain | None = None
    assist: Assist | None = None
    max_heading_error: float = PAPER_MAX_HEADING_ERROR  # deg (termination.max_heading_error)
    speed_change: SpeedChange | None = None
    source: str = ""  # the file (or checkpoint) it was read from

    @property
    def randomized(self) -> bool:
        """Whether evaluations are simulated under random perturbations (and need a seed)."""
        return self.heading.turn_rate > 0 or self.pushes is not None or self.terrain is not None

    @property
    def eased_or_perturbed(self) -> bool:
        """Whether evaluations differ from plain straight walking on flat ground: random
        perturbations or a balance aid (what stop_when_walking "unperturbed" takes away; a speed
        change is the task itself, kept: `unperturbed`)."""
        return self.randomized or self.assist is not None

    def unperturbed(self) -> "Task | None":
        """This task without its perturbations and aid, as stop_when_walking "unperturbed"
        re-simulates a walker: None (the plain straight scenario, the paper's heading rule) for a
        task without a speed change, else a task with only that change."""
        if self.speed_change is None:
            return None
        return Task(
            name=f"{self.name}-unperturbed",
            description="the speed change alone",
            speed_change=self.speed_change,
            source=f"{self.source} without its perturbations",
        )

    def as_dict(self) -> dict:
        """Plain data, as a checkpoint keeps it (Task.from_dict reads it back); the termination
        section only when it differs from the paper's and the speed change only when there is one
        (the checkpoints of runs before them stay equal to their files)."""
        data = {
            "description": self.description,
            "speed": self.speed,
            "duration": self.duration,
            "objective": self.objective,
            "heading": asdict(self.heading),
            "pushes": asdict(self.pushes) if self.pushes else None,
            "terrain": asdict(self.terrain) if self.terrain else None,
            "assist": self.assist.as_dict() if self.assist else None,
        }
        if self.max_heading_error != PAPER_MAX_HEADING_ERROR:
            data["termination"] = {"max_heading_error": self.max_heading_error}
        if self.speed_change is not None:
            data["speed_change"] = self.speed_change.as_dict()
        return data

    def at_aid_level(self, level: float) -> "Task":
        """This task with its balance aid scaled: upright torque and support times ``level`` (a
        step of an aid continuation, the experiment format's ``aid_level``). TaskError when the
        task has no aid or ``level`` is not > 0."""
        if not self.assist:
            raise TaskError(f"{self.source}: assist: no balance aid to scale (aid level {level!r})")
        if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < math.inf:
            raise TaskError(f"{self.source}: aid level: expected a number > 0, got {level!r}")
        assist = replace(
            self.assist, upright=self.assist.upright * level, support=self.assist.support * level
        )
        description = f"{self.description}; its aid at {level:g} of that" if self.description else ""
        scaled = replace(self, name=f"{self.name}-{level:g}", description=description, assist=assist)
        # the scaled aid within the assist section's bounds (e.g. support below body weight)
        Task.from_dict(scaled.as_dict(), scaled.name, source=f"{self.source} at aid level {level:g}")
        return scaled

    def summary(self) -> str:
        """One line for log.txt: the perturbations."""
        parts = []
        if self.heading.turn_rate > 0:
            h = self.heading
            parts.append(
                f"random turns at {h.turn_rate:g} deg/s (a new goal every {h.hold:g} s within "
                f"+-{h.max_change:g} deg)"
            )
        if self.pushes:
            p = self.pushes
            parts.append(
                f"pushes of {p.magnitude:g} N for {PUSH_DURATION:g} s in random directions from "
                f"{p.start:g} s every {p.interval:g} s (+-{p.jitter:g} s)"
            )
        if self.terrain:
            parts.append(f"1 m ramps within +-{self.terrain.max_slope:g} deg")
        aid = f"; {self.assist.describe()}" if self.assist else ""
        if self.speed_change is not None:
            aid += f"; {self.speed_change.describe()}"
        if self.max_heading_error != PAPER_MAX_HEADING_ERROR:
            aid += (
                f"; ends when the trunk heading is more than {self.max_heading_error:g} deg off "
                f"(the paper's {PAPER_MAX_HEADING_ERROR:g})"
            )
        if not parts:
            return "straight, flat ground, no random perturbations" + aid
        return (
            "; ".join(parts) + "; common random numbers: one perturbation seed per generation "
            "(history.csv perturbation_seed)" + aid
        )

    def check_run(self, speed: float, duration: float) -> None:
        """TaskError when the task cannot be simulated at ``speed`` for ``duration`` (more ramps
        than RampTerrain allows)."""
        if self.terrain is not None:
            top = top_target_speed(speed, duration, self.speed_change)
            length = RampTerrain.run_length(top, duration)
            if length > MAX_LENGTH:
                raise TaskError(
                    f"{self.source}: terrain: {length:g} m of ramps for {top:g} m/s over "
                    f"{duration:g} s, at most {MAX_LENGTH:g} m: shorten the duration"
                )

    def scenario(
        self,
        speed: float,
        duration: float,
        seed: int | None = None,
        control_interval: float = CONTROL_INTERVAL,
    ) -> tuple[Scenario, RampTerrain | None]:
        """(scenario, terrain or None) of one evaluation at ``speed`` for ``duration`` under the
        perturbations of ``seed`` (the generation's, `generation_seed`). A task without random
        perturbations gives the plain straight scenario on flat ground and ignores ``seed``."""
        if not self.randomized:
            scenario = Scenario(
                speed=speed,
                duration=duration,
                control_interval=control_interval,
                assist=self.assist,
                max_heading_error=math.radians(self.max_heading_error),
                speed_change=self.speed_change,
            )
            return scenario, None
        if seed is None:
            raise ValueError(f"task {self.name}: random perturbations need a seed")
        seeds = stream_seeds(seed)
        pushes = self.pushes.draw(duration, seeds["pushes"]) if self.pushes else []
        scenario = Scenario.for_run(
            speed,
            duration,
            turn_rate_deg=self.heading.turn_rate,
            turn_hold=self.heading.hold,
            turn_max_change_deg=self.heading.max_change,
            pushes=pushes,
            seed=seeds["heading"],
            control_interval=control_interval,
            assist=self.assist,
            max_heading_error_deg=self.max_heading_error,
            speed_change=self.speed_change,
        )
        terrain = None
        if self.terrain is not None:
            terrain = RampTerrain.for_run(
                self.terrain.max_slope, scenario.top_speed, duration, seed=seeds["terrain"]
            )
        return scenario, terrain

    # ------------------------------------------------------------------ reading
    @classmethod
    def load(cls, name_or_path: str | Path = DEFAULT_TASK) -> "Task":
        """A task by name (a file in models/tasks/) or by path (.yaml, .yml); a file that
        ``extends`` another task is that task with the file's values over it."""
        path = _task_path(name_or_path)
        data, _ = _file_data(path, ())
        return cls.from_dict(data, path.stem, source=str(path), folder=path.parent)

    @classmethod
    def from_dict(cls, data, name: str, source: str = "task", folder: Path | None = None) -> "Task":
        """A task from its file's data (``folder``: the file's folder, for a relative objective
        file, which is then checked) or from ``as_dict`` output (a checkpoint: ``folder`` None,
        the objective is taken as stored). TaskError naming ``source`` and the key."""
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise TaskError(f"{source}: expected a mapping ({', '.join(TOP_KEYS)})")
        read = _Reader(data, source)
        unknown = sorted(set(map(str, data)) - set(TOP_KEYS))
        if unknown:
            raise read.err(unknown[0], f"unknown key (known: {', '.join(TOP_KEYS)})")
        if "extends" in data:
            raise read.err("extends", "resolved only when a task file is loaded (Task.load)")
        description = data.get("description", "")
        if not isinstance(description, str):
            raise read.err("description", "expected text")
        speed = data.get("speed")
        return cls(
            name=name,
            description=description,
            speed=None if speed is None else read.number("speed", speed, unit=" (m/s)"),
            duration=read.number(
                "duration", data.get("duration", DEFAULT_DURATION), high=MAX_DURATION, unit=" (t_max, s)"
            ),
            objective=_objective(read, data.get("objective", DEFAULT_OBJECTIVE), folder),
            heading=_heading(read),
            pushes=_pushes(read),
            terrain=_terrain(read),
            assist=_assist(read),
            max_heading_error=_max_heading_error(read),
            speed_change=_speed_change(read),
            source=source,
        )

    @classmethod
    def straight(cls) -> "Task":
        """The scenario of every run from before task files (their checkpoints resume with it):
        straight walking on flat ground, no random perturbations."""
        return cls(name=DEFAULT_TASK, description="straight walking on flat ground", source="built-in")


@dataclass(frozen=True)
class ScoredConditions:
    """What an optimizer's best was scored under (scored_conditions)."""

    task: Task
    perturbation_seed: int | None
    speed: float
    duration: float


def scored_conditions(best_path: str | Path) -> ScoredConditions:
    """The task, perturbation seed, speed and t_max an optimizer's ``best.json`` was scored under:
    its ``task_definition`` (an aid step's scaled aid included), or for a best written before it
    kept one, the ``task_definition`` of the settings.json beside it (the run's stored task); a
    best with neither is straight walking on flat ground. TaskError naming the file and key."""
    path = Path(best_path)
    data = read_json_object(path, TaskError, "optimizer best")
    for key in ("speed", "duration"):
        value = data.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
            raise TaskError(f"{path}: {key}: expected the run's positive {key}, got {value!r}")
    definition, source = data.get("task_definition"), path
    if definition is None and (path.parent / "settings.json").is_file():
        source = path.parent / "settings.json"
        definition = read_json_object(source, TaskError, "run settings file").get("task_definition")
    name = Path(str(data.get("task") or DEFAULT_TASK)).stem
    if definition is None and name != DEFAULT_TASK:
        raise TaskError(
            f"{path}: task_definition: missing here and in a settings.json beside it (task {name})"
        )
    task = (
        Task.straight()
        if definition is None
        else Task.from_dict(definition, name, source=f"{source}: task_definition")
    )
    seed = data.get("perturbation_seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise TaskError(f"{path}: perturbation_seed: expected an integer >= 0, got {seed!r}")
    if task.randomized and seed is None:
        raise TaskError(f"{path}: perturbation_seed: missing, and its task {name} draws random perturbations")
    return ScoredConditions(task, seed, float(data["speed"]), float(data["duration"]))


def task_files(name_or_path: str | Path) -> tuple[Path, ...]:
    """The file of a task and the files it extends, nearest first."""
    return _file_data(_task_path(name_or_path), ())[1]


def _task_path(name_or_path: str | Path, source: str | None = None) -> Path:
    """The file of a task name (models/tasks/NAME.yaml) or the .yaml path itself. TaskError for
    an unknown name (naming ``source``, the key that named it, when given)."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml"):
        return path
    folder = models_dir() / "tasks"
    path = folder / f"{name_or_path}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in folder.glob("*.yaml"))
        where = f"{source}: " if source else ""
        raise TaskError(
            f"{where}task {name_or_path!r}: unknown (known: {', '.join(known)}; or give a .yaml file)"
        )
    return path


def _file_data(path: Path, chain: tuple) -> tuple[dict, tuple[Path, ...]]:
    """A task file's values with what it ``extends`` resolved (the extended task's values, its own
    chain resolved first, then this file's over them, the heading, pushes and terrain sections key
    by key), and the files read, this one first. A relative objective file is made absolute
    against the file that names it."""
    data = read_yaml(path, TaskError, "task file")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise TaskError(f"{path}: expected a mapping ({', '.join(TOP_KEYS)})")
    data = dict(data)
    objective = data.get("objective")
    if isinstance(objective, str) and objective.endswith((".yaml", ".yml")):
        data["objective"] = str((path.parent / objective).resolve())
    if "extends" not in data:
        return data, (path,)
    base_path, chain = extended_file(path, data, chain, TaskError, "task", _task_path)
    merged, read = _file_data(base_path, chain)
    Task.from_dict(dict(merged), base_path.stem, source=str(base_path))  # its own errors name it
    for key, value in data.items():
        if key in MERGED_SECTIONS and isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged, (path, *read)


class _Reader:
    """Checks of one task file's values; errors name the file (``source``) and the key."""

    def __init__(self, data: dict, source: str):
        self.data, self.source = data, source

    def err(self, key: str, message: str) -> TaskError:
        return TaskError(f"{self.source}: {key}: {message}")

    def number(self, key, value, low=0.0, strict=True, high=math.inf, unit="") -> float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        ok = ok and (value > low if strict else value >= low) and value <= high
        if not ok:
            bound = f"> {low:g}" if strict else f">= {low:g}"
            upper = f" and <= {high:g}" if math.isfinite(high) else ""
            raise self.err(key, f"expected a number {bound}{upper}{unit}, got {value!r}")
        return float(value)

    def section(self, key: str, known: tuple) -> dict | None:
        """The mapping under ``key`` (None when absent), with only ``known`` keys."""
        raw = self.data.get(key)
        if raw is None:
            return None
        if not isinstance(raw, dict):
            raise self.err(key, f"expected a mapping ({', '.join(known)})")
        extra = sorted(set(map(str, raw)) - set(known))
        if extra:
            raise self.err(f"{key}.{extra[0]}", f"unknown key (known: {', '.join(known)})")
        return raw


def _objective(read: _Reader, objective, folder: Path | None) -> str:
    """An objective name, or a .yaml file relative to ``folder``; checked when read from a file."""
    if not isinstance(objective, str) or not objective:
        raise read.err("objective", "expected an objective name (models/objectives/) or a .yaml file")
    if folder is not None:
        if objective.endswith((".yaml", ".yml")):
            objective = str((folder / objective).resolve())
        try:
            Objective.load(objective)
        except ObjectiveError as exc:
            raise read.err("objective", str(exc)) from None
    return objective


def _heading(read: _Reader) -> Heading:
    raw = read.section("heading", ("turn_rate", "hold", "max_change"))
    if raw is None:
        return Heading()
    return Heading(
        turn_rate=read.number("heading.turn_rate", raw.get("turn_rate", 0.0), strict=False, unit=" (deg/s)"),
        hold=read.number("heading.hold", raw.get("hold", Heading.hold), unit=" (s)"),
        max_change=read.number(
            "heading.max_change", raw.get("max_change", Heading.max_change), high=180.0, unit=" (deg)"
        ),
    )


def _pushes(read: _Reader) -> Pushes | None:
    raw = read.section("pushes", ("magnitude", "start", "interval", "jitter"))
    if raw is None:
        return None
    if "magnitude" not in raw:
        raise read.err("pushes.magnitude", "required: the force of each push (N)")
    pushes = Pushes(
        magnitude=read.number("pushes.magnitude", raw["magnitude"], unit=" (N)"),
        start=read.number("pushes.start", raw.get("start", Pushes.start), strict=False, unit=" (s)"),
        interval=read.number("pushes.interval", raw.get("interval", Pushes.interval), unit=" (s)"),
        jitter=read.number("pushes.jitter", raw.get("jitter", Pushes.jitter), strict=False, unit=" (s)"),
    )
    if pushes.jitter > pushes.start:
        raise read.err("pushes.jitter", f"{pushes.jitter:g} s is more than pushes.start ({pushes.start:g} s)")
    if 2 * pushes.jitter + PUSH_DURATION > pushes.interval + 1e-12:
        raise read.err(
            "pushes.jitter",
            f"pushes of {PUSH_DURATION:g} s every {pushes.interval:g} s +- {pushes.jitter:g} s "
            f"could overlap (need 2 x jitter + {PUSH_DURATION:g} <= interval)",
        )
    return pushes


def _terrain(read: _Reader) -> Terrain | None:
    raw = read.section("terrain", ("max_slope",))
    if raw is None:
        return None
    if "max_slope" not in raw:
        raise read.err("terrain.max_slope", "required: the largest ramp slope (deg)")
    value = raw["max_slope"]
    ok = (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 < value < 45
    )
    if not ok:
        raise read.err("terrain.max_slope", f"expected a number > 0 and < 45 (deg), got {value!r}")
    return Terrain(max_slope=float(value))


def _assist(read: _Reader) -> Assist | None:
    raw = read.section("assist", ("upright", "support", "hold_heading"))
    if raw is None:
        return None
    hold_heading = raw.get("hold_heading", True)
    if not isinstance(hold_heading, bool):
        raise read.err("assist.hold_heading", f"expected true or false, got {hold_heading!r}")
    assist = Assist(
        upright=read.number("assist.upright", raw.get("upright", 0.0), strict=False, unit=" (M g L per rad)"),
        support=read.number(
            "assist.support", raw.get("support", 0.0), strict=False, high=0.9, unit=" (of body weight)"
        ),
        hold_heading=hold_heading,
    )
    return assist if assist else None


def _max_heading_error(read: _Reader) -> float:
    raw = read.section("termination", ("max_heading_error",))
    if raw is None:
        return PAPER_MAX_HEADING_ERROR
    return read.number(
        "termination.max_heading_error",
        raw.get("max_heading_error", PAPER_MAX_HEADING_ERROR),
        high=180.0,
        unit=" (deg)",
    )


def _speed_change(read: _Reader) -> SpeedChange | None:
    raw = read.section("speed_change", ("start", "duration", "factor"))
    if raw is None:
        return None
    for key in ("start", "duration", "factor"):
        if key not in raw:
            raise read.err(f"speed_change.{key}", "required (start s, duration s, factor)")
    return SpeedChange(
        start=read.number("speed_change.start", raw["start"], strict=False, unit=" (s)"),
        duration=read.number("speed_change.duration", raw["duration"], strict=False, unit=" (s)"),
        factor=read.number("speed_change.factor", raw["factor"], unit=" (times the run's speed)"),
    )
