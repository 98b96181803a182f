"""Robustness of an optimized controller, measured the same way every time (paper Table 4's push,
slope and turning columns, and beyond the paper how far its target speed may change while it
walks): ``musclewalk robustness RUN_DIR --test push|slope|turn|faster|slower -o OUT.json``.

Protocol (the README's *Robustness* paragraph says the same). A *trial* is one closed-loop run
(`Simulator.run`, the paper's termination rules on) of the run folder's controller
(optimized.osim + best.json) at its target speed for ``duration`` s under one perturbation
*level*. Per seed the level starts at ``start`` and goes up by ``step`` until the first trial that
fails; the seed's result is the last level survived (None when the first level already fails,
i.e. below ``start``), and the protocol's result is the median over the seeds. Stepping also
ends, with the seed marked ``capped``, after ``maximum`` (or the largest valid level: slopes
below 45 deg; at most MAX_LEVELS levels) has been survived: the value is then a lower bound.

push   Pushes of the level's magnitude F (N) on the trunk for 0.2 s (PUSH_DURATION), the first
       at PUSH_START = 1 s and then every PUSH_INTERVAL = 1 s while the run lasts (no jitter),
       each in a random horizontal direction (uniform over 360 deg; `sim.scenario.random_pushes`
       seeded with the seed). A trial fails when a termination rule fires (or the integrator
       fails) within ``duration`` (default 10 s).
slope  After 1 m of flat ground, 1 m ramps whose slope is drawn uniformly within +-level deg
       each metre (`sim.terrain.RampTerrain.for_run` seeded with the seed; the same seed scales
       the same pattern, so a higher level is the same terrain, steeper). Fails as push.
turn   The target heading turns at the level's rate (deg/s) toward random goals, a new one every
       TURN_HOLD = 3 s within TURN_MAX_CHANGE = 60 deg of the current heading (the steer task's
       `sim.scenario.HeadingPath`, seeded with the seed), for ``duration`` (default 20 s). The
       heading error is the controller's own: target heading minus the trunk heading
       (`control.rotations.heading_of` of the trunk, as the controller's facing frame and the
       termination rules read it), wrapped to (-180, 180] deg, every control step. The trial's
       heading error is the mean, over the control steps from SETTLE = 2 s to the end, of the
       absolute value of its trailing HEADING_WINDOW = 1 s moving average (the average takes out
       most of the trunk's yaw swing within each stride, which alone gives the committed
       HumanLegs a 10 deg mean absolute error walking straight; `HeadingErrorMeter`). A trial
       fails when a termination rule fires (the heading rule itself at 45 deg) or when that
       heading error reaches HEADING_THRESHOLD = 10 deg.
faster The target speed (beyond the paper, whose target is fixed per optimization and whose
slower conclusions name speed transitions as future work, §7) held at the walker's until
       RAMP_START = 2 s, then changed linearly over RAMP_DURATION = 6 s to (1 + level / 100)
       (faster) or (1 - level / 100) (slower) times it, and held there to ``duration`` (default
       10 s; `sim.scenario.SpeedChange`). Fails as push: the test asks whether the walker stays
       up, not whether it keeps up; each trial records the target after the change and the
       centre of mass' forward speed from the end of the change to the end of the trial
       (``speed_after_change``; None for a trial that falls before). Nothing is random: one seed
       (the default) is the result, more seeds repeat the same trials; slower's levels stay
       below 100 %.

Seeds are ``first_seed``, ``first_seed + 1``, ...: the seed itself is the random generator's
seed of the pushes' directions, the ramps or the heading path, the same at every level of a seed.
Push and turn trials reuse one Simulator (flat ground); a slope trial builds its own (the ramps
are contact planes of the OpenSim model, one contact force of the model's kind per sphere and
segment). A trial in which OpenSim raises fails with reason ``opensim_error``.

A protocol takes up to an hour or more on one core: every finished trial is kept in
``OUT.partial.json`` beside the output (`TrialLog`), so a protocol stopped part-way (a session's
end) resumes when the same command runs again, reusing the trials of the same protocol on the same
walker (model file and parameters) and refusing the file otherwise; the trials are independent
and deterministic, so the result is the uninterrupted one's. The file goes once the output is
written.
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterator, Mapping

import numpy as np

from ..constants import CONTROL_INTERVAL
from ..control.rotations import heading_of, wrap_angle
from ..model.metadata import ModelMeta
from ..sim.scenario import MAX_DURATION, PUSH_DURATION, Scenario, SpeedChange, random_pushes
from ..sim.terrain import MAX_LENGTH, RampTerrain

TESTS = ("push", "slope", "turn", "faster", "slower")
SPEED_TESTS = ("faster", "slower")  # a target speed that changes while the walker walks
UNITS = {"push": "N", "slope": "deg", "turn": "deg/s", "faster": "%", "slower": "%"}
DEFAULT_START = {"push": 10.0, "slope": 1.0, "turn": 1.0, "faster": 5.0, "slower": 5.0}
DEFAULT_STEP = {"push": 10.0, "slope": 1.0, "turn": 1.0, "faster": 5.0, "slower": 5.0}
DEFAULT_DURATION = {"push": 10.0, "slope": 10.0, "turn": 20.0, "faster": 10.0, "slower": 10.0}  # s
DEFAULT_SEEDS = {"push": 10, "slope": 10, "turn": 10, "faster": 1, "slower": 1}
RAMP_START = 2.0  # s: a speed trial's target starts to change
RAMP_DURATION = 6.0  # s over which it changes
PUSH_START = 1.0  # s: the first push
PUSH_INTERVAL = 1.0  # s between pushes
TURN_HOLD = 3.0  # s between heading goals (models/tasks/steer.yaml)
TURN_MAX_CHANGE = 60.0  # deg
SETTLE = 2.0  # s of a turn trial left out of its heading error
HEADING_THRESHOLD = 10.0  # deg: the mean absolute heading error a turn trial must stay below
HEADING_WINDOW = 1.0  # s: the heading error is judged on its trailing moving average over this
MAX_SLOPE = 45.0  # deg: RampTerrain's bound (exclusive)
MAX_LEVELS = 200  # levels per seed at most (a stepping that never fails stops there, capped)


class ProtocolError(ValueError):
    """A bad protocol setting or run folder; the message names the option or the file."""


# ------------------------------------------------------------------------------ the walker
@dataclass
class Walker:
    """An optimization run folder: its model (optimized.osim + .meta.json), the controller and
    initial-state parameters of its best.json, and the speed it was optimized for."""

    run_dir: Path
    model: Path
    best: Path
    meta: ModelMeta
    params: dict
    speed: float | None

    @classmethod
    def load(cls, run_dir, control_interval: float | None = None) -> "Walker":
        """Checked like `musclewalk simulate --params`: the model against its metadata, best.json
        against the model (every parameter present). ProtocolError / ValueError naming the file."""
        from ..io_checks import check_model
        from ..sim.parameters import load_run_parameters, parameter_file_speed

        run_dir = Path(run_dir)
        if not run_dir.is_dir():
            raise ProtocolError(
                f"{run_dir}: run folder not found (expected an optimization run folder with "
                "optimized.osim, optimized.meta.json and best.json)"
            )
        model, best = run_dir / "optimized.osim", run_dir / "best.json"
        for path in (model, best):
            if not path.is_file():
                raise ProtocolError(
                    f"{path}: not found (an optimization run folder holds optimized.osim, "
                    "optimized.meta.json and best.json)"
                )
        meta = check_model(model)
        params = load_run_parameters(best, meta, model, control_interval or CONTROL_INTERVAL)
        return cls(run_dir, model, best, meta, params, parameter_file_speed(best))


# ------------------------------------------------------------------------------ the protocol
@dataclass(frozen=True)
class Protocol:
    test: str  # push | slope | turn | faster | slower
    speed: float  # m/s, target speed of every trial (at its start)
    duration: float | None = None  # s per trial; None: DEFAULT_DURATION of the test
    seeds: int | None = None  # None: DEFAULT_SEEDS of the test
    first_seed: int = 1
    start: float | None = None  # first level; None: DEFAULT_START
    step: float | None = None  # level increment; None: DEFAULT_STEP
    maximum: float | None = None  # last level tried; None: no limit but the test's own

    def __post_init__(self):
        if self.test not in TESTS:
            raise ProtocolError(f"--test: expected one of {', '.join(TESTS)}, got {self.test!r}")
        defaults = (
            ("duration", DEFAULT_DURATION),
            ("start", DEFAULT_START),
            ("step", DEFAULT_STEP),
            ("seeds", DEFAULT_SEEDS),
        )
        for name, table in defaults:
            if getattr(self, name) is None:
                object.__setattr__(self, name, table[self.test])
        self.validate()

    @property
    def unit(self) -> str:
        return UNITS[self.test]

    def validate(self) -> None:
        """ProtocolError naming the first bad option."""

        def bad(option, expected, value):
            return ProtocolError(f"{option}: expected {expected}, got {value!r}")

        def finite(v):
            return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

        if not (finite(self.speed) and self.speed > 0):
            raise bad("--speed", "a positive speed (m/s)", self.speed)
        if not (finite(self.duration) and 0 < self.duration <= MAX_DURATION):
            raise bad("--duration", f"a positive duration of at most {MAX_DURATION:g} s", self.duration)
        if self.test == "push" and self.duration <= PUSH_START:
            raise bad(
                "--duration",
                f"more than {PUSH_START:g} s (the first push is at {PUSH_START:g} s)",
                self.duration,
            )
        if self.test == "turn" and self.duration <= SETTLE:
            raise bad(
                "--duration",
                f"more than {SETTLE:g} s (the heading error is averaged after {SETTLE:g} s)",
                self.duration,
            )
        if self.test in SPEED_TESTS and self.duration < RAMP_START + RAMP_DURATION:
            raise bad(
                "--duration",
                f"at least {RAMP_START + RAMP_DURATION:g} s (the target changes from {RAMP_START:g} s "
                f"over {RAMP_DURATION:g} s)",
                self.duration,
            )
        if self.test == "slope":
            length = RampTerrain.run_length(self.speed, self.duration)
            if length > MAX_LENGTH:
                raise ProtocolError(
                    f"--duration: {length:g} m of ramps for {self.speed:g} m/s over {self.duration:g} s, "
                    f"at most {MAX_LENGTH:g} m: shorten --duration"
                )
        if not (isinstance(self.seeds, int) and self.seeds >= 1):
            raise bad("--seeds", "a count >= 1", self.seeds)
        if not (isinstance(self.first_seed, int) and self.first_seed >= 0):
            raise bad("--first-seed", "an integer >= 0", self.first_seed)
        unit = self.unit
        if not (finite(self.start) and self.start >= 0):
            raise bad("--start", f"a level >= 0 ({unit})", self.start)
        if not (finite(self.step) and self.step > 0):
            raise bad("--step", f"a positive increment ({unit})", self.step)
        if self.maximum is not None and not (finite(self.maximum) and self.maximum >= self.start):
            raise bad("--max", f"a level >= --start ({self.start:g} {unit})", self.maximum)
        if self.test == "slope" and self.start >= MAX_SLOPE:
            raise bad("--start", f"a slope below {MAX_SLOPE:g} deg", self.start)
        if self.test == "slower" and self.start >= 100:
            raise bad("--start", "a change below 100 % (a target above 0)", self.start)

    def levels(self) -> Iterator[float]:
        """start, start + step, ... up to ``maximum``, below 45 deg for slopes and 100 % for
        slower, MAX_LEVELS at most."""
        for k in range(MAX_LEVELS):
            level = round(self.start + k * self.step, 9)
            if self.maximum is not None and level > self.maximum + 1e-9:
                return
            if (self.test == "slope" and level >= MAX_SLOPE) or (self.test == "slower" and level >= 100):
                return
            yield level

    def seed_list(self) -> list[int]:
        return list(range(self.first_seed, self.first_seed + self.seeds))

    def trial(self, level: float, seed: int) -> tuple[Scenario, RampTerrain | None]:
        """(scenario, terrain or None) of the trial at ``level`` with ``seed``."""
        pushes, turn_rate, terrain, change = [], 0.0, None, None
        if self.test in SPEED_TESTS:
            sign = 1.0 if self.test == "faster" else -1.0
            change = SpeedChange(RAMP_START, RAMP_DURATION, 1.0 + sign * level / 100.0)
        elif self.test == "push":
            count = math.ceil((self.duration - PUSH_START) / PUSH_INTERVAL - 1e-9)
            pushes = random_pushes(count, level, seed, start=PUSH_START, interval=PUSH_INTERVAL)
        elif self.test == "turn":
            turn_rate = level
        else:
            terrain = RampTerrain.for_run(level, self.speed, self.duration, seed=seed)
        scenario = Scenario.for_run(
            self.speed,
            self.duration,
            turn_rate_deg=turn_rate,
            turn_hold=TURN_HOLD,
            turn_max_change_deg=TURN_MAX_CHANGE,
            pushes=pushes,
            seed=seed,
            speed_change=change,
        )
        return scenario, terrain

    def as_dict(self) -> dict:
        """The protocol's parameters as the output JSON records them."""
        d = asdict(self)
        d["unit"] = self.unit
        d["seed_list"] = self.seed_list()
        d["rule"] = (
            f"levels {self.start:g}, {self.start + self.step:g}, ... {self.unit}"
            + (f" up to {self.maximum:g}" if self.maximum is not None else "")
            + "; per seed: the last level survived before the first failure; result: the median "
            "over the seeds"
        )
        if self.test == "push":
            d["pushes"] = {
                "first": PUSH_START,
                "interval": PUSH_INTERVAL,
                "duration": PUSH_DURATION,
                "on": "trunk",
                "direction": "uniform random horizontal (seeded)",
            }
        elif self.test == "slope":
            d["terrain"] = {"flat_start_m": 1.0, "segment_m": 1.0, "slope": "uniform in +-level each metre"}
        elif self.test in SPEED_TESTS:
            d["speed_change"] = {
                "start": RAMP_START,
                "duration": RAMP_DURATION,
                "to": f"(1 {'+' if self.test == 'faster' else '-'} level / 100) x speed, held to the end",
            }
        else:
            d["heading"] = {
                "hold": TURN_HOLD,
                "max_change_deg": TURN_MAX_CHANGE,
                "settle": SETTLE,
                "threshold_deg": HEADING_THRESHOLD,
                "window": HEADING_WINDOW,
                "error": "mean over the control steps after settle of |trailing window-s moving average "
                "of (target heading - trunk heading)|",
            }
        d["failure"] = "a termination rule fires (or the integrator fails) within the duration" + (
            "; or the mean heading error reaches the threshold" if self.test == "turn" else ""
        )
        return d


