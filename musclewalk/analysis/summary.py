"""First gait summary of a simulation folder: speed, distance, termination, metabolic cost of
transport (Wang et al. 2012 model), the summed muscle force, stride frequency, where the energy
goes, where each muscle works on its force-length curve, the joint-limit torques and how much
each muscle's excitation switches. Steps, energy and force come from the same measures as the
optimizer's objective (`musclewalk.measures`): touch-downs of alternating feet from the vertical
GRF above 5 % of body weight, and the metabolic rate and summed muscle force integrated over the
control steps (each sample stands for its control interval; the sample at the end stands for
none). A model with ideal muscles (F = u F_max, models/physics.yaml ``muscles``) has no metabolic
model: its metabolic outputs are null, and ``metabolic_model`` says why."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from ..constants import CONTROL_INTERVAL
from ..io_checks import read_json_object
from ..measures.events import GRAVITY as G
from ..measures.events import contact_threshold, gait_pattern, touch_downs
from ..measures.gait import passive_fibre_force
from ..measures.integral import StepIntegral
from ..measures.metabolics import BASAL_RATE, metabolic_rates, muscle_masses
from ..model.meta import load_meta
from ..model.metadata import IDEAL_MUSCLES
from ..sim.outputs import read_storage

HEAT_TERMS = ("activation_heat", "maintenance_heat", "shortening_heat", "positive_work")
ENGAGED_TORQUE = 1.0  # N m: a joint limit carrying more is counted as engaged
# a muscle outside its working range: its passive fibre force averages more than this share of
# F_max (stretched: a spring the others work against), or its fibre force never reaches this one
# while it is excited (idle: slack, e.g. a tendon longer than its path; its activation heat buys
# nothing)
STRETCHED_PASSIVE_SHARE = 0.10
IDLE_FORCE_SHARE = 0.02
IDLE_EXCITATION = 0.05

RUN_KEYS = (
    "model",
    "creature",
    "simulated_time",
    "terminated",
    "termination_reason",
    "distance",
    "mean_forward_speed",
    "target_speed",
)


def read_run_summary(sim_dir) -> dict:
    """summary.json of a simulation folder; ValueError / FileNotFoundError naming the file and
    key when it is missing, not JSON, or lacks a key the analysis needs."""
    path = Path(sim_dir) / "summary.json"
    if not Path(sim_dir).is_dir():
        raise FileNotFoundError(f"{sim_dir}: simulation folder not found")
    if not path.exists():
        raise FileNotFoundError(f"{sim_dir}: not a simulation folder (no summary.json)")
    summary = read_json_object(path, ValueError, "summary")
    for key in RUN_KEYS:
        if key not in summary:
            raise ValueError(f"{path}: {key}: missing")
    return summary


def summarize(sim_dir) -> dict:
    sim_dir = Path(sim_dir)
    summary = read_run_summary(sim_dir)
    try:
        muscles = pd.read_csv(sim_dir / "muscles.csv")
        grf = read_storage(sim_dir / "grf.mot")
    except FileNotFoundError as exc:
        raise FileNotFoundError(
            f"{sim_dir}: not a complete simulation folder ({exc.filename} missing)"
        ) from None
    meta = load_meta(summary["model"])
    mass = meta.total_mass
    names = [m.name for m in meta.muscles]
    selected: dict[str, np.ndarray] = {}

    def cols(quantity: str) -> np.ndarray:
        """(samples, muscles) of one muscles.csv quantity, in the model's muscle order."""
        if quantity not in selected:
            selected[quantity] = muscles[[f"{n}.{quantity}" for n in names]].to_numpy()
        return selected[quantity]

    time = muscles["time"].to_numpy()
    simulated_time = float(summary["simulated_time"])
    dt = float(summary.get("control_interval", CONTROL_INTERVAL))
    # sum_M F_M / (M g), averaged over the run (measures.gait.MuscleForcePerBodyWeight)
    muscle_force = _time_average(time, cols("force").sum(axis=1) / (mass * G), dt, simulated_time)
    if meta.muscle_model == IDEAL_MUSCLES:
        energy, by_muscle = None, None
        metabolic_model = (
            "none: the model has ideal muscles (F = u F_max, physics.muscles: ideal), no fibre "
            "states for the Wang et al. 2012 heat rates"
        )
    else:
        energy, by_muscle = _metabolic_energy(meta, muscles, cols, time, dt, simulated_time)
        metabolic_model = (
            "Wang et al. 2012 (Anderson 1999 / Bhargava 2004 heat rates, basal "
            f"{BASAL_RATE} W/kg; musclewalk.measures.metabolics)"
        )
    distance = summary["distance"]
    walked = energy is not None and distance > 0.1
    vertical = grf[["ground_force_r_vy", "ground_force_l_vy"]].to_numpy()
    strikes = touch_downs(grf["time"].to_numpy(), vertical, contact_threshold(mass))
    right = strikes[0]
    stride_frequency = (
        float((len(right) - 1) / (right[-1] - right[0])) if len(right) >= 2 and right[-1] > right[0] else None
    )
    return {
        "creature": summary["creature"],
        "simulated_time": summary["simulated_time"],
        "terminated": summary["terminated"],
        "termination_reason": summary["termination_reason"],
        "distance": distance,
        "mean_forward_speed": summary["mean_forward_speed"],
        "target_speed": summary["target_speed"],
        **({"speed_change": summary["speed_change"]} if summary.get("speed_change") else {}),
        "mean_metabolic_rate_W": energy / simulated_time
        if energy is not None and simulated_time > 0
        else None,
        "metabolic_energy_J": energy,
        "cost_of_transport_J_per_kg_m": energy / (mass * distance) if walked else None,
        "cost_of_transport_dimensionless": energy / (mass * G * distance) if walked else None,
        # net: without the basal rate (Wang et al. 2012: 1.51 W/kg), the part walking costs
        "net_cost_of_transport_J_per_kg_m": (energy - BASAL_RATE * mass * simulated_time) / (mass * distance)
        if walked
        else None,
        "metabolic_model": metabolic_model,
        "mean_muscle_force_per_body_weight": muscle_force,
        "stride_frequency_Hz": stride_frequency,
        "heel_strikes": {"r": len(strikes[0]), "l": len(strikes[1])},
        # walk / run (a flight phase in every stride) / hop (the feet land together), from the
        # vertical GRF after the first right touch-down (measures.events.gait_pattern)
        "gait": gait_pattern(grf["time"].to_numpy(), vertical, contact_threshold(mass), strikes),
        "body_mass_kg": mass,
        # where the energy goes: mean W of each heat term per muscle, the costliest first
        "metabolic_by_muscle": by_muscle,
        "fibre_work": fibre_work(
            names, cols("fiber_force"), cols("fiber_velocity"), cols("active_fiber_force")
        ),
        "operating_range": None
        if meta.muscle_model == IDEAL_MUSCLES
        else _operating_range(meta, names, cols),
        "leg_phases": _leg_phases(sim_dir / "controller.csv", simulated_time),
        "joint_limit_torques": _joint_limit_torques(sim_dir / "joint_limits.csv"),
        "excitation_variation": _excitation_variation(names, cols("excitation"), time),
        "excitation_sources": _excitation_sources(sim_dir, summary, meta, names, cols, dt),
    }


