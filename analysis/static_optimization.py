"""What a walker's motion would cost with the least muscle activation that reproduces it, against
what its controller pays; and what a lab trial of a person costs by the same accounting.

For each run folder (best.json + optimized.osim; re-simulated 10 s at its speed as
analysis/human_targets.py does) or `musclewalk simulate` folder, every control step from --skip s
on (default 2 s, the cycles `musclewalk compare` reads):

- the generalized forces the muscles delivered, tau_j = sum_i r_ij F_T,i, from the simulation's
  tendon forces and the model's moment arms r_ij at the simulated pose (OpenSim
  `computeMomentArm`; the root joint's coordinates take no muscle moment);
- each muscle's tendon force as a function of its activation, with the simulation's own fibre
  length and velocity held: F_T,i(a) = cos(alpha_i) (a k_i + p_i), k_i = its active fibre force
  per unit of activation (F_max f_L f_V), p_i its passive fibre force (elastic and damping), both
  as simulated;
- static optimization: the activations with the least mass-weighted sum of squares,
  sum_i m_i a_i^2 (the metabolic heat rates grow with muscle mass and activation), whose
  generalized forces equal tau in every coordinate a muscle crosses (a reserve torque per
  coordinate at a cost of (tau / 1e-3 N m)^2 makes the match all but exact), each activation
  between 1 and the least the muscle model allows: its minimum activation (0.01) and, while the
  damped fibre shortens, the activation below which its tendon would push (a k + p >= 0). The
  simulation's own activations satisfy this, so a solution always exists: the motion, the ground
  forces and every other force element stay as simulated.

Both activation patterns are then charged by the run's own metabolic model (Wang et al. 2012,
musclewalk.measures.metabolics; excitation = activation for the optimized one): the controller's
cost of transport over the window, the static-optimization one, and each by heat term and by
muscle; then what the muscles' generalized forces do at each coordinate (power), and for the hip,
knee and ankle per leg phase against the gaitutils normative joint powers. The difference is what
the controller's muscle coordination costs (co-contraction, excitations that make no force)
beyond what the motion needs; the static-optimization cost estimates what this gait costs with
these muscles, whatever controller drives it (sum m a^2 is not the Wang rate, and the fibre
lengths and velocities are the simulated ones, where other tendon forces would stretch the
compliant tendons differently; activation dynamics are left out).

--trial MODEL IK LOADS does the same for a person's lab trial (as `musclewalk compare --trial`
takes it): inverse dynamics of its coordinates (filtered at --lowpass Hz) under its ground
reaction loads gives the generalized forces, the muscles' rigid-tendon forces at its kinematics
the gains, reserve torques cost (tau / --reserve N m)^2, and its speed is the root's plus a
treadmill belt's, read from the foot on it.

    python3.11 analysis/static_optimization.py RUN_OR_SIM [RUN_OR_SIM ...] [--skip 2] [--every 2]
        [--trial MODEL IK LOADS] [--work DIR] [--out FILE.md] [--json FILE.json]
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from lxml import etree
from scipy.optimize import lsq_linear

from musclewalk.analysis.gait import read_storage
from musclewalk.measures.metabolics import (
    BASAL_RATE,
    metabolic_rates,
    muscle_masses,
)
from musclewalk.model.meta import load_meta

sys.path.insert(0, str(Path(__file__).resolve().parent))
from committed_comparison import simulate_run  # noqa: E402
from run_folders import write_whole  # noqa: E402

HEAT_TERMS = ("activation", "maintenance", "shortening", "work")
MOMENT_ARM_FLOOR = 1e-5  # m: a muscle whose moment arm about a coordinate stays below this does not cross it
PROBE_POSES = 25  # poses on which the crossing pairs are found
SIMULATION_RESERVE = 1e-3  # N m: a reserve torque this small costs as much as a fully active kilogram


def _root_coordinates(model) -> set[str]:
    """The coordinates of the joints whose parent is ground (the root's free joint)."""
    roots = set()
    ground = model.getGround().getAbsolutePathString()
    joints = model.getJointSet()
    for j in range(joints.getSize()):
        joint = joints.get(j)
        if joint.getParentFrame().findBaseFrame().getAbsolutePathString() == ground:
            for k in range(joint.numCoordinates()):
                roots.add(joint.get_coordinates(k).getName())
    return roots


def moment_arms(
    model_path: Path, states: pd.DataFrame, muscles: list[str]
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(coordinates, r[frame, coordinate, muscle], each muscle's minimum activation) at the poses
    of ``states`` (a states.sto table): every non-root coordinate that some muscle crosses."""
    from musclewalk.opensim_env import import_opensim

    osim = import_opensim()
    model = osim.Model(str(model_path))
    state = model.initSystem()
    coords = model.getCoordinateSet()
    roots = _root_coordinates(model)
    names = [coords.get(c).getName() for c in range(coords.getSize())]
    value_columns = {}
    for name in names:
        column = [c for c in states.columns if c.endswith(f"/{name}/value")]
        if len(column) != 1:
            raise ValueError(f"states: coordinate {name}: {len(column)} value columns")
        value_columns[name] = column[0]
    handles = [model.getMuscles().get(m) for m in muscles]
    candidates = [c for c in names if c not in roots]
    q = states[[value_columns[n] for n in names]].to_numpy()

    def pose(k: int) -> None:
        for c, name in enumerate(names):
            coords.get(name).setValue(state, float(q[k, c]), False)
        model.realizePosition(state)

    probe = np.linspace(0, len(q) - 1, min(PROBE_POSES, len(q))).astype(int)
    crossing = np.zeros((len(candidates), len(muscles)), bool)
    for k in probe:
        pose(k)
        for c, name in enumerate(candidates):
            coordinate = coords.get(name)
            for i, muscle in enumerate(handles):
                if not crossing[c, i]:
                    crossing[c, i] = abs(muscle.computeMomentArm(state, coordinate)) > MOMENT_ARM_FLOOR
    kept = [c for c in range(len(candidates)) if crossing[c].any()]
    pairs = [(row, c, i) for row, c in enumerate(kept) for i in np.flatnonzero(crossing[c])]
    arms = np.zeros((len(q), len(kept), len(muscles)))
    coordinate_handles = {c: coords.get(candidates[c]) for c in kept}
    for k in range(len(q)):
        pose(k)
        for row, c, i in pairs:
            arms[k, row, i] = handles[i].computeMomentArm(state, coordinate_handles[c])
    return [candidates[c] for c in kept], arms, minimum_activations(osim, handles)


def minimum_activations(osim, muscles) -> np.ndarray:
    """Each muscle's minimum activation (a Millard muscle's minimum_activation; 0 for others)."""
    out = []
    for m in muscles:
        millard = osim.Millard2012EquilibriumMuscle.safeDownCast(m)
        out.append(float(millard.get_minimum_activation()) if millard is not None else 0.0)
    return np.array(out)


def activation_floor(per_activation: np.ndarray, passive: np.ndarray, minimum: np.ndarray) -> np.ndarray:
    """The least activation each muscle may take (frames, muscles): the model's minimum activation,
    and the activation below which its damped passive force would make the tendon push
    (a k + p < 0 while the fibre shortens), at most 1."""
    with np.errstate(divide="ignore", invalid="ignore"):
        no_push = np.where((per_activation > 0) & (passive < 0), -passive / per_activation, 0.0)
    return np.minimum(1.0, np.maximum(minimum[None, :], no_push))


def least_activation_frame(
    gain: np.ndarray, required: np.ndarray, lower: np.ndarray, weights: np.ndarray, reserve: float
) -> np.ndarray:
    """One frame: the activations a in [``lower``, 1] with the least sum_i w_i a_i^2 +
    sum_j ((required_j - (gain a)_j) / reserve)^2, ``gain`` (coordinates, muscles) the generalized
    force per unit activation: a bounded least-squares problem (BVLS), the second sum the reserve
    torques' cost (a small ``reserve``, N m, makes the match all but exact)."""
    fixed = lower >= 1.0 - 1e-12  # muscles that must be fully active (lsq_linear needs lb < ub)
    a = np.where(fixed, 1.0, lower)
    free = ~fixed
    if free.any():
        system = np.vstack([np.diag(np.sqrt(weights[free])), gain[:, free] / reserve])
        target = np.concatenate([np.zeros(int(free.sum())), (required - gain[:, fixed] @ a[fixed]) / reserve])
        a[free] = lsq_linear(system, target, bounds=(lower[free], np.ones(int(free.sum()))), method="bvls").x
    return a


def least_activation(
    arms: np.ndarray, per_activation: np.ndarray, cos_pennation: np.ndarray, activation: np.ndarray,
    lower: np.ndarray, weights: np.ndarray, reserve: float = SIMULATION_RESERVE,
    removed_passive: np.ndarray | None = None,
) -> np.ndarray:  # fmt: skip
    """Per frame the activations in [``lower``, 1] with the least sum_i w_i a_i^2 whose generalized
    forces (sum_i r_ij cos_i (a_i k_i + p_i)) are those of the simulated ``activation`` (the
    passive p_i, the same in both, cancel; `least_activation_frame`); arrays (frames, muscles),
    ``arms`` (frames, coordinates, muscles). ``removed_passive``: passive fibre forces taken out
    of the model (a counterfactual), which the activations must then make up for."""
    solution = np.empty_like(activation)
    for k in range(len(activation)):
        gain = arms[k] * (cos_pennation[k] * per_activation[k])[None, :]
        required = gain @ activation[k]
        if removed_passive is not None:
            required = required + arms[k] @ (cos_pennation[k] * removed_passive[k])
        solution[k] = least_activation_frame(gain, required, lower[k], weights, reserve)
    return solution


PHASE_ORDER = ["stance", "lift_off", "swing", "stance_preparation"]  # the FSM's order (eq. 8)
SAGITTAL = {"hip": "hip_flexion", "knee": "knee_angle", "ankle": "ankle_angle"}  # joint: coordinate


def _sagittal_power(joint_power: dict, passive_power: dict, mass: float) -> dict:
    """Per leg joint (hip, knee, ankle) whose coordinates <coordinate>_r and _l the model has:
    {"walker": (mean positive, mean negative) W/kg of the muscles' power, both legs averaged,
    "walker_passive_net": the mean of the part their passive fibre forces deliver,
    "people": the same of the normative net joint power curve}."""
    from musclewalk.analysis.reference import normative

    curves = normative().curves
    out = {}
    for joint, coordinate in SAGITTAL.items():
        sides = [joint_power.get(f"{coordinate}_{s}") for s in "rl"]
        if None in sides:
            continue
        norm = curves[f"{joint}_power"][0]
        out[joint] = {
            "walker": (
                sum(p["positive_W"] for p in sides) / (2 * mass),
                sum(p["negative_W"] for p in sides) / (2 * mass),
            ),
            "walker_passive_net": sum(passive_power[f"{coordinate}_{s}"] for s in "rl") / (2 * mass),
            "people": (float(np.maximum(norm, 0).mean()), float(np.minimum(norm, 0).mean())),
        }
    return out


def _sagittal_power_by_muscle(
    names: list[str], coordinates: list[str], arms: np.ndarray, active: np.ndarray, passive: np.ndarray,
    speeds: np.ndarray, mass: float,
) -> dict:  # fmt: skip
    """{joint: {muscle: {"active": net W/kg, "passive": net W/kg}}}: the mean power each leg muscle's
    active and passive tendon force (``active``, ``passive``: along the tendon, (frames, muscles))
    delivers at the joint's sagittal coordinate, per leg (both legs averaged, the muscle named
    without its side), the largest first."""
    out: dict = {}
    for joint, coordinate in SAGITTAL.items():
        sums: dict = {}
        for side in "rl":
            if f"{coordinate}_{side}" not in coordinates:
                continue
            j = coordinates.index(f"{coordinate}_{side}")
            for i, name in enumerate(names):
                if not name.endswith(f"_{side}") or not np.any(arms[:, j, i]):
                    continue
                base = name[: -len(side) - 1]
                entry = sums.setdefault(base, {"active": 0.0, "passive": 0.0})
                entry["active"] += float((arms[:, j, i] * active[:, i] * speeds[:, j]).mean()) / (2 * mass)
                entry["passive"] += float((arms[:, j, i] * passive[:, i] * speeds[:, j]).mean()) / (2 * mass)
        if sums:
            out[joint] = dict(
                sorted(sums.items(), key=lambda kv: -abs(kv[1]["active"]) - abs(kv[1]["passive"]))
            )
    return out


def _power_by_phase(
    sim: Path, time: np.ndarray, coordinates: list[str], power: np.ndarray, mass: float
) -> dict:
    """{joint: {leg phase: (positive, negative)}}: each leg's sagittal muscle power (W/kg, both legs
    averaged) summed over the control steps in which that leg is in the phase (the controller's
    state, controller.csv), divided by all the steps: the phases' parts add up to the joint's
    mean."""
    path = sim / "controller.csv"
    if not path.is_file():
        return {}
    controller = pd.read_csv(path)
    rows = [int(np.argmin(np.abs(controller["t"].to_numpy() - t))) for t in time]
    out: dict = {}
    for joint, coordinate in SAGITTAL.items():
        for side in "rl":
            name = f"{coordinate}_{side}"
            if name not in coordinates or f"state_{side}" not in controller:
                continue
            states = controller[f"state_{side}"].to_numpy()[rows]
            p = power[:, coordinates.index(name)]
            for phase in sorted(set(states), key=lambda x: (PHASE_ORDER + [x]).index(x)):
                inside = states == phase
                part = out.setdefault(joint, {}).setdefault(str(phase), [0.0, 0.0])
                part[0] += float(np.maximum(p[inside], 0).sum()) / (2 * mass * len(p))
                part[1] += float(np.minimum(p[inside], 0).sum()) / (2 * mass * len(p))
    return out


def _columns(muscles_csv: pd.DataFrame, names: list[str], quantity: str) -> np.ndarray:
    return muscles_csv[[f"{n}.{quantity}" for n in names]].to_numpy()


def cost_table(sim: Path, skip: float, every: int, without_passive: tuple = ()) -> dict:
    summary = json.loads((sim / "summary.json").read_text())
    meta = load_meta(summary["model"])
    names = [m.name for m in meta.muscles]
    mass = meta.total_mass
    table = pd.read_csv(sim / "muscles.csv")
    states = read_storage(sim / "states.sto")
    keep = table["time"].to_numpy() >= skip - 1e-9
    frames = np.flatnonzero(keep)[::every]
    if len(frames) < 2:
        raise ValueError(f"{sim}: the simulation ends before --skip {skip} s")
    table = table.iloc[frames].reset_index(drop=True)
    state_times = states["time"].to_numpy()
    rows = [int(np.argmin(np.abs(state_times - t))) for t in table["time"]]
    states = states.iloc[rows].reset_index(drop=True)

    excitation, activation = _columns(table, names, "excitation"), _columns(table, names, "activation")
    length, velocity = _columns(table, names, "norm_fiber_length"), _columns(table, names, "fiber_velocity")
    fiber_force, active = _columns(table, names, "fiber_force"), _columns(table, names, "active_fiber_force")
    tendon = _columns(table, names, "force")
    per_activation = active / np.maximum(activation, 1e-6)
    passive = fiber_force - active
    cos_pennation = np.where(
        np.abs(fiber_force) > 1e-6, tendon / np.where(fiber_force == 0, 1, fiber_force), 1.0
    )
    cos_pennation = np.clip(cos_pennation, 0.0, 1.0)

    coordinates, arms, minimum = moment_arms(Path(summary["model"]), states, names)
    masses = muscle_masses(
        [m.max_isometric_force for m in meta.muscles], [m.optimal_fiber_length for m in meta.muscles]
    )
    lower = np.minimum(activation_floor(per_activation, passive, minimum), activation)
    optimized = least_activation(arms, per_activation, cos_pennation, activation, lower, masses)

    # the generalized forces of both patterns agree (a check of the solution, N m per kg)
    def generalized(a):
        return np.einsum("kci,ki->kc", arms, cos_pennation * (a * per_activation + passive))

    mismatch = float(np.abs(generalized(optimized) - generalized(activation)).max() / mass)
    time = table["time"].to_numpy()
    duration = float(time[-1] - time[0])
    root_x = [c for c in states.columns if c.endswith("_tx/value")]
    distance = (
        float(states[root_x[0]].iloc[-1] - states[root_x[0]].iloc[0]) if root_x else summary["distance"]
    )
    speed = distance / duration

    def charged(u, a, passive=passive):
        heat = metabolic_rates(
            masses, u, a, length, velocity, a * per_activation + passive, a * per_activation
        )
        terms = {t: float(h.sum(axis=1).mean()) for t, h in zip(HEAT_TERMS, heat)}
        terms["basal"] = BASAL_RATE * mass
        total = sum(terms.values())
        per_muscle = sum(h for h in heat).mean(axis=0)
        return {
            "rate_W": total,
            "cost_of_transport_J_per_kg_m": total / (mass * speed),
            "terms_W": terms,
            "mean_activation": {n: float(a[:, i].mean()) for i, n in enumerate(names)},
            "muscle_W": {n: float(per_muscle[i]) for i, n in enumerate(names)},
        }

    counterfactual = {}
    if without_passive:
        # the same motion if these muscles had no passive fibre force (elastic and damping)
        removed = np.zeros_like(passive)
        chosen = [i for i, n in enumerate(names) if any(fnmatch.fnmatch(n, p) for p in without_passive)]
        if not chosen:
            raise ValueError(f"--without-passive {' '.join(without_passive)}: no muscle of {sim} matches")
        removed[:, chosen] = passive[:, chosen]
        kept = passive - removed
        floor = np.maximum(activation_floor(per_activation, kept, minimum), 0.0)
        without = least_activation(
            arms, per_activation, cos_pennation, activation, floor, masses, removed_passive=removed
        )
        reserve = np.einsum("kci,ki->kc", arms, cos_pennation * (without * per_activation + kept))
        reserve = generalized(activation) - reserve
        counterfactual = {
            "without_passive": {
                "muscles": [names[i] for i in chosen],
                "largest_reserve_N_m": float(np.abs(reserve).max()),
                "frames_short_N_m_above_1": int((np.abs(reserve).max(axis=1) > 1.0).sum()),
                **charged(without, without, kept),
            }
        }

    # what the muscles' generalized forces do at each coordinate: mean positive and negative
    # power tau_j qdot_j (W), the same for both activation patterns
    speed_columns = [[c for c in states.columns if c.endswith(f"/{name}/speed")][0] for name in coordinates]
    power = generalized(activation) * states[speed_columns].to_numpy()
    joint_power = {
        name: {"positive_W": float(np.maximum(power[:, j], 0).mean()),
               "negative_W": float(np.minimum(power[:, j], 0).mean())}
        for j, name in enumerate(coordinates)
    }  # fmt: skip
    speeds = states[speed_columns].to_numpy()
    passive_power = np.einsum("kci,ki->kc", arms, cos_pennation * passive) * speeds
    passive_net = {name: float(passive_power[:, j].mean()) for j, name in enumerate(coordinates)}
    sagittal = _sagittal_power(joint_power, passive_net, mass)
    by_phase = _power_by_phase(sim, time, coordinates, power, mass)
    by_muscle = _sagittal_power_by_muscle(
        names, coordinates, arms, cos_pennation * active, cos_pennation * passive, speeds, mass
    )
    fibre_power = active * velocity  # W per muscle, shortening (v < 0) produces: -F v > 0
    return {
        "simulation": str(sim),
        "muscle_joint_power_W": joint_power,
        "sagittal_power_W_per_kg": sagittal,
        "sagittal_power_by_leg_phase_W_per_kg": by_phase,
        "sagittal_power_by_muscle_W_per_kg": by_muscle,
        "muscle_joint_work_rate_W": {
            "positive": float(np.maximum(power, 0).sum(axis=1).mean()),
            "negative": float(np.minimum(power, 0).sum(axis=1).mean()),
        },
        "active_fibre_work_rate_W": {
            "positive": float(np.maximum(-fibre_power, 0).sum(axis=1).mean()),
            "negative": float(np.minimum(-fibre_power, 0).sum(axis=1).mean()),
        },
        "model": summary["model"],
        "window_s": [float(time[0]), float(time[-1])],
        "frames": len(time),
        "speed_m_s": speed,
        "body_mass_kg": mass,
        "coordinates": coordinates,
        "generalized_force_mismatch_N_m_per_kg": mismatch,
        # the simulation's own signals (its excitation and activation), as `musclewalk analyze` charges them
        "controller": charged(excitation, activation),
        "static_optimization": charged(optimized, optimized),
        **counterfactual,
    }


def _trial_muscle_states(model, state, values: dict, speeds: dict, frames: int, feet: list[str]) -> dict:
    """Per frame of a trial, with rigid tendons and every activation at 1: each muscle's moment
    arm about every coordinate, its active and passive force along the tendon and along the
    fibre, its normalized fibre length and its fibre velocity, and the forward (x) speed in ground
    of each body in ``feet``; arrays (frames, ...)."""
    coords = model.getCoordinateSet()
    names = [coords.get(c).getName() for c in range(coords.getSize())]
    muscles = [model.getMuscles().get(i) for i in range(model.getMuscles().getSize())]
    quantities = ("arms", "active", "passive", "fibre_active", "fibre_passive", "length", "velocity", "feet")
    out: dict = {q: [] for q in quantities}
    bodies = [model.getBodySet().get(name) for name in feet]
    for k in range(frames):
        for name in names:
            coords.get(name).setValue(state, float(values[name][k]), False)
            coords.get(name).setSpeedValue(state, float(speeds[name][k]))
        for m in muscles:
            m.setActivation(state, 1.0)
        model.realizeDynamics(state)
        out["arms"].append([[m.computeMomentArm(state, coords.get(c)) for m in muscles] for c in names])
        out["active"].append([m.getActiveFiberForceAlongTendon(state) for m in muscles])
        out["passive"].append([m.getPassiveFiberForceAlongTendon(state) for m in muscles])
        out["fibre_active"].append([m.getActiveFiberForce(state) for m in muscles])
        out["fibre_passive"].append([m.getPassiveFiberForce(state) for m in muscles])
        out["length"].append([m.getNormalizedFiberLength(state) for m in muscles])
        out["velocity"].append([m.getFiberVelocity(state) for m in muscles])
        out["feet"].append([b.getVelocityInGround(state).get(1).get(0) for b in bodies])
    return {key: np.asarray(v, float) for key, v in out.items()}


def trial_cost(model_path: Path, ik_path: Path, loads_path: Path, lowpass_hz: float, reserve: float) -> dict:
    """Static optimization of a lab trial (a model with Millard muscles, its inverse kinematics and
    ground reaction loads, as `musclewalk compare --trial` takes them), charged by the same
    metabolic model: what a person's gait costs by this accounting. The muscles' rigid-tendon
    forces at the trial's kinematics; the generalized forces to match are the inverse dynamics'
    (every force element excluded) less the muscles' passive forces, about every non-root
    coordinate a muscle crosses; a reserve torque per coordinate, costing (tau / ``reserve``)^2
    against sum_i m_i a_i^2 (N m, kg), keeps every frame solvable."""
    from musclewalk.analysis.kinetics import coordinate_splines, inverse_dynamics
    from musclewalk.opensim_env import import_opensim

    osim = import_opensim()
    model = osim.Model(str(model_path))
    muscle_set = model.getMuscles()
    names = [muscle_set.get(i).getName() for i in range(muscle_set.getSize())]
    for i in range(muscle_set.getSize()):
        muscle_set.get(i).set_ignore_tendon_compliance(True)
    state = model.initSystem()
    ik_times = read_storage(ik_path)["time"].to_numpy()
    generalized = inverse_dynamics(model, ik_path, loads_path, ik_times[0], ik_times[-1], lowpass_hz)
    times = generalized["time"].to_numpy()
    values, speeds = coordinate_splines(model, ik_path, None, times, lowpass_hz)
    feet = sorted({e.text.strip() for e in etree.parse(str(loads_path)).iter("applied_to_body")})
    data = _trial_muscle_states(model, state, values, speeds, len(times), feet)
    # where even full activation leaves the rigid-tendon fibre force negative OpenSim clamps it at
    # 0 (its passive force then reads minus the active): the muscle makes no force in that frame
    clamped = (data["passive"] < 0) & (
        np.abs(data["active"] + data["passive"]) <= 1e-9 + 1e-9 * data["active"]
    )
    for key in ("active", "passive", "fibre_active", "fibre_passive"):
        data[key][clamped] = 0.0
    minimum = minimum_activations(osim, [muscle_set.get(i) for i in range(len(names))])
    coords = model.getCoordinateSet()
    all_coordinates = [coords.get(c).getName() for c in range(coords.getSize())]
    roots = _root_coordinates(model)
    crossing = (np.abs(data["arms"]) > MOMENT_ARM_FLOOR).any(axis=(0, 2))
    kept = [j for j, c in enumerate(all_coordinates) if crossing[j] and c not in roots]
    coordinates = [all_coordinates[j] for j in kept]
    arms = data["arms"][:, kept, :]
    required = np.column_stack([generalized[f"{c}_moment"].to_numpy() for c in coordinates])
    required -= np.einsum("kci,ki->kc", arms, data["passive"])
    fmax = np.array([muscle_set.get(i).getMaxIsometricForce() for i in range(len(names))])
    lopt = np.array([muscle_set.get(i).getOptimalFiberLength() for i in range(len(names))])
    masses = muscle_masses(fmax, lopt)
    activation = np.empty((len(times), len(names)))
    reserves = np.empty_like(required)
    lower = activation_floor(data["active"], data["passive"], minimum)
    for k in range(len(times)):
        gain = arms[k] * data["active"][k][None, :]
        activation[k] = least_activation_frame(gain, required[k], lower[k], masses, reserve)
        reserves[k] = required[k] - gain @ activation[k]
    heat = metabolic_rates(
        masses, activation, activation, data["length"], data["velocity"],
        activation * data["fibre_active"] + data["fibre_passive"], activation * data["fibre_active"],
    )  # fmt: skip
    mass = model.getTotalMass(state)
    terms = {t: float(h.sum(axis=1).mean()) for t, h in zip(HEAT_TERMS, heat)}
    terms["basal"] = BASAL_RATE * mass
    forward = [c for c in all_coordinates if c in roots and c.endswith("_tx")]
    # over ground: the root's mean forward speed; on a treadmill plus the belt's, which the foot on
    # it moves back with (the backmost foot's speed, its median over the trial, is minus the belt's)
    belt = max(0.0, -float(np.median(data["feet"].min(axis=1))))
    speed = float(values[forward[0]][-1] - values[forward[0]][0]) / float(times[-1] - times[0]) + belt
    per_muscle = sum(h for h in heat).mean(axis=0)
    rms = lambda x: {c: float(np.sqrt((x[:, j] ** 2).mean())) for j, c in enumerate(coordinates)}  # noqa: E731
    return {
        "trial": [str(model_path), str(ik_path), str(loads_path)],
        "window_s": [float(times[0]), float(times[-1])],
        "frames": len(times),
        "speed_m_s": speed,
        "belt_speed_m_s": belt,
        "body_mass_kg": mass,
        "coordinates": coordinates,
        "reserve_rms_N_m": rms(reserves),
        "required_rms_N_m": rms(required),
        "static_optimization": {
            "rate_W": sum(terms.values()),
            "cost_of_transport_J_per_kg_m": sum(terms.values()) / (mass * speed),
            "terms_W": terms,
            "mean_activation": {n: float(activation[:, i].mean()) for i, n in enumerate(names)},
            "muscle_W": {n: float(per_muscle[i]) for i, n in enumerate(names)},
        },
    }


def trial_markdown(result: dict) -> str:
    s = result["static_optimization"]
    worst = max(result["reserve_rms_N_m"], key=result["reserve_rms_N_m"].get)
    lines = [
        f"lab trial {result['trial'][1]} on {result['trial'][0]}: {result['frames']} frames from "
        f"{result['window_s'][0]:.2f} to {result['window_s'][1]:.2f} s at {result['speed_m_s']:.2f} m/s, "
        f"{len(result['coordinates'])} coordinates (largest reserve RMS "
        f"{result['reserve_rms_N_m'][worst]:.1f} N m, {worst}, of its "
        f"{result['required_rms_N_m'][worst]:.1f} N m; belt speed {result['belt_speed_m_s']:.2f} m/s)",
        "",
        "| | least activation (static optimization) |",
        "|---|---|",
        f"| gross cost of transport, J/(kg m) | {s['cost_of_transport_J_per_kg_m']:.2f} |",
        f"| metabolic rate, W (W/kg) | {s['rate_W']:.0f} ({s['rate_W'] / result['body_mass_kg']:.2f}) |",
    ]
    for term in (*HEAT_TERMS, "basal"):
        lines.append(f"| {term}{' heat' if term in HEAT_TERMS[:3] else ''}, W | {s['terms_W'][term]:.0f} |")
    lines += ["", "| muscle | W (mean activation) |", "|---|---|"]
    for n in sorted(s["muscle_W"], key=lambda m: -s["muscle_W"][m])[:8]:
        lines.append(f"| {n} | {s['muscle_W'][n]:.0f} ({s['mean_activation'][n]:.2f}) |")
    return "\n".join(lines)


def markdown(name: str, result: dict) -> str:
    c, s = result["controller"], result["static_optimization"]
    w = result.get("without_passive")
    lines = [
        f"{name}: {result['frames']} control steps from {result['window_s'][0]:.2f} to "
        f"{result['window_s'][1]:.2f} s at "
        f"{result['speed_m_s']:.2f} m/s, {len(result['coordinates'])} "
        f"coordinates matched (largest generalized-force difference "
        f"{result['generalized_force_mismatch_N_m_per_kg']:.1e} N m/kg)",
        "",
        "| | controller | least activation (static optimization) |"
        + (
            (
                " without their passive force |"
                if not w["frames_short_N_m_above_1"]
                else " without their passive force (short of the motion's forces: below) |"
            )
            if w
            else ""
        ),
        "|---|---|---|" + ("---|" if w else ""),
    ]
    columns = [c, s, w] if w else [c, s]

    def row(label: str, values: list) -> str:
        return f"| {label} | " + " | ".join(values) + " |"

    lines.append(
        row(
            "gross cost of transport, J/(kg m)", [f"{x['cost_of_transport_J_per_kg_m']:.2f}" for x in columns]
        )
    )
    lines.append(row("metabolic rate, W", [f"{x['rate_W']:.0f}" for x in columns]))
    for term in (*HEAT_TERMS, "basal"):
        label = f"{term}{' heat' if term in HEAT_TERMS[:3] else ''}, W"
        lines.append(row(label, [f"{x['terms_W'][term]:.0f}" for x in columns]))
    if w:
        lines += [
            "",
            f"Without the passive fibre force of {', '.join(w['muscles'])} (the same motion; the muscles "
            f"make up for it): the largest generalized force they could not make up "
            f"{w['largest_reserve_N_m']:.1f} N m, above 1 N m in {w['frames_short_N_m_above_1']} of "
            f"{result['frames']} control steps.",
        ]
    jw, fw = result["muscle_joint_work_rate_W"], result["active_fibre_work_rate_W"]
    lines += [
        "",
        f"Mechanical power of the muscles, W (mean over the window): at the joints (generalized force "
        f"x coordinate speed, summed over coordinates) +{jw['positive']:.0f} / {jw['negative']:.0f}; "
        f"of the active fibres (controller) +{fw['positive']:.0f} / {fw['negative']:.0f}. By coordinate "
        "(positive / negative, the largest):",
        "",
        "| coordinate | positive, W | negative, W |",
        "|---|---|---|",
    ]
    power = result["muscle_joint_power_W"]
    for name in sorted(power, key=lambda n: -(power[n]["positive_W"] - power[n]["negative_W"]))[:8]:
        lines.append(f"| {name} | {power[name]['positive_W']:.0f} | {power[name]['negative_W']:.0f} |")
    sagittal = result.get("sagittal_power_W_per_kg")
    if sagittal:
        lines += [
            "",
            "Sagittal joint power per leg, W/kg, mean over time of its positive / negative part "
            "(the walker: its muscles' generalized forces, both legs averaged; people: the net joint "
            "power of the gaitutils normative curves):",
            "",
            "| joint | walker | walker, by its leg's phase | of it, net, passive fibre force | people |",
            "|---|---|---|---|---|",
        ]
        phases = result.get("sagittal_power_by_leg_phase_W_per_kg") or {}
        for joint, v in sagittal.items():
            split = ", ".join(
                f"{phase} +{pos:.2f} / {neg:.2f}" for phase, (pos, neg) in phases.get(joint, {}).items()
            )
            lines.append(
                f"| {joint} | +{v['walker'][0]:.2f} / {v['walker'][1]:.2f} | {split} | "
                f"{v['walker_passive_net']:+.2f} | "
                f"+{v['people'][0]:.2f} / {v['people'][1]:.2f} |"
            )
    by_muscle = result.get("sagittal_power_by_muscle_W_per_kg")
    if by_muscle:
        lines += [
            "",
            "Of it, net over the cycle by muscle (active / passive tendon force), W/kg per leg:",
            "",
        ]
        for joint, muscles in by_muscle.items():
            shown = list(muscles.items())[:4]
            lines.append(
                f"- {joint}: " + ", ".join(f"{m} {v['active']:+.2f} / {v['passive']:+.2f}" for m, v in shown)
            )
    lines += [
        "",
        "| muscle | controller: W (mean activation) | least activation: W (mean activation) |",
        "|---|---|---|",
    ]
    for n in sorted(c["muscle_W"], key=lambda m: -c["muscle_W"][m])[:12]:
        lines.append(
            f"| {n} | {c['muscle_W'][n]:.0f} ({c['mean_activation'][n]:.2f}) | "
            f"{s['muscle_W'][n]:.0f} ({s['mean_activation'][n]:.2f}) |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "runs",
        type=Path,
        nargs="*",
        help="run folders (best.json + optimized.osim) or `musclewalk simulate` folders",
    )
    ap.add_argument("--skip", type=float, default=2.0, help="seconds left out at the start (default 2)")
    ap.add_argument("--every", type=int, default=2, help="every n-th control step (default 2: 10 ms)")
    ap.add_argument("--work", type=Path, help="keep the re-simulations here (default: a temp folder)")
    ap.add_argument("--out", type=Path, help="also write the tables to this Markdown file")
    ap.add_argument("--json", type=Path, help="write every result to this JSON file")
    ap.add_argument(
        "--without-passive",
        nargs="+",
        default=(),
        metavar="MUSCLE",
        help="also the least activation for the same motion with these muscles' passive fibre force "
        "taken out (names or patterns, e.g. 'hamstrings_*'): what their passive force saves or costs",
    )
    ap.add_argument(
        "--trial",
        type=Path,
        nargs=3,
        metavar=("MODEL", "IK", "LOADS"),
        help="also a lab trial: its model, inverse kinematics and ExternalLoads file",
    )
    ap.add_argument(
        "--lowpass", type=float, default=6.0, help="the trial's coordinates filter, Hz (default 6)"
    )
    ap.add_argument(
        "--reserve",
        type=float,
        default=1.0,
        help="the trial's reserve torques' optimal torque, N m (default 1)",
    )
    args = ap.parse_args(argv)
    if not args.runs and not args.trial:
        ap.error("give run or simulation folders, or --trial")
    for path in args.trial or []:
        if not path.is_file():
            ap.error(f"{path}: no such file")
    for run in args.runs:
        if not ((run / "muscles.csv").is_file() or (run / "best.json").is_file()):
            ap.error(f"{run}: neither a run folder (best.json) nor a simulation folder (muscles.csv)")
    results, text = {}, []
    with tempfile.TemporaryDirectory(prefix="musclewalk-so-") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        for run in args.runs:
            sim = run if (run / "muscles.csv").is_file() else simulate_run(run, work)
            try:
                results[str(run)] = cost_table(sim, args.skip, args.every, tuple(args.without_passive))
            except ValueError as exc:  # a run too short for --skip, a pattern naming no muscle
                ap.error(str(exc))
            text.append(markdown(str(run), results[str(run)]))
            print(text[-1] + "\n", flush=True)
        if args.trial:
            from musclewalk.analysis.kinetics import KineticsError

            try:
                results["trial"] = trial_cost(*args.trial, args.lowpass, args.reserve)
            except (KineticsError, ValueError, KeyError) as exc:  # a trial whose files do not fit
                ap.error(f"--trial: {exc}")
            text.append(trial_markdown(results["trial"]))
            print(text[-1] + "\n", flush=True)
    if args.out:
        write_whole("\n\n".join(text) + "\n", args.out)
    if args.json:
        write_whole(json.dumps(results, indent=1) + "\n", args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
