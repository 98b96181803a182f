"""Inputs of a simulation besides the model and its parameters: target speed and heading,
external pushes, duration, control interval; and the paper's initial state (§6) with its
initial-state parameters (Table 1)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from ..constants import CONTROL_INTERVAL, GRAVITY
from ..control.params import ParamSpec
from .termination import MAX_HEADING_ERROR

PUSH_DURATION = 0.2  # s, paper §6.2
# longest simulation (t_max) accepted: longer is a typo, not an experiment (optimize has the same
# bound); a 600 s recording is ~120 000 control steps
MAX_DURATION = 600.0  # s
SWING_HIP_FLEXION = math.radians(20.0)  # the left leg starts rotated 20 degrees forward (§6)


@dataclass(frozen=True)
class Push:
    start: float
    force: tuple[float, float, float]  # world frame, N
    duration: float = PUSH_DURATION

    @classmethod
    def parse(cls, spec: str) -> Push:
        """A horizontal push on the trunk from ``"START,FX,FZ"`` (s, N, N), lasting
        PUSH_DURATION. ValueError (without the option's name) for anything else, a negative
        START or a value that is not finite."""
        try:
            start, fx, fz = (float(v) for v in spec.split(","))
        except ValueError:
            raise ValueError(f"expected START,FX,FZ (s, N, N), got {spec!r}") from None
        if not all(math.isfinite(v) for v in (start, fx, fz)) or start < 0:
            raise ValueError(f"expected START >= 0 and finite FX, FZ (s, N, N), got {spec!r}")
        return cls(start, (fx, 0.0, fz))


ASSIST_DAMPING_TIME = 0.1  # s: the balance aid's damping per its stiffness (a longer one, e.g.
# sqrt(L / g), made a stiff aid unstable on the trunk's own inertia between 5 ms control steps)


@dataclass(frozen=True)
class Assist:
    """A balance aid on the trunk ("hand of god"), beyond the paper: a bootstrap that makes the
    task easier and is taken away in stages (Geijtenbeek's thesis §3.3.3, "increase task
    difficulty gradually"; Yin et al. 2008's continuation), for creatures that fall before a
    search from their defaults finds a step. ``upright``: a torque holding the trunk at its
    base-pose orientation turned to the target heading, ``upright`` M g L per rad of the
    rotation between them, damped by ASSIST_DAMPING_TIME times that per rad/s (capped on a
    light trunk: held_gains); ``support``: a constant upward force on the trunk, a fraction of
    body weight. Zero for both: no aid. ``hold_heading`` False: the upright torque leaves the
    trunk's yaw (about the vertical) free, so a gait found under it controls its own heading;
    every aided walker of the aidsteps runs fell within 0.35-1.1 s with the yaw part of their aid
    taken away (README, "Getting a creature to walk")."""

    upright: float = 0.0
    support: float = 0.0
    hold_heading: bool = True

    def __bool__(self) -> bool:
        return self.upright > 0 or self.support > 0

    def held_gains(self, mass: float, leg_length: float, trunk_inertia: np.ndarray, interval: float):
        """The upright torque's gains per principal axis of the trunk, for a trunk too light for
        them: (axes (3, 3), body frame, columns; stiffness (3,); damping (3,)), or None when the
        plain gains are stable. The torque is held over a control interval dt (zero-order hold),
        and a held spring-damper on an inertia I is stable only for k dt²/I / 2 < c dt/I < 2
        (its one-interval map); the Human's trunk feature, its pelvis (0.05-0.08 kg m²), has
        c dt/I = 4-7 at upright 1, and the committed walker's pelvis yaw oscillated every other
        interval, from 0.03 to 9 degrees within 0.2 s. Capped per axis at c dt/I = 1 (the damping
        that stops the trunk's own spin in one interval) and k dt²/I = 1; the other creatures'
        trunks (0.5-2.8 kg m²) are not capped (c dt/I ≤ 0.65)."""
        stiffness = self.upright * mass * GRAVITY * leg_length
        damping = ASSIST_DAMPING_TIME * stiffness
        moments, axes = np.linalg.eigh(np.asarray(trunk_inertia, float))
        k = np.minimum(stiffness, moments / interval**2)
        c = np.minimum(damping, moments / interval)
        if np.all(k == stiffness) and np.all(c == damping):
            return None
        return axes, k, c

    def wrench(
        self,
        trunk_R: np.ndarray,
        trunk_omega: np.ndarray,
        heading: float,
        mass: float,
        leg_length: float,
        held_gains=None,
    ):
        """(force, torque), world frame, on the trunk whose rotation body -> world is
        ``trunk_R`` (3, 3) and angular velocity ``trunk_omega`` (3,), for a target ``heading``
        (rad, yaw about world Y, as rotations.heading_of measures it); ``held_gains``: what
        ``held_gains`` returned for this trunk (None: the plain gains)."""
        weight = mass * GRAVITY
        force = np.array([0.0, self.support * weight, 0.0])
        if self.upright <= 0:
            return force, np.zeros(3)
        c, s = math.cos(heading), math.sin(heading)
        target = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
        # Not control.rotations.rotation_log, on purpose: its arctan2 differs from this acos by up
        # to 1e-8 rad (1e-4 near pi, a trunk upside down the termination rules end first), and
        # the aided walkers are chaotic: with rotation_log the Ostrich aidpace 0.12 walker falls
        # after 4.63 s of its 5 (analysis/aid_dependence.py). Changing it re-runs every aid stage.
        error = target @ trunk_R.T  # world frame: the rotation that takes the trunk to its target
        v = np.array([error[2, 1] - error[1, 2], error[0, 2] - error[2, 0], error[1, 0] - error[0, 1]])
        angle = math.acos(max(-1.0, min(1.0, (np.trace(error) - 1.0) / 2.0)))
        sin = math.sin(angle)
        rotation = v * (angle / (2.0 * sin)) if sin > 1e-9 else 0.5 * v  # axis x angle
        if held_gains is not None:
            axes, k, c = held_gains
            world_axes = trunk_R @ axes
            omega = np.asarray(trunk_omega, float)
            torque = world_axes @ (k * (rotation @ world_axes) - c * (omega @ world_axes))
            return force, self._as_applied(torque)
        stiffness = self.upright * weight * leg_length
        torque = stiffness * (rotation - ASSIST_DAMPING_TIME * np.asarray(trunk_omega, float))
        return force, self._as_applied(torque)

    def _as_applied(self, torque: np.ndarray) -> np.ndarray:
        """The torque as applied: without its vertical (yaw) component unless the aid holds the
        heading."""
        if self.hold_heading:
            return torque
        return np.array((torque[0], 0.0, torque[2]))

    def as_dict(self) -> dict:
        """Plain data for checkpoints and summaries; ``hold_heading`` only when False, so the
        aid of a run stored before it existed reads the same."""
        out = {"upright": self.upright, "support": self.support}
        if not self.hold_heading:
            out["hold_heading"] = False
        return out

    def describe(self) -> str:
        free = ", the heading left free" if not self.hold_heading and self.upright > 0 else ""
        return (
            f"a balance aid on the trunk (upright torque {self.upright:g} M g L per rad{free}, "
            f"support {self.support:g} of body weight)"
        )


@dataclass(frozen=True)
class SpeedChange:
    """A change of the target speed within a run, beyond the paper, which keeps the target speed
    of eq. 34 fixed per optimization and names speed transitions as future work (§7): the target
    holds the run's speed until ``start`` (s), moves linearly to ``factor`` times it over
    ``duration`` (s; 0: a step) and holds there. Everything that reads the target speed reads it
    at the time: the controller's target features (§4.2) and the measures (eqs. 34, 36)."""

    start: float
    duration: float
    factor: float

    @classmethod
    def parse(cls, spec: str) -> SpeedChange:
        """From ``"START,DURATION,FACTOR"`` (s, s, 1). ValueError (without the option's name) for
        anything else."""
        try:
            start, duration, factor = (float(v) for v in spec.split(","))
        except ValueError:
            raise ValueError(f"expected START,DURATION,FACTOR (s, s, 1), got {spec!r}") from None
        change = cls(start, duration, factor)
        change.validate()
        return change

    def validate(self) -> None:
        """ValueError naming the first bad field."""
        for name, value, rule, ok in (
            ("START", self.start, ">= 0 s", lambda v: v >= 0),
            ("DURATION", self.duration, ">= 0 s", lambda v: v >= 0),
            ("FACTOR", self.factor, "> 0", lambda v: v > 0),
        ):
            if not (math.isfinite(value) and ok(value)):
                raise ValueError(f"expected {name} {rule}, got {value!r}")

    def progress(self, t: float) -> float:
        """How far the change has gone at ``t``: 0 before it, 1 after."""
        if t <= self.start:
            return 0.0
        if t >= self.start + self.duration:
            return 1.0
        return (t - self.start) / self.duration

    def speed_at(self, speed: float, t: float) -> float:
        progress = self.progress(t)
        if progress == 1.0:
            return speed * self.factor
        return speed * (1.0 + (self.factor - 1.0) * progress)

    def distance(self, speed: float, t0: float, t1: float) -> float:
        """The distance the target covers from ``t0`` to ``t1`` (the integral of speed_at)."""

        def covered(t: float) -> float:  # from time 0
            before = min(t, self.start)
            ramp = min(max(t - self.start, 0.0), self.duration)
            after = max(t - self.start - self.duration, 0.0)
            ramp_mean = 1.0 + 0.5 * (self.factor - 1.0) * (ramp / self.duration if ramp else 0.0)
            return speed * (before + ramp * ramp_mean + after * self.factor)

        return covered(t1) - covered(t0)

    def as_dict(self) -> dict:
        return {"start": self.start, "duration": self.duration, "factor": self.factor}

    def describe(self, speed: float | None = None) -> str:
        to = f"{speed * self.factor:g} m/s ({self.factor:g} x)" if speed else f"{self.factor:g} x the speed"
        over = f"over {self.duration:g} s" if self.duration > 0 else "at once"
        return f"the target speed changes to {to} from {self.start:g} s {over}"


def top_target_speed(speed: float, duration: float, speed_change: SpeedChange | None) -> float:
    """The highest target speed (m/s) of a run of ``duration`` s at ``speed``; a speed change is
    linear, so its top is at the run's start or end."""
    if speed_change is None:
        return speed
    return speed * max(1.0, speed_change.speed_at(1.0, duration))


@dataclass
class HeadingPath:
    """Target heading as a function of time: constant, or random turns at a fixed turning
    velocity (the paper's steering task): every ``hold`` seconds a new heading is drawn within
    ``max_change`` of the current one and approached at ``turn_rate``.

    The path is tabulated every ``STEP`` seconds, lazily: only as far as it has been asked for
    (the simulated time), so a long ``duration`` costs nothing up front. The table is one
    sequential walk over one random stream, so a value does not depend on how far ahead the
    table was built. ``duration`` is kept for callers that pass it; it no longer bounds the
    table (beyond it the turns simply go on)."""

    initial: float = 0.0  # rad
    turn_rate: float = 0.0  # rad/s; 0 = constant heading
    hold: float = 3.0  # s between changes of the goal
    max_change: float = math.radians(60)
    seed: int = 0
    duration: float = 60.0

    STEP = 0.01  # s between table entries
    CHUNK = 1024  # entries added at a time (at least)

    def __post_init__(self):
        self._turning = self.turn_rate > 0
        self._rng = np.random.default_rng(self.seed)
        self._current = self._goal = self.initial
        self._next_change = self.hold
        self._n = 0  # entries tabulated so far
        self._times = self._heading = np.empty(0)

    def _extend(self, n: int) -> None:
        """Tabulate entries up to index ``n`` - 1 (time (n - 1) x STEP)."""
        size = max(n, self._n + self.CHUNK, 2 * self._n)
        times = np.concatenate([self._times[: self._n], np.empty(size - self._n)])
        heading = np.concatenate([self._heading[: self._n], np.empty(size - self._n)])
        # entry i is at time i x STEP, as numpy's arange(0, end, STEP) places it
        times[self._n :] = np.arange(self._n, size) * self.STEP
        current, goal, next_change = self._current, self._goal, self._next_change
        step = self.turn_rate * self.STEP
        for i in range(self._n, size):
            if times[i] >= next_change:
                goal = current + self._rng.uniform(-self.max_change, self.max_change)
                next_change += self.hold
            current += float(np.clip(goal - current, -step, step))
            heading[i] = current
        self._current, self._goal, self._next_change = current, goal, next_change
        self._times, self._heading, self._n = times, heading, size

    def __call__(self, t: float) -> float:
        if not self._turning:
            return self.initial
        if not math.isfinite(t):
            raise ValueError(f"heading: time must be finite, got {t!r}")
        while self._n == 0 or t >= (self._n - 1) * self.STEP:
            self._extend(int(max(t, 0.0) / self.STEP) + 2)
        return float(np.interp(t, self._times, self._heading))


def random_pushes(
    count: int, magnitude: float, seed: int, start: float = 2.0, interval: float = 2.0
) -> list[Push]:
    """Pushes in random horizontal directions, one every ``interval`` seconds."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        angle = rng.uniform(0, 2 * math.pi)
        out.append(
            Push(start + k * interval, (magnitude * math.cos(angle), 0.0, magnitude * math.sin(angle)))
        )
    return out


@dataclass
class Scenario:
    speed: float = 1.3  # target forward speed, m/s
    duration: float = 10.0  # t_max, s
    heading: Callable[[float], float] | float = 0.0
    pushes: Sequence[Push] = field(default_factory=list)
    control_interval: float = CONTROL_INTERVAL
    terminate: bool = True  # apply the paper's termination rules (§5)
    assist: Assist | None = None  # a balance aid (bootstrap stages only; None: none)
    # the heading rule's limit, rad: the paper's 45 degrees, or tighter for a task whose balance
    # aid leaves the heading to the walker (Task.max_heading_error)
    max_heading_error: float = MAX_HEADING_ERROR
    speed_change: SpeedChange | None = None  # beyond the paper: a target speed that changes

    @classmethod
    def for_run(
        cls,
        speed: float,
        duration: float,
        *,
        heading_deg: float = 0.0,
        turn_rate_deg: float = 0.0,
        turn_hold: float = 3.0,
        turn_max_change_deg: float = 60.0,
        pushes: Sequence[Push] = (),
        n_random_pushes: int = 0,
        push_magnitude: float = 100.0,
        seed: int = 0,
        control_interval: float = CONTROL_INTERVAL,
        terminate: bool = True,
        assist: Assist | None = None,
        max_heading_error_deg: float = math.degrees(MAX_HEADING_ERROR),
        speed_change: SpeedChange | None = None,
    ) -> Scenario:
        """The validated scenario of one run as `musclewalk simulate` describes it: target
        ``speed`` (m/s) for ``duration`` (s); the target heading starts at ``heading_deg`` and,
        with ``turn_rate_deg`` > 0 (deg/s), turns randomly (HeadingPath, ``seed``: a new goal
        every ``turn_hold`` s within ``turn_max_change_deg`` of the current heading); ``pushes``
        followed by ``n_random_pushes`` random ones of ``push_magnitude`` N (random_pushes,
        ``seed``); the paper's termination rules unless ``terminate`` is False, the heading rule
        firing beyond ``max_heading_error_deg``; ``speed_change``: the target speed changing
        within the run (SpeedChange). ValueError names the first bad value."""
        pushes = list(pushes)
        if n_random_pushes:
            pushes += random_pushes(n_random_pushes, push_magnitude, seed)
        heading = HeadingPath(
            initial=math.radians(heading_deg),
            turn_rate=math.radians(turn_rate_deg),
            hold=turn_hold,
            max_change=math.radians(turn_max_change_deg),
            seed=seed,
            duration=duration,
        )
        scenario = cls(
            speed=speed,
            duration=duration,
            heading=heading,
            pushes=pushes,
            control_interval=control_interval,
            terminate=terminate,
            assist=assist,
            max_heading_error=math.radians(max_heading_error_deg),
            speed_change=speed_change,
        )
        scenario.validate()
        return scenario

    def validate(self) -> None:
        if not (math.isfinite(self.speed) and self.speed > 0):
            raise ValueError(f"speed: must be positive, got {self.speed!r}")
        if not (math.isfinite(self.duration) and 0 < self.duration <= MAX_DURATION):
            raise ValueError(
                f"duration: must be positive and at most {MAX_DURATION:g} s, got {self.duration!r}"
            )
        if not (0 < self.control_interval <= CONTROL_INTERVAL + 1e-12):
            raise ValueError(f"control interval: must be in (0, 5 ms], got {self.control_interval!r}")
        if not (math.isfinite(self.max_heading_error) and 0 < self.max_heading_error <= math.pi):
            raise ValueError(
                f"max heading error: must be in (0, 180] deg, got {math.degrees(self.max_heading_error)!r}"
            )
        if self.speed_change is not None:
            try:
                self.speed_change.validate()
            except ValueError as exc:
                raise ValueError(f"speed change: {exc}") from None
        if self.assist is not None:
            a = self.assist
            if not (math.isfinite(a.upright) and a.upright >= 0):
                raise ValueError(f"assist upright: must be >= 0, got {a.upright!r}")
            if not (math.isfinite(a.support) and 0 <= a.support < 1):
                raise ValueError(f"assist support: must be in [0, 1) of body weight, got {a.support!r}")

    def speed_at(self, t: float) -> float:
        """The target speed at ``t`` (m/s): ``speed``, or as the speed change moves it."""
        if self.speed_change is None:
            return self.speed
        return self.speed_change.speed_at(self.speed, t)

    def target_distance(self, t0: float, t1: float) -> float:
        """The distance the target speed covers from ``t0`` to ``t1`` (m)."""
        if self.speed_change is None:
            return self.speed * (t1 - t0)
        return self.speed_change.distance(self.speed, t0, t1)

    @property
    def top_speed(self) -> float:
        """The highest target speed of the run (m/s)."""
        return top_target_speed(self.speed, self.duration, self.speed_change)

    def heading_at(self, t: float) -> float:
        return float(self.heading(t)) if callable(self.heading) else float(self.heading)

    def push_at(self, t: float) -> np.ndarray:
        total = np.zeros(3)
        for p in self.pushes:
            if p.start <= t < p.start + p.duration:
                total += np.asarray(p.force, float)
        return total


# ---------------------------------------------------------------------------- initial state
INITIAL_STATE_SPECS = [
    ParamSpec(name, default, lower, upper, "initial_state", doc)
    for name, default, lower, upper, doc in (
        ("init.lean", 0.05, -0.3, 0.5, "initial forward lean of the whole creature, rad"),
        ("init.forward_speed", 0.8, 0.0, 1.5, "forward speed of all bodies, x v"),
        ("init.swing_upper_speed", 1.0, -3.0, 3.0, "swing hip flexion speed, x v/L"),
        ("init.swing_lower_speed", 0.0, -3.0, 3.0, "swing knee (and ankle) speed, x v/L"),
        ("init.stance_upper_speed", -0.8, -3.0, 3.0, "stance hip flexion speed, x v/L"),
        ("init.stance_lower_speed", 0.0, -3.0, 3.0, "stance knee (and ankle) speed, x v/L"),
    )
]


def initial_state_defaults() -> dict[str, float]:
    return {s.name: s.default for s in INITIAL_STATE_SPECS}


def initial_coordinates(
    params: Mapping[str, float], speed: float, leg_length: float, swing: str = "l"
) -> tuple[dict, dict]:
    """Coordinate values and speeds of the paper's initial state: the ``swing`` leg's upper leg
    rotated 20 degrees forward, the creature leaning forward and moving at a fraction of the
    target speed."""
    p = {**initial_state_defaults(), **params}
    stance = "r" if swing == "l" else "l"
    joint_rate = speed / leg_length
    coords = {f"hip_flexion_{swing}": SWING_HIP_FLEXION, "root_pitch": -p["init.lean"]}
    speeds = {
        "root_tx": p["init.forward_speed"] * speed,
        f"hip_flexion_{swing}": p["init.swing_upper_speed"] * joint_rate,
        # the swing foot turns with the lower leg (ankle speed 0)
        f"knee_angle_{swing}": p["init.swing_lower_speed"] * joint_rate,
        f"hip_flexion_{stance}": p["init.stance_upper_speed"] * joint_rate,
        f"knee_angle_{stance}": p["init.stance_lower_speed"] * joint_rate,
        # foot pitch = root pitch + hip flexion - knee flexion + ankle angle: the stance foot
        # stays flat on the ground
        f"ankle_angle_{stance}": (p["init.stance_lower_speed"] - p["init.stance_upper_speed"]) * joint_rate,
    }
    return coords, speeds
