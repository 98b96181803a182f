"""Inputs of a simulation besides the model and its parameters: target speed and heading,
external pushes, duration, control interval; and the paper's initial state (§6) with its
initial-state parameters (Table 1)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

PUSH_DURATION = 0.2          # s, paper §6.2
SWING_HIP_FLEXION = math.radians(20.0)   # the left leg starts rotated 20 degrees forward (§6)


@dataclass(frozen=True)
class Push:
    start: float
    force: tuple[float, float, float]   # world frame, N
    duration: float = PUSH_DURATION


@dataclass
class HeadingPath:
    """Target heading as a function of time: constant, or random turns at a fixed turning
    velocity (the paper's steering task): every ``hold`` seconds a new heading is drawn within
    ``max_change`` of the current one and approached at ``turn_rate``."""
    initial: float = 0.0                    # rad
    turn_rate: float = 0.0                  # rad/s; 0 = constant heading
    hold: float = 3.0                       # s between changes of the goal
    max_change: float = math.radians(60)
    seed: int = 0
    duration: float = 60.0

    def __post_init__(self):
        self._table = None
        if self.turn_rate > 0:
            rng = np.random.default_rng(self.seed)
            times = np.arange(0.0, self.duration + self.hold, 0.01)
            heading = np.empty_like(times)
            current, goal, next_change = self.initial, self.initial, self.hold
            for i, t in enumerate(times):
                if t >= next_change:
                    goal = current + rng.uniform(-self.max_change, self.max_change)
                    next_change += self.hold
                step = self.turn_rate * 0.01
                current += float(np.clip(goal - current, -step, step))
                heading[i] = current
            self._table = (times, heading)

    def __call__(self, t: float) -> float:
        if self._table is None:
            return self.initial
        times, heading = self._table
        return float(np.interp(t, times, heading))


def random_pushes(count: int, magnitude: float, seed: int, start: float = 2.0,
                  interval: float = 2.0) -> list[Push]:
    """Pushes in random horizontal directions, one every ``interval`` seconds."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        angle = rng.uniform(0, 2 * math.pi)
        out.append(Push(start + k * interval,
                        (magnitude * math.cos(angle), 0.0, magnitude * math.sin(angle))))
    return out


@dataclass
class Scenario:
    speed: float = 1.3                      # target forward speed, m/s
    duration: float = 10.0                  # t_max, s
    heading: Callable[[float], float] | float = 0.0
    pushes: Sequence[Push] = field(default_factory=list)
    control_interval: float = 0.005
    terminate: bool = True                  # apply the paper's termination rules (§5)

    def validate(self) -> None:
        if not (math.isfinite(self.speed) and self.speed > 0):
            raise ValueError(f"speed: must be positive, got {self.speed!r}")
        if not (math.isfinite(self.duration) and self.duration > 0):
            raise ValueError(f"duration: must be positive, got {self.duration!r}")
        if not (0 < self.control_interval <= 0.005 + 1e-12):
            raise ValueError(f"control interval: must be in (0, 5 ms], got {self.control_interval!r}")

    def heading_at(self, t: float) -> float:
        return float(self.heading(t)) if callable(self.heading) else float(self.heading)

    def push_at(self, t: float) -> np.ndarray:
        total = np.zeros(3)
        for p in self.pushes:
            if p.start <= t < p.start + p.duration:
                total += np.asarray(p.force, float)
        return total


# ---------------------------------------------------------------------------- initial state
@dataclass(frozen=True)
class InitialSpec:
    name: str
    default: float
    lower: float
    upper: float
    doc: str


# Table 1 "initial character state": forward lean and initial speeds. Speeds are relative to the
# target speed v (joint speeds in units of v / leg length) so one default set suits every creature.
INITIAL_STATE_SPECS = [
    InitialSpec("init.lean", 0.05, -0.3, 0.5, "initial forward lean of the whole creature, rad"),
    InitialSpec("init.forward_speed", 0.8, 0.0, 1.5, "forward speed of all bodies, x v"),
    InitialSpec("init.swing_upper_speed", 1.0, -3.0, 3.0, "swing hip flexion speed, x v/L"),
    InitialSpec("init.swing_lower_speed", 0.0, -3.0, 3.0, "swing knee (and ankle) speed, x v/L"),
    InitialSpec("init.stance_upper_speed", -0.8, -3.0, 3.0, "stance hip flexion speed, x v/L"),
    InitialSpec("init.stance_lower_speed", 0.0, -3.0, 3.0, "stance knee (and ankle) speed, x v/L"),
]


def initial_state_defaults() -> dict[str, float]:
    return {s.name: s.default for s in INITIAL_STATE_SPECS}


def initial_coordinates(params: Mapping[str, float], speed: float, leg_length: float,
                        swing: str = "l") -> tuple[dict, dict]:
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
        f"ankle_angle_{stance}": (p["init.stance_lower_speed"] - p["init.stance_upper_speed"])
        * joint_rate,
    }
    return coords, speeds