# ------------------------------------------------------------------------------ one trial
class HeadingErrorMeter:
    """Observer of `Simulator.run` that records the signed heading error (deg) of every control
    step: target heading (the scenario's, at the step's time) minus the trunk heading
    (`heading_of`, as the controller and the termination rules read it), wrapped to (-180, 180].

    The trunk's heading swings with every stride (the committed HumanLegs walking straight:
    +-17-20 deg, a mean absolute error of 10 deg with a target that never moves), so the
    criterion is on the error's trailing ``window``-second moving average, which removes most of
    that swing (a stride-periodic swing of period T is left at most |sin(pi W/T) / (pi W/T)| of
    its amplitude: about a fifth for a 0.8 s stride and a 1 s window): `smoothed_mean` is the
    mean absolute moving average over the steps at or after ``settle`` s."""

    def __init__(
        self,
        trunk: int,
        heading: Callable[[float], float],
        settle: float = SETTLE,
        window: float = HEADING_WINDOW,
        control_interval: float = CONTROL_INTERVAL,
    ):
        self.trunk, self.heading, self.settle = trunk, heading, settle
        self.window_steps = max(1, int(round(window / control_interval)))
        self.times: list[float] = []
        self.errors: list[float] = []  # signed, deg

    def __call__(self, sensors, u, engine, raw) -> None:
        psi = heading_of(sensors.body_R[self.trunk])
        self.times.append(float(sensors.t))
        self.errors.append(math.degrees(wrap_angle(self.heading(sensors.t) - psi)))

    def _after_settle(self, values: np.ndarray, first_index: int) -> np.ndarray:
        times = np.asarray(self.times[first_index:])
        return values[times >= self.settle - 1e-9]

    def smoothed(self) -> np.ndarray:
        """|trailing moving average| of the error at the steps at or after ``settle`` s that have
        a full window behind them."""
        n = self.window_steps
        e = np.asarray(self.errors, float)
        if len(e) < n:
            return np.empty(0)
        return np.abs(self._after_settle(np.convolve(e, np.ones(n) / n, mode="valid"), n - 1))

    def raw(self) -> np.ndarray:
        """|error| at the steps at or after ``settle`` s."""
        return np.abs(self._after_settle(np.asarray(self.errors, float), 0))

    def smoothed_mean(self) -> float | None:
        v = self.smoothed()
        return float(v.mean()) if v.size else None

    def summary(self) -> dict:
        """The trial record's heading-error fields (deg; None: no step after ``settle``)."""
        sm, raw = self.smoothed(), self.raw()
        return {
            "heading_error_mean_deg": float(sm.mean()) if sm.size else None,
            "heading_error_max_deg": float(sm.max()) if sm.size else None,
            "heading_error_raw_mean_deg": float(raw.mean()) if raw.size else None,
            "heading_error_raw_max_deg": float(raw.max()) if raw.size else None,
        }


