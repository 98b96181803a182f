"""Objective of §5: E = E_speed + E_headori + E_headvel + E_slide + E_effort (eq. 32).

Each term integrates a measure E_m(t) over t_max and applies its threshold after integration
(eq. 33): E_m = W_m {(1/t_max) integral E_m dt}_{H_m}, where {x}_H = 0 if x < H. The integral
is divided by t_max (a time average) so that the Table 2 thresholds compare with an average
error, which is how "incidental high values compensated by below-threshold averages" reads.
After an early termination E_speed = 1 and the other measures 0 for the rest of t_max.

Measures (per control step):
  E_speed   = |1 - v_base / v_target| (eq. 34); v_base = forward speed of the average foot
              position between the last two contact initiations (touch-downs of alternating
              feet), (p_k - p_k-1) / max(t_k - t_k-1, t - t_k): it decays while no new step
              comes; 0 until two initiations were seen
  E_headori = rotation angle between head orientation and its target (eq. 35), rad
  E_headvel = |v_head_target - v_head| (eq. 36), m/s
  E_slide   = mean horizontal speed of the contact spheres that carry load (eq. 37), m/s
  E_effort  = metabolic rate per body mass (Wang et al. 2012), W/kg
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .metabolics import metabolic_rate, muscle_masses

TERMS = ("speed", "headori", "headvel", "slide", "effort")
WEIGHTS = {"speed": 100.0, "headori": 10.0, "headvel": 10.0, "slide": 10.0, "effort": 0.1}
THRESHOLDS = {"speed": 0.1, "headori": 0.2, "headvel": 0.3, "slide": 0.2, "effort": 0.0}
CONTACT_FRACTION = 0.05       # a foot is in contact above 5 % body weight
LOADED_SPHERE_FORCE = 1.0     # N: a contact sphere carries load above this


def threshold(value: float, h: float) -> float:
    return 0.0 if value < h else value


def combine(averages: dict) -> tuple[float, dict]:
    """Weighted, thresholded terms and their sum from time-averaged measures."""
    terms = {k: WEIGHTS[k] * threshold(averages[k], THRESHOLDS[k]) for k in TERMS}
    return float(sum(terms.values())), terms


def all_under_thresholds(averages: dict) -> bool:
    return all(averages[k] < THRESHOLDS[k] or THRESHOLDS[k] == 0.0 for k in TERMS)


@dataclass
class MeasureTotals:
    integrals: dict
    duration: float

    def averages(self) -> dict:
        return {k: v / self.duration for k, v in self.integrals.items()}


class ObjectiveRecorder:
    """Observer for Simulator.run: integrates the measures over the run."""

    def __init__(self, sim, scenario):
        meta = sim.meta
        self.scenario = scenario
        self.dt = scenario.control_interval
        self.mass = meta["total_mass"]
        self.contact_threshold = CONTACT_FRACTION * self.mass * 9.80665
        cm = sim.control_model
        self.trunk = cm.trunk_body
        self.head = cm.head_body if cm.head_body is not None else cm.trunk_body
        self.head_offset = (np.zeros(3) if cm.head_body is not None
                            else np.asarray(cm.head_offset, float))
        pose = meta["base_pose"]
        head_name = meta["bodies"][self.head]["name"]
        self.head_base_R = np.reshape(pose[head_name]["R"], (3, 3))
        fmax = [m["max_isometric_force"] for m in meta["muscles"]]
        lopt = [m["optimal_fiber_length"] for m in meta["muscles"]]
        self.muscle_mass = muscle_masses(fmax, lopt)
        self.bridge = sim.bridge
        self.integrals = {k: 0.0 for k in TERMS}
        # the latest sample (t, measures): it counts once the next control step shows that
        # the simulation went on past t (see finish)
        self._pending: tuple[float, dict] | None = None
        self.in_contact = None
        self.last_foot: int | None = None
        self.initiations: list[tuple[float, float]] = []
        self.v_base = 0.0
        self.steps = 0
        self.metabolic_energy = 0.0

    def __call__(self, sensors, excitation, engine, raw) -> None:
        t = sensors.t
        heading = self.scenario.heading_at(t)
        forward = np.array([math.cos(heading), 0.0, -math.sin(heading)])
        contact = sensors.foot_grf[:, 1] > self.contact_threshold
        if self.in_contact is None:
            self.in_contact = contact            # the state at t = 0 is no touch-down
        landing = contact & ~self.in_contact
        for foot in np.nonzero(landing)[0]:
            # a touch-down counts when it alternates with the last one (a foot bouncing on
            # landing, or the same foot tapping, is not a step)
            if self.last_foot is None or foot != self.last_foot:
                self.initiations.append((t, float(sensors.foot_pos.mean(axis=0) @ forward)))
                self.last_foot = int(foot)
        self.in_contact = contact
        if len(self.initiations) >= 2:
            (t0, p0), (t1, p1) = self.initiations[-2], self.initiations[-1]
            # eq. 34's base speed, decaying when no new step comes: no step, no progress
            self.v_base = (p1 - p0) / max(t1 - t0, t - t1, 1e-9)
        target = self.scenario.speed
        e_speed = abs(1.0 - self.v_base / target)
        R_head = sensors.body_R[self.head]
        c, s = math.cos(heading), math.sin(heading)
        R_target = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]) @ self.head_base_R
        cos_angle = (np.trace(R_head.T @ R_target) - 1.0) / 2.0
        e_headori = math.acos(max(-1.0, min(1.0, cos_angle)))
        r = R_head @ self.head_offset
        v_head = sensors.body_vel[self.head] + np.cross(sensors.body_omega[self.head], r)
        e_headvel = float(np.linalg.norm(target * forward - v_head))
        loaded = raw.contact_force[:, 1] > LOADED_SPHERE_FORCE
        if np.any(loaded):
            vel = self.bridge.contact_velocities(raw)[loaded]
            e_slide = float(np.mean(np.hypot(vel[:, 0], vel[:, 2])))
        else:
            e_slide = 0.0
        act, nfl, vel_f, f_fiber, f_active = engine.muscle_states()
        rate = metabolic_rate(self.mass, self.muscle_mass, excitation, act, nfl, vel_f,
                              f_fiber, f_active)
        self.metabolic_energy += rate * self.dt
        self._commit()
        self._pending = (t, {"speed": e_speed, "headori": e_headori, "headvel": e_headvel,
                             "slide": e_slide, "effort": rate / self.mass})
        self.steps += 1

    def _commit(self) -> None:
        if self._pending is not None:
            for key, value in self._pending[1].items():
                self.integrals[key] += value * self.dt
            self._pending = None

    def finish(self, simulated_time: float, terminated: bool) -> dict:
        """Time-averaged measures over t_max, with the termination penalty applied."""
        duration = self.scenario.duration
        # the sample of control step k stands for [t_k, t_k + dt) (a left Riemann sum, so a
        # constant measure averages to itself). The observers also see the state at the end of
        # the simulated time (t_max itself, or the step an integrator failure stopped at): that
        # sample stands for no simulated time and does not count.
        integrals = dict(self.integrals)
        if self._pending is not None and self._pending[0] < simulated_time - 0.5 * self.dt:
            for key, value in self._pending[1].items():
                integrals[key] += value * self.dt
        if terminated:
            integrals["speed"] += max(0.0, duration - simulated_time) * 1.0
        return MeasureTotals(integrals, duration).averages()