def _excitation_sources(sim_dir: Path, summary: dict, meta, names, cols, dt: float) -> dict | None:
    """Where each muscle's excitation comes from, per phase of its leg (stance: stance and lift-off;
    swing: swing and stance preparation; a midline muscle: the whole run), as mean excitations:
    ``constant`` (eq 30-31 with the lift-off terms of eq 24-25), ``force_feedback`` (eq 23, the
    muscle's own force through its neural delay, with ankle_fplus.onset's gate on d_S) and
    ``remainder``, the rest: the target-feature and balance feedback (eq 16-22, 26-29) and any
    other controller feature beyond the paper, less what the clipping to [0, 1] took off. When the
    run recorded feedback_sources.npz, also
    ``feedback_by_source`` (all the delivered feedback, F+ included, by control.FEEDBACK_SOURCES:
    trunk_sagittal, ...; sources that never act left out) and ``clipping`` (what the clipping to
    [0, 1] added, < 0 where it cut), provided constant + the sources, clipped, reproduce the
    recorded excitations. Recomputed with the controller's own rules from the leg
    states (controller.csv), the muscle forces and the parameter file summary.json names, which
    must still hold the values simulated (a path as given to `musclewalk simulate`). None for a
    model with ideal muscles, or when controller.csv or the parameter file is gone or unreadable."""
    from ..control.controller import Controller
    from ..control.fsm import leg_state
    from ..sim.bridge import control_model_from_meta
    from ..sim.parameters import ParameterError, load_parameter_file, split_parameters

    if meta.muscle_model == IDEAL_MUSCLES:
        return None
    control_model = control_model_from_meta(meta, dt)
    path = summary.get("parameters")
    try:
        log = pd.read_csv(sim_dir / "controller.csv", usecols=["state_r", "state_l", "d_S_r", "d_S_l"])
        values = load_parameter_file(path) if path not in (None, "defaults") else {}  # sim.outputs
        controller = Controller(control_model, split_parameters(values, control_model, str(path))[0])
    except (FileNotFoundError, ParameterError, ValueError):
        return None
    excitation, force = cols("excitation"), cols("force")
    n = len(log)
    if n != len(excitation):
        return None
    pairs = [(leg_state(r), leg_state(l)) for r, l in zip(log["state_r"], log["state_l"])]
    terms = {pair: controller.state_terms(pair) for pair in set(pairs)}
    constant = np.array([terms[pair][0] for pair in pairs])
    force_feedback_now = np.array([terms[pair][1] for pair in pairs]) * force
    if controller.ankle_fplus_gated:
        force_feedback_now *= np.array(
            [controller.ankle_fplus_gate(d) for d in zip(log["d_S_r"], log["d_S_l"])]
        )
    # delivered delay_steps control steps later (control.delays, zeros at the start)
    force_feedback = _delivered(force_feedback_now, control_model.delay_steps)
    remainder = excitation - constant - force_feedback
    by_source = _delivered_feedback_sources(sim_dir, names, n, control_model.delay_steps)
    if by_source is not None:
        unclipped = constant + by_source[1].sum(axis=1)
        clipping = np.clip(unclipped, 0.0, 1.0) - unclipped
        # muscles.csv holds 6 significant digits
        if np.abs(excitation - (unclipped + clipping)).max() > 1e-4:
            by_source = None  # not the excitations simulated (e.g. parameters changed since)
    stance = np.array([[r <= 1, l <= 1] for r, l in pairs])  # LegState STANCE, LIFT_OFF
    side = {"r": 0, "l": 1}
    out = {}
    for i, (name, muscle) in enumerate(zip(names, control_model.muscles)):
        if muscle.side in side:
            in_stance = stance[:, side[muscle.side]]
            phases = {"stance": in_stance, "swing": ~in_stance}
        else:
            phases = {"run": np.ones(len(pairs), bool)}
        out[name] = {}
        for phase, mask in phases.items():
            if not mask.any():
                continue
            entry = {
                "excitation": float(excitation[mask, i].mean()),
                "constant": float(constant[mask, i].mean()),
                "force_feedback": float(force_feedback[mask, i].mean()),
                "remainder": float(remainder[mask, i].mean()),
            }
            if by_source is not None:
                sources, delayed = by_source
                entry["feedback_by_source"] = {
                    source: float(delayed[mask, k, i].mean())
                    for k, source in enumerate(sources)
                    if np.any(delayed[mask, k, i])
                }
                entry["clipping"] = float(clipping[mask, i].mean())
            out[name][phase] = entry
    return out


