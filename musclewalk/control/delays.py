"""Neural delays (§4.4, eq 20): per-muscle ring buffers, exact in control steps.

A value pushed at control step k comes out at step k + delay_steps (so a feedback excitation computed
from the sensors at time t reaches the muscle at t + delay). Buffers start filled with zeros.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

_TOLERANCE = 1e-6


def delay_steps_from_seconds(
    delays: Sequence[float], dt: float, names: Sequence[str] | None = None
) -> np.ndarray:
    """round(delay / dt) per entry; ValueError when a delay is not an integer multiple of dt."""
    delays = np.asarray(delays, float).reshape(-1)
    if not dt > 0.0:
        raise ValueError(f"dt must be positive, got {dt!r}")
    ratio = delays / dt
    steps = np.rint(ratio)
    for i in np.flatnonzero(np.abs(ratio - steps) > _TOLERANCE * np.maximum(1.0, np.abs(ratio))):
        who = names[i] if names is not None else f"#{i}"
        raise ValueError(
            f"delay of muscle {who} ({delays[i]:g} s) is not an integer multiple "
            f"of the control interval dt={dt:g} s"
        )
    if np.any(steps < 0):
        raise ValueError("delays must be >= 0")
    return steps.astype(np.intp)


class DelayLine:
    """Delays each channel i by ``delay_steps[i]`` calls of `push`."""

    def __init__(self, delay_steps: Sequence[int]):
        self.delay_steps = np.asarray(delay_steps, dtype=np.intp).reshape(-1)
        if np.any(self.delay_steps < 0):
            raise ValueError("delay_steps must be >= 0")
        self.length = int(self.delay_steps.max(initial=0)) + 1
        self._channels = np.arange(self.delay_steps.size)
        self._buffer = np.zeros((self.length, self.delay_steps.size))
        self._count = 0

    def reset(self) -> None:
        self._buffer.fill(0.0)
        self._count = 0

    def push(self, values: np.ndarray) -> np.ndarray:
        """Store this step's values and return each channel's value from delay_steps pushes ago."""
        k = self._count
        self._buffer[k % self.length] = values
        self._count = k + 1
        return self._buffer[(k - self.delay_steps) % self.length, self._channels]
