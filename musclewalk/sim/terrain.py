"""Uneven terrain within OpenSim's contact model: ramps whose slope changes randomly every
metre (paper §6.2, "a 1 m wide ramp with a steepness that randomly varies each meter").

Approach: the piecewise-planar, continuous height profile h(x) is made of one plane per 1 m
segment (through the segment, tilted by its slope). Every foot contact sphere gets one contact
force of the model's kind per segment (sim.engine): a copy of its ExponentialContactForce with the
segment's plane as its contact plane, or, for smooth-sphere models, a SmoothSphereHalfSpaceForce
against a ContactHalfSpace per segment; between control steps only the force of the segment under
the sphere's centre is enabled (Force::setAppliesForce, a discrete state variable, so no
re-initialization is needed; an entered exponential force's friction anchor restarts where its
point is) and the model's flat-ground forces are off.

Limits (documented, by design): a sphere sees only the plane under its centre, so near a kink
between two segments it can sink slightly into the neighbouring plane (valley) or feel the
extended plane in the air (ridge) for less than a sphere radius; the switch happens at control
steps (5 ms). The terrain extends in z without bound (the ramp's width is not modelled) and
starts after a flat run-up; heights are continuous at every segment boundary. Beyond its
``length`` the last ramp goes on.

Size bound: every segment adds one contact force per foot sphere (and a half-space for smooth
spheres) to the OpenSim model, and building the model grows faster than linearly with their number
(measured with smooth spheres, HumanLegs, 8 spheres, on a shared 2-core machine: 40 segments
0.7 s, 100 segments 7 s, 150 segments 14 s, 500 segments 96 s; with the exponential contact
40 segments 0.8 s, 100 segments 2.8 s on the same machine beside two optimizations) and every
integration step visits all of them. So the terrain
is at most ``MAX_LENGTH`` m of ramps; longer is refused before any model is built.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MAX_LENGTH = 100.0  # m of ramps after the run-up (see the module docstring)
# a run's ramps (RampTerrain.for_run): RUN_LENGTH_FACTOR x the distance at the target speed, plus
# RUN_LENGTH_MARGIN m, so a walker faster than its target still stays on the ramps
RUN_LENGTH_FACTOR = 1.5
RUN_LENGTH_MARGIN = 2.0  # m


@dataclass
class RampTerrain:
    max_slope_deg: float
    seed: int = 0
    length: float = 40.0  # m of ramps after the run-up
    segment_length: float = 1.0
    flat_start: float = 1.0  # m of flat ground before the first ramp

    def __post_init__(self):
        if not (0 <= self.max_slope_deg < 45):
            raise ValueError(f"terrain slope: must be in [0, 45) degrees, got {self.max_slope_deg}")
        if not (self.segment_length > 0 and 0 < self.length <= MAX_LENGTH):
            raise ValueError(
                f"terrain length: {self.length:g} m of ramps, at most {MAX_LENGTH:g} m (one "
                f"OpenSim contact plane per {self.segment_length:g} m; 'musclewalk simulate' "
                f"lays 1.5 x --speed x --duration + 2 m): shorten --duration"
            )
        rng = np.random.default_rng(self.seed)
        n = int(math.ceil(self.length / self.segment_length))
        slopes = np.radians(rng.uniform(-self.max_slope_deg, self.max_slope_deg, n))
        x0 = self.flat_start + self.segment_length * np.arange(n)
        heights = np.concatenate([[0.0], np.cumsum(np.tan(slopes) * self.segment_length)])
        # segment 0 is the flat ground before the ramps (and behind the start)
        self.x_start = np.concatenate([[-np.inf], x0])
        self.slopes = np.concatenate([[0.0], slopes])
        self.h_start = np.concatenate([[0.0], heights[:-1]])
        self.x_anchor = np.concatenate([[0.0], x0])

    @staticmethod
    def run_length(speed: float, duration: float) -> float:
        """m of ramps a run at ``speed`` (m/s) for ``duration`` (s) is given:
        speed x duration x RUN_LENGTH_FACTOR + RUN_LENGTH_MARGIN."""
        return speed * duration * RUN_LENGTH_FACTOR + RUN_LENGTH_MARGIN

    @classmethod
    def for_run(cls, max_slope_deg: float, speed: float, duration: float, seed: int = 0) -> RampTerrain:
        """Ramps within +-``max_slope_deg`` long enough for a run at ``speed`` for ``duration``
        (`run_length`). ValueError: a slope outside [0, 45) degrees ("terrain slope: ...") or
        more than MAX_LENGTH m of ramps ("terrain length: ...")."""
        return cls(max_slope_deg, seed=seed, length=cls.run_length(speed, duration))

    @property
    def n_segments(self) -> int:
        return len(self.slopes)

    def segment_of(self, x) -> np.ndarray:
        return np.searchsorted(self.x_start, np.asarray(x, float), side="right") - 1

    def height(self, x) -> np.ndarray:
        i = self.segment_of(x)
        return self.h_start[i] + np.tan(self.slopes[i]) * (np.asarray(x, float) - self.x_anchor[i])

    def plane(self, i: int) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        """(location, XYZ orientation) of segment i's ContactHalfSpace in the ground frame
        (OpenSim's half-space normal is -X of its frame; rotated to point up the slope's normal)."""
        return (
            (float(self.x_anchor[i]), float(self.h_start[i]), 0.0),
            (0.0, 0.0, -math.pi / 2 + float(self.slopes[i])),
        )