def _delivered(values: np.ndarray, delay_steps) -> np.ndarray:
    """Per-step values (steps, ..., muscles) as the muscles receive them: each muscle's shifted by
    its neural delay, zeros before (control.delays.DelayLine: a value pushed at step k comes out
    at step k + d)."""
    n = len(values)
    out = np.zeros_like(values)
    for i, d in enumerate(delay_steps):
        if d < n:
            out[d:, ..., i] = values[: n - d, ..., i]
    return out


def _delivered_feedback_sources(sim_dir: Path, names, n: int, delay_steps) -> tuple | None:
    """(source names, (n, sources, muscles) feedback by source as delivered) from the run's
    feedback_sources.npz; None when it is missing (a folder written before it existed),
    unreadable, or does not match the run's muscles and steps."""
    path = sim_dir / "feedback_sources.npz"
    try:
        with np.load(path) as data:
            sources, muscles = [str(x) for x in data["sources"]], [str(x) for x in data["muscles"]]
            feedback = data["feedback"].astype(float)
    except (KeyError, ValueError, OSError, zipfile.BadZipFile):
        return None
    if muscles != list(names) or feedback.shape != (n, len(sources), len(names)):
        return None
    return sources, _delivered(feedback, delay_steps)


def _excitation_variation(names, excitation, time) -> dict:
    """Per muscle, the most switching first: mean excitation and its total variation per second,
    sum |u(t_k+1) - u(t_k)| / duration (2 per on-off cycle: a muscle switching 0 <-> 1 at 25 Hz
    has 50 per s); chatter of a feedback loop costs activation heat and work. And the part of the
    excitation above TREMOR_BAND_HZ (gait itself is slower: a stride at 1 Hz with its first
    harmonics): its RMS amplitude, its share of the excitation's variance and the frequency where
    it peaks. An oscillating reflex or PD loop (e.g. a delayed ankle loop at 7-10 Hz) shows as a
    large amplitude at a clear peak; on-off switching spreads its square-wave harmonics over the
    band; a share alone says little for an excitation that barely varies."""
    duration = float(time[-1] - time[0]) if len(time) > 1 else 0.0
    variation = np.abs(np.diff(excitation, axis=0)).sum(axis=0) / duration if duration > 0 else None
    tremor = _tremor(excitation, time)
    rows = {
        name: {
            "mean_excitation": float(excitation[:, i].mean()),
            "variation_per_s": float(variation[i]) if variation is not None else None,
            "rms_above_6Hz": tremor[0][i] if tremor else None,
            "variance_share_above_6Hz": tremor[1][i] if tremor else None,
            "tremor_peak_Hz": tremor[2][i] if tremor else None,
        }
        for i, name in enumerate(names)
    }
    return dict(sorted(rows.items(), key=lambda kv: -(kv[1]["variation_per_s"] or 0.0)))


