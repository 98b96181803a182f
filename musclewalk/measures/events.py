"""Gait events: a foot is in contact while its vertical ground reaction force is above a threshold
(default 5 % of body weight); a touch-down starts a step only when it alternates with the last
one, so a foot that bounces on landing, or taps again before the other foot landed, is not a new
step. The objective's speed measure and `musclewalk analyze` use this one detector."""

from __future__ import annotations

import numpy as np

from ..constants import GRAVITY

CONTACT_FRACTION = 0.05  # a foot is in contact above 5 % of body weight


def contact_threshold(body_mass: float, fraction: float = CONTACT_FRACTION) -> float:
    """Vertical force (N) above which a foot is in contact."""
    return fraction * body_mass * GRAVITY


class StepDetector:
    """Streaming touch-down detector over the feet (index 0 = right, 1 = left). The contact
    state of the first sample is the starting state, never a touch-down."""

    def __init__(self, threshold: float):
        self.threshold = float(threshold)
        self.in_contact: np.ndarray | None = None
        self.last_foot: int | None = None

    def landings(self, vertical_grf) -> np.ndarray:
        """Per foot, whether it touches down at this sample (any touch-down, stepping or not)."""
        contact = np.asarray(vertical_grf) > self.threshold
        if self.in_contact is None:
            self.in_contact = contact
        landing = contact & ~self.in_contact
        self.in_contact = contact
        return landing

    def update(self, vertical_grf) -> list[int]:
        """The feet (in index order) whose touch-down at this sample starts a step."""
        landing = self.landings(vertical_grf)
        steps = []
        for foot in np.nonzero(landing)[0]:
            if self.last_foot is None or foot != self.last_foot:
                steps.append(int(foot))
                self.last_foot = int(foot)
        return steps


def touch_downs(t, vertical_grf, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Times of the touch-downs that start a step, (right, left), from a recorded run:
    ``vertical_grf`` is (n, 2), one column per foot."""
    detector = StepDetector(threshold)
    kept: list = [[], []]
    for tk, grf in zip(np.asarray(t, float), np.asarray(vertical_grf, float)):
        for foot in detector.update(grf):
            kept[foot].append(float(tk))
    return np.array(kept[0]), np.array(kept[1])


def gait_pattern(t, vertical_grf, threshold: float, touches: tuple | None = None) -> dict:
    """Walk, run or hop, from a recorded run's vertical GRF (n, 2) (right, left), per stride of the
    right foot (touch-down to touch-down): whether it has a flight phase (both feet off the
    ground: a run) and a double-support phase (both on it: a walk), and where the left foot lands
    in it (the phase offset: 0.5 alternates, near 0 or 1 the feet land together: hopping).

    pattern: "run" when every stride has a flight phase and the feet alternate, "walk" when every
    stride has double support and none has flight, "hop" when the feet land together (offset
    within 0.15 of 0 or 1 on average), else "mixed"; None with fewer than two right touch-downs.
    ``touches``: the run's (right, left) `touch_downs` when the caller has them already."""
    t = np.asarray(t, float)
    contact = np.asarray(vertical_grf, float) > threshold
    right, left = touches if touches is not None else touch_downs(t, vertical_grf, threshold)
    strides = list(zip(right[:-1], right[1:]))
    if not strides:
        return {"pattern": None, "strides": 0}
    flight, double, offsets = [], [], []
    for a, b in strides:
        inside = (t >= a) & (t < b)
        flight.append(bool(np.any(~contact[inside, 0] & ~contact[inside, 1])))
        double.append(bool(np.any(contact[inside, 0] & contact[inside, 1])))
        landing = left[(left >= a) & (left < b)]
        if len(landing):
            offsets.append(float((landing[0] - a) / (b - a)))
    offset = float(np.mean(offsets)) if offsets else None
    in_phase = offset is not None and min(offset, 1.0 - offset) < 0.15
    if in_phase:
        pattern = "hop"
    elif all(flight):
        pattern = "run"
    elif all(double) and not any(flight):
        pattern = "walk"
    else:
        pattern = "mixed"
    dt = np.diff(t, append=t[-1])
    airborne = ~contact[:, 0] & ~contact[:, 1]
    start = right[0]
    after = t >= start
    return {
        "pattern": pattern,
        "strides": len(strides),
        "strides_with_flight": int(sum(flight)),
        "strides_with_double_support": int(sum(double)),
        "flight_fraction": float(dt[after & airborne].sum() / max(dt[after].sum(), 1e-12)),
        "double_support_fraction": float(
            dt[after & contact[:, 0] & contact[:, 1]].sum() / max(dt[after].sum(), 1e-12)
        ),
        "left_touch_down_phase": offset,
    }
