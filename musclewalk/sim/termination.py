"""Early termination rules of §5, tested every control step: COM height (above the terrain
under it) below 0.9 x its initial height, trunk heading more than 45 degrees off the target,
self-collision of the legs, and leg crossing (the coronal positions of the feet reversed)."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from ..control.rotations import heading_of
from ..model.metadata import ModelMeta

COM_HEIGHT_FACTOR = 0.9
MAX_HEADING_ERROR = math.radians(45.0)
# the paper does not define self-collision for capsule legs; here: the closest distance between
# a lower-leg or foot segment of one leg and one of the other leg below this clearance (m)
LEG_CLEARANCE = 0.04


def segment_distance(p0, p1, q0, q1) -> float:
    """Closest distance between segments p0-p1 and q0-q1."""
    d1, d2, r = p1 - p0, q1 - q0, p0 - q0
    a, e, f = d1 @ d1, d2 @ d2, d2 @ r
    c, b = d1 @ r, d1 @ d2
    denom = a * e - b * b
    s = np.clip((b * f - c * e) / denom, 0.0, 1.0) if denom > 1e-12 else 0.0
    t = (b * s + f) / e if e > 1e-12 else 0.0
    if t < 0.0:
        t, s = 0.0, np.clip(-c / a, 0.0, 1.0) if a > 1e-12 else 0.0
    elif t > 1.0:
        t, s = 1.0, np.clip((b - c) / a, 0.0, 1.0) if a > 1e-12 else 0.0
    return float(np.linalg.norm((p0 + d1 * s) - (q0 + d2 * t)))


def leg_segments(meta: ModelMeta) -> dict[str, list[tuple[str, str, str]]]:
    """The segments the self-collision rule tests, per side: (name, start body, end body), the
    lower leg from the knee to the ankle and the foot from the ankle to the toe joint (each the
    line between the two bodies' origins)."""
    out = {}
    for side in "rl":
        legs = meta.features.legs[side]
        out[side] = [("lower_leg", legs.lower, legs.foot), ("foot", legs.foot, legs.toe)]
    return out


class TerminationRules:
    def __init__(self, meta: ModelMeta, body_index: Mapping[str, int], trunk: str, terrain=None):
        self.terrain = terrain
        self.segments = {
            side: [(body_index[start], body_index[end]) for _, start, end in segments]
            for side, segments in leg_segments(meta).items()
        }
        self.trunk = body_index[trunk]
        self._right_points = sorted({i for seg in self.segments["r"] for i in seg})
        self._left_points = sorted({i for seg in self.segments["l"] for i in seg})
        self._bound = None
        self.initial_com_height = None

    def reset(self, com_height: float, body_pos=None) -> None:
        self.initial_com_height = com_height
        if body_pos is not None:
            # two segments can only come within LEG_CLEARANCE if some end points are closer
            # than clearance + the longest segment
            longest = max(
                np.linalg.norm(body_pos[a] - body_pos[b]) for side in "rl" for a, b in self.segments[side]
            )
            self._bound = LEG_CLEARANCE + longest

    def check(
        self, sensors, target_heading: float, max_heading_error: float = MAX_HEADING_ERROR
    ) -> str | None:
        """Name of the first rule that fires, or None (``max_heading_error``: the heading rule's
        limit, rad; a task may tighten the paper's 45 degrees, Scenario.max_heading_error)."""
        ground = float(self.terrain.height(sensors.com_pos[0])) if self.terrain is not None else 0.0
        if sensors.com_pos[1] - ground < COM_HEIGHT_FACTOR * self.initial_com_height:
            return "com_height"
        heading = heading_of(sensors.body_R[self.trunk])
        error = (target_heading - heading + math.pi) % (2 * math.pi) - math.pi
        if abs(error) > max_heading_error:
            return "heading"
        right = math.sin(heading) * sensors.foot_pos[:, 0] + math.cos(heading) * sensors.foot_pos[:, 2]
        if right[0] < right[1]:
            return "leg_crossing"
        pos = sensors.body_pos
        # cheap bound first: segments whose end points are all far apart cannot touch
        right = pos[self._right_points]
        left = pos[self._left_points]
        if self._bound is None:
            self._bound = np.inf
        gap = np.min(np.linalg.norm(right[:, None, :] - left[None, :, :], axis=2))
        if gap > self._bound:
            return None
        for a0, a1 in self.segments["r"]:
            for b0, b1 in self.segments["l"]:
                if segment_distance(pos[a0], pos[a1], pos[b0], pos[b1]) < LEG_CLEARANCE:
                    return "self_collision"
        return None