TREMOR_BAND_HZ = 6.0


def _tremor(excitation, time) -> tuple[list, list, list] | None:
    """Per excitation, from Welch spectra of 2 s segments: the RMS amplitude of its part above
    TREMOR_BAND_HZ, that part's share of its variance, the frequency of its largest spectral peak
    there (None for a constant excitation). None for a run shorter than a segment, sampled unevenly
    or too coarsely to have a frequency bin above the band."""
    from scipy.signal import welch

    if len(time) < 3:
        return None
    steps = np.diff(time)
    dt = float(np.median(steps))
    if dt <= 0 or np.ptp(steps) > 1e-6 * dt or 1.0 / dt <= 2 * TREMOR_BAND_HZ:
        return None
    segment = int(round(2.0 / dt))
    if len(time) < segment:
        return None
    freq, psd = welch(
        excitation - excitation.mean(axis=0), fs=1.0 / dt, nperseg=segment, detrend=False, axis=0
    )
    band = freq > TREMOR_BAND_HZ * (1 + 1e-9)  # the bins are k / 2 s, computed with rounding
    if not band.any():
        return None
    df = float(freq[1] - freq[0])
    varies = np.ptp(excitation, axis=0) > 0  # a constant's spectrum is rounding noise
    total = psd.sum(axis=0)
    above = np.where(varies, psd[band].sum(axis=0), 0.0)
    share = np.divide(above, total, out=np.zeros_like(total), where=varies & (total > 0))
    rms = np.sqrt(above * df)
    peak = freq[band][np.argmax(psd[band], axis=0)]
    return (
        [float(v) for v in rms],
        [float(v) for v in share],
        [round(float(v), 6) if v_ else None for v, v_ in zip(peak, varies)],
    )


def _time_average(time, values, dt: float, simulated_time: float) -> float | None:
    """Average over the run of per-control-step samples (measures.integral.StepIntegral)."""
    integral = StepIntegral(["value"], dt)
    for tk, vk in zip(time, values):
        integral.add(tk, {"value": vk})
    return integral.totals(simulated_time)["value"] / simulated_time if simulated_time > 0 else None


