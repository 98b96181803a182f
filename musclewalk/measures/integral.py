"""Time integral of samples taken once per control step.

The sample of control step k stands for [t_k, t_k + dt) (a left Riemann sum, so a constant
measure integrates to itself times the simulated time). A run also yields a sample at the end of
its simulated time (t_max itself, or the step an integrator failure stopped at); it stands for no
simulated time and does not count. A sample counts once the next one shows that the simulation
went on past it, or at `totals` when it lies before the end."""

from __future__ import annotations

from typing import Mapping


class StepIntegral:
    def __init__(self, names, dt: float):
        self.dt = float(dt)
        self.integrals = {k: 0.0 for k in names}
        self._pending: tuple[float, Mapping[str, float]] | None = None

    def add(self, t: float, values: Mapping[str, float]) -> None:
        self._commit()
        self._pending = (float(t), dict(values))

    def _commit(self) -> None:
        if self._pending is not None:
            for key, value in self._pending[1].items():
                self.integrals[key] += value * self.dt
            self._pending = None

    def totals(self, simulated_time: float) -> dict:
        """Integrals over [0, simulated_time)."""
        integrals = dict(self.integrals)
        if self._pending is not None and self._pending[0] < simulated_time - 0.5 * self.dt:
            for key, value in self._pending[1].items():
                integrals[key] += value * self.dt
        return integrals
