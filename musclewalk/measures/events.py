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

    def update(self, vertical_grf) -> list[int]:
        """The feet (in index order) whose touch-down at this sample starts a step."""
        contact = np.asarray(vertical_grf) > self.threshold
        if self.in_contact is None:
            self.in_contact = contact
        landing = contact & ~self.in_contact
        steps = []
        for foot in np.nonzero(landing)[0]:
            if self.last_foot is None or foot != self.last_foot:
                steps.append(int(foot))
                self.last_foot = int(foot)
        self.in_contact = contact
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