def _metabolic_energy(meta, muscles, cols, time, dt: float, simulated_time: float) -> tuple[float, dict]:
    """(metabolic energy of the run in J, mean heat terms in W per muscle, the costliest first)."""
    mass = meta.total_mass
    names = [m.name for m in meta.muscles]
    mm = muscle_masses(
        [m.max_isometric_force for m in meta.muscles], [m.optimal_fiber_length for m in meta.muscles]
    )
    exc, act, nfl = cols("excitation"), cols("activation"), cols("norm_fiber_length")
    vel, force, active = cols("fiber_velocity"), cols("fiber_force"), cols("active_fiber_force")
    # the heat terms of every muscle and sample, computed once: the whole-body rate is their sum
    # plus the basal rate (as metabolic_rate sums them)
    heat = metabolic_rates(mm, exc, act, nfl, vel, force, active)
    rate = BASAL_RATE * mass + sum(h.sum(axis=1) for h in heat)
    # every sample but the last stands for one control interval (as in the energy integral)
    per_interval = slice(0, max(len(muscles) - 1, 1))
    by_muscle = {
        name: {
            **{f"{term}_W": float(h[per_interval, i].mean()) for term, h in zip(HEAT_TERMS, heat)},
            "mean_activation": float(act[per_interval, i].mean()),
        }
        for i, name in enumerate(names)
    }
    by_muscle = dict(sorted(by_muscle.items(), key=lambda kv: -sum(kv[1][f"{t}_W"] for t in HEAT_TERMS)))
    energy_integral = StepIntegral(["energy"], dt)
    for tk, rk in zip(time, rate):
        energy_integral.add(tk, {"energy": rk})
    return energy_integral.totals(simulated_time)["energy"], by_muscle


def fibre_work(names, fiber_force, fiber_velocity, active_fiber_force) -> dict:
    """Mean mechanical power of the muscle fibres, W: produced while shortening, absorbed while
    lengthening (the metabolic model charges the first and refunds nothing for the second), and
    each muscle's share, the largest producers first. Produced and absorbed close together mean
    energy passed back and forth between muscles (co-contraction, a swing leg braked and driven
    again), not work done on the body.

    ``passive_absorbed_W``: mean power the passive part of the fibre force (parallel elastic and
    fibre damping, F - F_active) takes from the motion. The elastic part gives back what it stores,
    so over whole strides this is what the fibre damping of the Millard model dissipates, energy the
    active fibres must make up (work the metabolic model charges); a fibre velocity that oscillates
    (a tremor) raises it with the square of its amplitude.

    ``active_produced_W`` / ``active_absorbed_W``: the same split of the active part's power alone
    (-F_active v), the work the metabolic model charges (Wang 2012's positive-work term).

    Arrays are (samples, muscles), one row per output sample; pass a slice of the rows for a
    window (analysis/energy_audit.py)."""
    power = -fiber_force * fiber_velocity  # shortening (v < 0) under tension produces work
    produced = np.maximum(power, 0.0).mean(axis=0)
    absorbed = np.maximum(-power, 0.0).mean(axis=0)
    active_power = -active_fiber_force * fiber_velocity
    active_produced = np.maximum(active_power, 0.0).mean(axis=0)
    active_absorbed = np.maximum(-active_power, 0.0).mean(axis=0)
    passive_absorbed = ((fiber_force - active_fiber_force) * fiber_velocity).mean(axis=0)
    per_muscle = {
        name: {
            "produced_W": float(produced[i]),
            "absorbed_W": float(absorbed[i]),
            "active_produced_W": float(active_produced[i]),
            "active_absorbed_W": float(active_absorbed[i]),
            "passive_absorbed_W": float(passive_absorbed[i]),
        }
        for i, name in enumerate(names)
    }
    return {
        "produced_W": float(produced.sum()),
        "absorbed_W": float(absorbed.sum()),
        "net_W": float(produced.sum() - absorbed.sum()),
        "active_produced_W": float(active_produced.sum()),
        "active_absorbed_W": float(active_absorbed.sum()),
        "passive_absorbed_W": float(passive_absorbed.sum()),
        "by_muscle": dict(sorted(per_muscle.items(), key=lambda kv: -kv[1]["produced_W"])),
    }


