"""Metabolic energy rate of Wang et al. 2012 (Anderson 1999 / Bhargava et al. 2004 model, the
constants as implemented in SCONE's Wang2012 effort measure):

    E_dot = B_dot + sum over muscles (A_dot + M_dot + S_dot + W_dot)

    activation heat   A_dot = m (40 f sin(pi/2 u) + 133 (1 - f) (1 - cos(pi/2 u)))
    maintenance heat  M_dot = m g(l) (74 f sin(pi/2 a) + 111 (1 - f) (1 - cos(pi/2 a)))
    shortening heat   S_dot = 0.25 F max(0, -v)
    positive work     W_dot = F_active max(0, -v)
    basal             B_dot = 1.51 W/kg x body mass

m: muscle mass = F_max / sigma x rho x l_opt (sigma = 0.25 MPa specific tension, rho = 1059.7
kg/m^3), f: slow-twitch fraction 0.5, u excitation, a activation, l normalized fibre length,
v fibre velocity (m/s, negative = shortening), F fibre force, F_active its active part (N);
g(l) = 0.5 (l <= 0.5), l (0.5 < l <= 1), 3 - 2 l (1 < l <= 1.5), 0 (l > 1.5). Watts.

Against OpenSim's Bhargava2004MuscleMetabolicsProbe configured alike (analysis/
metabolics_crosscheck.py, tests/measures/test_metabolics_opensim.py) every term agrees to the
recorded digits but the maintenance heat, which the probe charges on the excitation (Bhargava et
al. 2004) where this model, as SCONE's, charges it on the activation. SCONE's shortening heat takes
the tendon force; this one, as the probe, the fibre force.
"""

from __future__ import annotations

import numpy as np

SPECIFIC_TENSION = 0.25e6  # Pa
MUSCLE_DENSITY = 1059.7  # kg/m^3
SLOW_TWITCH = 0.5
BASAL_RATE = 1.51  # W/kg


def muscle_masses(fmax, optimal_fiber_length) -> np.ndarray:
    return (
        np.asarray(fmax, float) / SPECIFIC_TENSION * MUSCLE_DENSITY * np.asarray(optimal_fiber_length, float)
    )


def fiber_length_factor(norm_length) -> np.ndarray:
    l = np.asarray(norm_length, float)
    return np.where(l <= 0.5, 0.5, np.where(l <= 1.0, l, np.where(l <= 1.5, 3.0 - 2.0 * l, 0.0)))


def metabolic_rates(
    mass,
    excitation,
    activation,
    norm_length,
    fiber_velocity,
    fiber_force,
    active_force,
    slow_twitch=SLOW_TWITCH,
):
    """Per-muscle (activation, maintenance, shortening, work) heat rates, each (n,) in W."""
    f = slow_twitch
    u = np.clip(excitation, 0.0, 1.0)
    a = np.clip(activation, 0.0, 1.0)
    half_pi = 0.5 * np.pi
    activation_heat = mass * (
        40.0 * f * np.sin(half_pi * u) + 133.0 * (1.0 - f) * (1.0 - np.cos(half_pi * u))
    )
    maintenance_heat = (
        mass
        * fiber_length_factor(norm_length)
        * (74.0 * f * np.sin(half_pi * a) + 111.0 * (1.0 - f) * (1.0 - np.cos(half_pi * a)))
    )
    shortening = np.maximum(0.0, -np.asarray(fiber_velocity, float))
    shortening_heat = 0.25 * np.asarray(fiber_force, float) * shortening
    work = np.maximum(0.0, np.asarray(active_force, float)) * shortening
    return activation_heat, maintenance_heat, shortening_heat, work


def metabolic_rate(
    body_mass, mass, excitation, activation, norm_length, fiber_velocity, fiber_force, active_force
) -> float:
    """Whole-body metabolic rate (W), basal included."""
    terms = metabolic_rates(
        mass, excitation, activation, norm_length, fiber_velocity, fiber_force, active_force
    )
    return float(BASAL_RATE * body_mass + sum(t.sum() for t in terms))