class ForwardSpeedMeter:
    """Observer of `Simulator.run` that keeps the centre of mass' forward position (along world X,
    the straight trials' heading) at the first control step at or after ``since`` s and at the
    last step: ``speed`` is the mean forward speed between them (None before ``since``)."""

    def __init__(self, since: float):
        self.since = since
        self.first: tuple[float, float] | None = None
        self.last: tuple[float, float] | None = None

    def __call__(self, sensors, u, engine, raw) -> None:
        point = (float(sensors.t), float(sensors.com_pos[0]))
        if self.first is None and point[0] >= self.since - 1e-9:
            self.first = point
        self.last = point

    def speed(self) -> float | None:
        if self.first is None or self.last[0] <= self.first[0]:
            return None
        return (self.last[1] - self.first[1]) / (self.last[0] - self.first[0])


def run_trial(protocol: Protocol, sim, params: Mapping[str, float], scenario: Scenario, level: float) -> dict:
    """One trial of ``scenario`` (at ``level``) on ``sim`` (a Simulator on the trial's terrain):
    its record for the output."""
    meter = forward = None
    observers = []
    if protocol.test == "turn":
        meter = HeadingErrorMeter(
            sim.rules.trunk, scenario.heading_at, control_interval=scenario.control_interval
        )
        observers.append(meter)
    if protocol.test in SPEED_TESTS:
        forward = ForwardSpeedMeter(RAMP_START + RAMP_DURATION)
        observers.append(forward)
    wall0 = time.perf_counter()
    try:
        result = sim.run(scenario, params, observers=observers)
    except RuntimeError as exc:  # OpenSim refused a state
        text = str(exc).strip()
        return {
            "level": level,
            "survived": False,
            "failure": "opensim_error",
            "termination_reason": "opensim_error",
            "message": text.splitlines()[0] if text else type(exc).__name__,
            "termination_time": None,
            "wall_time": time.perf_counter() - wall0,
        }
    record = {
        "level": level,
        "survived": not result.terminated,
        "failure": result.reason if result.terminated else None,
        "termination_reason": result.reason,
        "termination_time": result.simulated_time if result.terminated else None,
        "simulated_time": result.simulated_time,
        "distance": float(result.final_com[0] - result.initial_com[0]),
        "wall_time": time.perf_counter() - wall0,
    }
    if forward is not None:
        record["target_after_change"] = scenario.speed_at(RAMP_START + RAMP_DURATION)
        record["speed_after_change"] = forward.speed() if record["survived"] else None
    if meter is not None:
        record.update(meter.summary())
        mean = record["heading_error_mean_deg"]
        if record["survived"] and (mean is None or mean >= HEADING_THRESHOLD):
            record["survived"] = False
            record["failure"] = "heading_error"
    return record