def _operating_range(meta, names, cols) -> dict:
    """Where each muscle works on its force-length curve over the run: normalized fibre length
    (min, mean, max), mean passive fibre force (fibre force less its active part, N; summed over
    the muscles in body weights, the objective measure passive_fibre_force) and the
    largest fibre force as a share of F_max; with the muscles that are ``stretched`` (mean passive
    force above STRETCHED_PASSIVE_SHARE of F_max) and ``idle`` (excited on average above
    IDLE_EXCITATION but never above IDLE_FORCE_SHARE of F_max), the largest passive forces first.
    Optimized muscle properties (F_max, l_opt, l_slack each within 0.5-2x of the template's) can
    put a muscle there."""
    length = cols("norm_fiber_length")
    fibre = cols("fiber_force")
    passive = passive_fibre_force(fibre, cols("active_fiber_force")).mean(axis=0)
    excitation = cols("excitation").mean(axis=0)
    fmax = np.array([m.max_isometric_force for m in meta.muscles])
    peak_share = fibre.max(axis=0) / fmax
    per_muscle = {
        name: {
            "norm_fiber_length": {
                "min": float(length[:, i].min()),
                "mean": float(length[:, i].mean()),
                "max": float(length[:, i].max()),
            },
            "mean_passive_force_N": float(passive[i]),
            "peak_force_share_of_fmax": float(peak_share[i]),
            "mean_excitation": float(excitation[i]),
        }
        for i, name in enumerate(names)
    }
    order = np.argsort(-passive / fmax)
    return {
        # the objective measure passive_fibre_force, averaged over the run
        "passive_fibre_force_BW": float(passive.sum() / (meta.total_mass * G)),
        "stretched": [names[i] for i in order if passive[i] > STRETCHED_PASSIVE_SHARE * fmax[i]],
        "idle": [
            names[i] for i in order if peak_share[i] < IDLE_FORCE_SHARE and excitation[i] > IDLE_EXCITATION
        ],
        "by_muscle": per_muscle,
    }


def _leg_phases(path: Path, simulated_time: float) -> dict | None:
    """Per leg, from the controller's log after the start-up (2 s, or none in runs under 4 s): the
    mean duration of each FSM state over its complete visits, and at each touch-down the foot's
    distance ahead of the centre of mass (d_S, m) and the hip's sagittal angle (the feature the
    swing and stance-preparation targets of eq. 12 act on, rad), with the step length: the
    distance between the two feet then. None without a controller log."""
    try:
        log = pd.read_csv(path)
    except (FileNotFoundError, pd.errors.EmptyDataError):
        return None
    start = 2.0 if simulated_time >= 4.0 else 0.0
    log = log[log["t"] >= start]
    t = log["t"].to_numpy()
    phases = {"from_s": start}
    for side, other in (("r", "l"), ("l", "r")):
        states = log[f"state_{side}"].to_numpy()
        changes = np.flatnonzero(states[1:] != states[:-1]) + 1
        durations: dict[str, list[float]] = {}
        for a, b in zip(changes[:-1], changes[1:]):
            durations.setdefault(str(states[a]), []).append(float(t[b] - t[a]))
        contact = log[f"contact_{side}"].to_numpy().astype(bool)
        down = np.flatnonzero(contact[1:] & ~contact[:-1]) + 1
        ahead = log[f"d_S_{side}"].to_numpy()[down]
        behind = log[f"d_S_{other}"].to_numpy()[down]

        def mean(values) -> float | None:
            return float(np.mean(values)) if len(values) else None

        phases[side] = {
            "mean_state_duration_s": {state: mean(d) for state, d in durations.items()},
            "touch_downs": int(len(down)),
            "foot_ahead_of_com_at_touch_down_m": mean(ahead),
            "step_length_m": mean(ahead - behind),
            "hip_flexion_at_touch_down_rad": mean(log[f"hip_flexion_{side}"].to_numpy()[down]),
        }
    return phases


def _joint_limit_torques(path: Path) -> dict | None:
    """Per joint limit (the model's ligaments), the costliest first: mean and peak |torque|
    (N m) and the fraction of control steps it is engaged (|torque| > 1 N m); None for a run
    folder written before joint_limits.csv existed."""
    if not path.is_file():
        return None
    table = pd.read_csv(path)
    torque = np.abs(table.drop(columns="time").to_numpy())[: max(len(table) - 1, 1)]
    rows = {
        name: {
            "mean_abs_Nm": float(torque[:, j].mean()),
            "max_abs_Nm": float(torque[:, j].max()),
            "engaged_fraction": float((torque[:, j] > ENGAGED_TORQUE).mean()),
        }
        for j, name in enumerate(table.columns.drop("time"))
    }
    return dict(sorted(rows.items(), key=lambda kv: -kv[1]["mean_abs_Nm"]))


def write_summary(sim_dir, out_json) -> dict:
    from ..model.osim import write_atomic

    result = summarize(sim_dir)
    write_atomic(Path(out_json), (json.dumps(result, indent=1) + "\n").encode())
    return result