# ------------------------------------------------------------------------------ the stepping
def step_seed(protocol: Protocol, seed: int, trial: Callable[[float, int], dict], progress=None) -> dict:
    """Levels in order until the first failed trial: the seed's trials, the last level survived
    (None: not even the first) and whether the stepping ran out of levels (``capped``)."""
    trials, best, capped = [], None, True
    for level in protocol.levels():
        record = trial(level, seed)
        trials.append(record)
        if progress is not None:
            progress(_trial_line(protocol, seed, record))
        if not record["survived"]:
            capped = False
            break
        best = level
    return {
        "seed": seed,
        "max_survived": best,
        "first_failure": trials[-1]["level"] if trials and not trials[-1]["survived"] else None,
        "capped": capped and bool(trials),
        "trials": trials,
    }


def median_level(values) -> float | None:
    """Median of the per-seed maxima; None ("below --start") sorts below every level, and a
    median that falls on it (or between it and a level) is None."""
    ordered = sorted(values, key=lambda v: -math.inf if v is None else v)
    n = len(ordered)
    if n == 0:
        return None
    middle = ordered[(n - 1) // 2 : n // 2 + 1]
    if any(v is None for v in middle):
        return None
    return float(statistics.mean(middle))


def run_protocol(
    protocol: Protocol,
    params: Mapping[str, float],
    simulator_for: Callable[[RampTerrain | None], object],
    progress: Callable[[str], None] | None = None,
    log: "TrialLog | None" = None,
) -> dict:
    """Every seed stepped up to its first failure. ``simulator_for(terrain)`` gives the simulator
    of a trial (terrain None: flat ground; `SimulatorCache`); ``log`` keeps each finished trial
    and gives back those of an earlier, stopped run (wall_time then counts both). The result as
    the output JSON holds it (without the run folder's description, which the caller adds)."""
    wall0 = time.perf_counter()
    earlier_wall = log.earlier_wall_time if log is not None else 0.0

    def trial(level, seed):
        kept = log.get(seed, level) if log is not None else None
        if kept is not None:
            return kept
        scenario, terrain = protocol.trial(level, seed)
        record = run_trial(protocol, simulator_for(terrain), params, scenario, level)
        if log is not None:
            log.add(seed, record, time.perf_counter() - wall0)
        return record

    seeds = [step_seed(protocol, seed, trial, progress) for seed in protocol.seed_list()]
    maxima = [s["max_survived"] for s in seeds]
    return {
        "test": protocol.test,
        "unit": protocol.unit,
        "protocol": protocol.as_dict(),
        "median": median_level(maxima),
        "per_seed_max": maxima,
        "seeds_below_start": sum(v is None for v in maxima),
        "seeds_capped": sum(s["capped"] for s in seeds),
        "trials": sum(len(s["trials"]) for s in seeds),
        "wall_time": earlier_wall + time.perf_counter() - wall0,
        "seeds": seeds,
    }


# ------------------------------------------------------------------------------ resuming
def partial_path(out) -> Path:
    """Where the finished trials of an unfinished protocol writing ``out`` are kept."""
    out = Path(out)
    return out.with_name(out.stem + ".partial.json")


def walker_identity(walker: "Walker") -> dict:
    """What a kept trial was run on: the model file's and the parameters' SHA-256."""
    params = json.dumps(walker.params, sort_keys=True).encode()
    return {
        "model_sha256": hashlib.sha256(walker.model.read_bytes()).hexdigest(),
        "parameters_sha256": hashlib.sha256(params).hexdigest(),
    }


class TrialLog:
    """The finished trials of one protocol on one walker, rewritten (atomically) to ``path``
    after every trial. A file there already is an earlier run of the same command: its trials
    are reused when its protocol and walker are these, and refused (ProtocolError naming the file
    and the key) when not."""

    def __init__(self, path, protocol: Protocol, walker: dict):
        self.path = Path(path)
        # as JSON gives it back (tuples as lists), to compare with a kept file
        self.protocol = json.loads(json.dumps(protocol.as_dict()))
        self.walker = dict(walker)
        self._by_trial: dict[tuple, dict] = {}  # (seed, level) -> record, in the order run
        self.earlier_wall_time = 0.0
        if self.path.exists():
            self._read()

    def _read(self) -> None:
        try:
            kept = json.loads(self.path.read_text())
            trials, wall = kept["trials"], float(kept["wall_time"])
            walker, protocol = kept["walker"], kept["protocol"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ProtocolError(
                f"{self.path}: not a protocol's kept trials ({exc}); delete it to start over"
            ) from None
        for key, mine, theirs in (("walker", self.walker, walker), ("protocol", self.protocol, protocol)):
            if mine != theirs:
                keys = [*mine, *(k for k in theirs if k not in mine)]
                differs = [k for k in keys if mine.get(k) != theirs.get(k)]
                raise ProtocolError(
                    f"{self.path}: {key}.{differs[0]}: its trials are of another {key} than this "
                    f"command's ({theirs.get(differs[0])!r}, not {mine.get(differs[0])!r}); delete it to "
                    "start over or run the command that made it"
                )
        self._by_trial = {(e["seed"], e["record"]["level"]): e["record"] for e in trials}
        self.earlier_wall_time = wall

    def __len__(self) -> int:
        return len(self._by_trial)

    def get(self, seed: int, level: float) -> dict | None:
        return self._by_trial.get((seed, level))

    def add(self, seed: int, record: dict, wall_time: float) -> None:
        """``record`` of ``seed`` kept; ``wall_time``: this run's so far."""
        from ..io_checks import write_files_together

        self._by_trial[(seed, record["level"])] = record
        kept = {
            "walker": self.walker,
            "protocol": self.protocol,
            "wall_time": self.earlier_wall_time + wall_time,
            "trials": [{"seed": s, "record": r} for (s, _), r in self._by_trial.items()],
        }
        write_files_together({self.path: (json.dumps(kept, indent=1) + "\n").encode()})

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


class SimulatorCache:
    """The simulators of a walker's trials: one on flat ground, built once and reused, and a new
    one for every terrain (its ramps are part of the OpenSim model)."""

    def __init__(self, walker: Walker):
        self.walker = walker
        self._flat = None

    def __call__(self, terrain):
        if terrain is None:
            if self._flat is None:
                self._flat = self._build(None)
            return self._flat
        return self._build(terrain)

    def _build(self, terrain):
        """A Simulator; a model OpenSim cannot build is a SimulationError (one line), which
        ends the protocol (it is not a fall)."""
        from ..sim.engine import EngineError
        from ..sim.runner import SimulationError, Simulator

        try:
            return Simulator(self.walker.model, meta=self.walker.meta, terrain=terrain)
        except EngineError as exc:
            raise SimulationError(str(exc)) from None


def measure(walker: Walker, protocol: Protocol, progress=None, log: TrialLog | None = None) -> dict:
    """The protocol run on ``walker`` (``log``: run_protocol's): the output JSON's content."""
    from .. import __version__

    result = run_protocol(protocol, walker.params, SimulatorCache(walker), progress, log)
    head = {
        "creature": walker.meta.creature,
        "run": str(walker.run_dir),
        "model": str(walker.model),
        "parameters": str(walker.best),
        "musclewalk": __version__,
    }
    return {**head, **result}


# ------------------------------------------------------------------------------ text
def _fmt(value) -> str:
    return "below start" if value is None else f"{value:g}"


def _trial_line(protocol: Protocol, seed: int, record: dict) -> str:
    what = "survived" if record["survived"] else f"failed ({record['failure']}"
    if not record["survived"]:
        t = record.get("termination_time")
        what += f" at {t:.2f} s)" if t is not None else ")"
    err = record.get("heading_error_mean_deg")
    extra = f", mean heading error {err:.1f} deg" if err is not None else ""
    speed = record.get("speed_after_change")
    if speed is not None:
        extra += f", {speed:.2f} m/s after the change (target {record['target_after_change']:.2f})"
    return f"{protocol.test} seed {seed}: {record['level']:g} {protocol.unit} {what}{extra}"


def summary_line(result: dict, out) -> str:
    """One line: the median and every seed's maximum."""
    unit = result["unit"]
    per_seed = ", ".join(_fmt(v) for v in result["per_seed_max"])
    capped = f", {result['seeds_capped']} capped at the last level" if result["seeds_capped"] else ""
    median = result["median"]
    return (
        f"{result['creature']} {result['test']}: median {_fmt(median)}"
        f"{'' if median is None else ' ' + unit} over {len(result['per_seed_max'])} seed(s) "
        f"(per seed: {per_seed}{capped}; {result['trials']} trials); wrote {out}"
    )
