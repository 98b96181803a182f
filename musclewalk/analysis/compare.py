"""`musclewalk compare`: a trial (a simulation folder or a lab's OpenSim files) against human
reference gait data, per gait cycle and in clinical conventions (see `gait` and `reference`).

Per variable (mean curve over the cycles of each side against the reference mean): RMSE (the
Gait Variable Score of Baker et al. 2009), RMSE after removing the mean offset (pelvis and
segment frames differ between models and labs), Pearson r, mean |z| and the share of the cycle
within 1 and 2 reference SD, range of motion and peaks with their timing. Overall: the Gait
Profile Score (RMS of the nine GVS of a side; both sides: RMS of all 18), vertical GRF peaks and
valley (body weights, % of the cycle), the spatiotemporal table next to the reference norms.
Where in the cycle each variable's error lies: its offset-removed error over each of Perry's gait
phases (`phase_errors`)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from . import gait, reference
from .reference import CURVES, GPS_VARIABLES, KINETICS, PERCENT, VARIABLES

LABELS = {k: label for k, (_, label) in VARIABLES.items()}
SAGITTAL_JOINTS = ("hip_flexion", "knee_flexion", "ankle_dorsiflexion")


def _pearson(a, b) -> float | None:
    if np.std(a) < 1e-9 or np.std(b) < 1e-9:
        return None
    return float(np.corrcoef(a, b)[0, 1])


def curve_metrics(curve, ref_mean, ref_sd) -> dict:
    """Metrics of a (51,) curve against the reference mean and SD (degrees)."""
    curve, ref_mean, ref_sd = (np.asarray(v, float) for v in (curve, ref_mean, ref_sd))
    diff = curve - ref_mean
    z = np.abs(diff) / np.maximum(ref_sd, 1e-9)
    return {
        "rmse_deg": float(np.sqrt(np.mean(diff**2))),
        "rmse_offset_removed_deg": float(np.sqrt(np.mean((diff - diff.mean()) ** 2))),
        "mean_offset_deg": float(diff.mean()),
        "r": _pearson(curve, ref_mean),
        "mean_abs_z": float(z.mean()),
        "percent_within_1sd": float(100.0 * np.mean(z <= 1.0)),
        "percent_within_2sd": float(100.0 * np.mean(z <= 2.0)),
        "range_of_motion_deg": float(curve.max() - curve.min()),
        "reference_range_of_motion_deg": float(ref_mean.max() - ref_mean.min()),
        "peak_deg": float(curve.max()),
        "peak_percent": float(PERCENT[int(np.argmax(curve))]),
        "reference_peak_deg": float(ref_mean.max()),
        "reference_peak_percent": float(PERCENT[int(np.argmax(ref_mean))]),
    }


# Perry & Burnfield's phases of the gait cycle (Gait Analysis, 2nd ed., 2010), % of the cycle
# from initial contact: each phase [start, end); terminal swing takes the cycle's last point
GAIT_PHASES = (
    ("loading_response", 0.0, 10.0),
    ("mid_stance", 10.0, 30.0),
    ("terminal_stance", 30.0, 50.0),
    ("pre_swing", 50.0, 60.0),
    ("initial_swing", 60.0, 73.0),
    ("mid_swing", 73.0, 87.0),
    ("terminal_swing", 87.0, 100.0),
)


def phase_errors(curve, ref_mean) -> dict:
    """Where a (51,) curve's offset-removed error against the reference mean lies, per gait phase
    (GAIT_PHASES): the phase's mean error (trial minus reference, the whole cycle's mean offset
    removed; + above the reference) and its share of the squared error whose root mean is the
    offset-removed RMSE (the shares add up to 100 %)."""
    curve, ref_mean = np.asarray(curve, float), np.asarray(ref_mean, float)
    error = curve - ref_mean
    error = error - error.mean()
    squared = error**2
    total = float(squared.sum())
    out = {}
    for name, start, end in GAIT_PHASES:
        inside = (PERCENT >= start) & ((PERCENT < end) | (end == PERCENT[-1]))
        out[name] = {
            "mean_error": float(error[inside].mean()),
            "share_percent": float(100.0 * squared[inside].sum() / total) if total > 0 else 0.0,
        }
    return out


def largest_phase_error(result: dict, key: str) -> str:
    """The gait phase that holds the largest share of variable ``key``'s (``side.variable``)
    squared error in a comparison ``result``, as "loading response +22° (44 %)" (its mean error
    and share); "n/a" when the comparison has none."""
    phases = (result.get("phase_errors") or {}).get(key)
    if not phases:
        return "n/a"
    return phase_error_text(*max(phases.items(), key=lambda kv: kv[1]["share_percent"]))


def phase_error_text(name: str, phase: dict) -> str:
    """One phase of `phase_errors` as "loading response +22° (44 %)"."""
    return f"{name.replace('_', ' ')} {phase['mean_error']:+.0f}° ({phase['share_percent']:.0f} %)"


def kinetic_metrics(curve, ref_mean, ref_sd) -> dict:
    """curve_metrics of a kinetic variable (a joint moment or power, in its unit), without the
    ranges of motion."""
    metrics = curve_metrics(curve, ref_mean, ref_sd)
    return {k.removesuffix("_deg"): v for k, v in metrics.items() if "range_of_motion" not in k}


def gait_profile_score(gvs: dict) -> float | None:
    """RMS of the Gait Variable Scores (RMSE per variable), Baker et al. 2009."""
    values = [v for v in gvs.values() if v is not None and math.isfinite(v)]
    return float(np.sqrt(np.mean(np.square(values)))) if values else None


IMPACT_END = 6.0  # % of the cycle: a heel-strike transient comes and goes within it


def _nan_mean(values) -> float | None:
    values = np.asarray(values, float)
    return float(np.nanmean(values)) if np.isfinite(values).any() else None


def vgrf_features(curve) -> dict:
    """First peak (0-35 %), valley (between the peaks) and second peak (35-62 %) of a vertical GRF
    curve in body weights over the cycle, and the weight-acceptance peak (``loading_peak_bw``,
    6-35 %): the first peak without a heel-strike transient (compare_trial adds that from the raw
    signal: ``impact_bw``), so that a hard landing and a high loading peak are told apart. The
    loading peak is the window's largest value: at 8 % it may be the tail of the impact."""
    curve = np.asarray(curve, float)
    loading = (PERCENT > IMPACT_END) & (PERCENT <= 35.0)
    il = int(np.argmax(np.where(loading, curve, -np.inf)))
    first = PERCENT <= 35.0
    second = (PERCENT > 35.0) & (PERCENT <= 62.0)
    i1 = int(np.argmax(np.where(first, curve, -np.inf)))
    i2 = int(np.argmax(np.where(second, curve, -np.inf)))
    lo, hi = sorted((i1, i2))
    iv = lo + int(np.argmin(curve[lo : hi + 1])) if hi > lo else lo
    return {
        "peak1_bw": float(curve[i1]),
        "peak1_percent": float(PERCENT[i1]),
        "valley_bw": float(curve[iv]),
        "valley_percent": float(PERCENT[iv]),
        "peak2_bw": float(curve[i2]),
        "peak2_percent": float(PERCENT[i2]),
        "loading_peak_bw": float(curve[il]),
        "loading_peak_percent": float(PERCENT[il]),
    }


def emg_map() -> dict:
    """Muscle name (without side) -> EMG channel, from models/emg_map.yaml."""
    import yaml

    from .. import yaml_io
    from ..model.template import models_dir

    path = models_dir() / "emg_map.yaml"
    try:
        data = yaml_io.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise reference.ReferenceError(f"{path}: cannot read the muscle map ({exc})") from None
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise reference.ReferenceError(f"{path}: expected muscle name -> EMG channel")
    return data


ON_LEVEL = 0.5  # a muscle is "on" above half of its envelope's maximum (activation and EMG)


def activation_metrics(envelope, emg, max_shift: float = 10.0) -> dict:
    """An activation envelope (scaled to its maximum) against an EMG envelope at the same points:
    r, the best r within +-max_shift % of the cycle (a timing tolerance) and its shift, and the
    on/off timing: the stretches above ON_LEVEL of each and the share of the cycle where both
    agree."""
    envelope = np.asarray(envelope, float)
    emg = np.asarray(emg, float)
    scaled = envelope / envelope.max() if envelope.max() > 0 else envelope
    n = len(emg) - 1
    best, best_shift = None, 0.0
    for k in range(-int(round(max_shift * n / 100)), int(round(max_shift * n / 100)) + 1):
        r = _pearson(np.roll(scaled[:-1], k), emg[:-1])
        if r is not None and (best is None or r > best):
            best, best_shift = r, 100.0 * k / n
    on_act, on_emg = scaled >= ON_LEVEL, emg / max(emg.max(), 1e-12) >= ON_LEVEL
    return {
        "r": _pearson(scaled, emg),
        "best_r_within_shift": best,
        "best_shift_percent": best_shift,
        "peak_activation": float(envelope.max()),
        "on_periods_percent": _periods(on_act),
        "emg_on_periods_percent": _periods(on_emg),
        "on_off_agreement_percent": float(100.0 * np.mean(on_act == on_emg)),
    }


def _periods(on) -> list[list[float]]:
    """[start, end] % of the cycle of each stretch where ``on`` holds (sampled 0-100 %)."""
    x = np.linspace(0.0, 100.0, len(on))
    out, start = [], None
    for xi, o in zip(x, on):
        if o and start is None:
            start = xi
        elif not o and start is not None:
            out.append([float(start), float(xi)])
            start = None
    if start is not None:
        out.append([float(start), 100.0])
    return out


def trial_reference(trial: gait.Trial, skip: float = 0.0, side: str = "both") -> reference.Reference:
    """A measured trial as a reference: mean and SD of its curves over its cycles (both sides
    pooled unless ``side`` says one)."""
    cycles = gait.gait_cycles(trial, skip=skip)
    sides = ("r", "l") if side == "both" else (side,)
    curves = {}
    for variable in (*CURVES, *KINETICS):
        present = [s for s in sides if (s, variable) in trial.angles or (s, variable) in trial.kinetics]
        if not present:
            continue
        rows = np.vstack([gait.normalized(trial, cycles, s, variable) for s in present])
        if len(rows):
            curves[variable] = (rows.mean(axis=0), rows.std(axis=0))
    if not curves:
        raise gait.GaitError(f"{trial.name}: no complete gait cycle to use as a reference")
    return reference.Reference(
        f"{trial.name} ({sum(c.side in sides for c in cycles)} cycles)",
        str(trial.source.get("ik", trial.name)),
        curves,
        {},
    )


def compare(trial: gait.Trial, ref: reference.Reference, skip: float, sides=("r", "l"), others=()) -> dict:
    """The trial against ``ref`` (all metrics) and against each of ``others`` (curve metrics
    and GPS, under other_references)."""
    cycles = gait.gait_cycles(trial, skip=skip)
    counted = [c for c in cycles if c.side in sides]
    if not counted:
        raise gait.GaitError(f"{trial.name}: no complete gait cycle after {skip:g} s")
    out = {
        "trial": trial.name,
        "source": trial.source | {"segments": None},
        "reference": {"name": ref.name, "source": ref.source},
        "skip_s": skip,
        "body_mass_kg": trial.body_mass,
        "sides": list(sides),
        "variables": {},
        "curves": {},
        "phase_errors": {},
        "vgrf": {},
    }
    all_gvs = {}
    for side in sides:
        if not any(c.side == side for c in cycles):
            continue
        gvs = {}
        for variable in CURVES:
            rows = gait.normalized(trial, cycles, side, variable)
            mean, sd = rows.mean(axis=0), rows.std(axis=0)
            out["curves"][f"{side}.{variable}"] = {
                "mean": mean.tolist(),
                "sd": sd.tolist(),
                "cycles": len(rows),
            }
            if variable in ref.curves:
                metrics = curve_metrics(mean, *ref.curves[variable])
                out["variables"][f"{side}.{variable}"] = metrics
                out["phase_errors"][f"{side}.{variable}"] = phase_errors(mean, ref.curves[variable][0])
                if variable in GPS_VARIABLES:
                    gvs[variable] = metrics["rmse_deg"]
        all_gvs.update({f"{side}.{k}": v for k, v in gvs.items()})
        out[f"gps_{side}_deg"] = gait_profile_score(gvs)
        rows = gait.normalized_vgrf(trial, cycles, side)
        out["vgrf"][side] = {
            "mean": rows.mean(axis=0).tolist(),
            "sd": rows.std(axis=0).tolist(),
            **vgrf_features(rows.mean(axis=0)),
            # mean over cycles of the raw signal's largest force in the first 6 % of each
            "impact_bw": _nan_mean(gait.impact_peaks(trial, cycles, side, IMPACT_END)),
        }
    out["kinetic_curves"], out["kinetic_variables"] = _kinetics(trial, cycles, ref, sides)
    out["gps_deg"] = gait_profile_score(all_gvs)
    # Movement Analysis Profile: the GVS of each variable over the sides compared
    out["map_deg"] = {
        v: gait_profile_score({s: all_gvs[f"{s}.{v}"] for s in sides if f"{s}.{v}" in all_gvs})
        for v in CURVES
    }
    out["muscles"] = {}
    if trial.activations and ref.emg:
        for muscle, channel in emg_map().items():
            for side in sides:
                name, key = f"{muscle}_{side}", f"{side.upper()}{channel}"
                if name not in trial.activations or key not in ref.emg:
                    continue
                rows = gait.normalized_activation(trial, cycles, name, side, len(ref.emg[key]))
                if len(rows):
                    out["muscles"][name] = {
                        "channel": key,
                        "mean": rows.mean(axis=0).tolist(),
                        **activation_metrics(rows.mean(axis=0), ref.emg[key]),
                    }
    out["spatiotemporal"] = gait.spatiotemporal(trial, counted)
    out["spatiotemporal_reference"] = ref.scalars
    out["other_references"] = {}
    for other in others:
        gvs, variables = {}, {}
        for side in sides:
            for variable in CURVES:
                key = f"{side}.{variable}"
                if key in out["curves"] and variable in other.curves:
                    m = curve_metrics(out["curves"][key]["mean"], *other.curves[variable])
                    variables[key] = m
                    gvs[key] = m["rmse_deg"]
        out["other_references"][other.name] = {
            "source": other.source,
            "variables": variables,
            "gps_deg": gait_profile_score(gvs),
            "kinetic_variables": {
                key: kinetic_metrics(c["mean"], *other.curves[key.split(".", 1)[1]])
                for key, c in out["kinetic_curves"].items()
                if key.split(".", 1)[1] in other.curves
            },
        }
    out["cycles"] = [
        {"side": c.side, "start_s": c.start, "end_s": c.end, "foot_off_percent": c.percent(c.foot_off)}
        for c in cycles
    ]
    return out


def _kinetics(trial: gait.Trial, cycles, ref: reference.Reference, sides) -> tuple[dict, dict]:
    """The mean and SD over each side's cycles of every kinetic variable the trial has, and its
    metrics against ``ref`` (kinetic_metrics)."""
    curves, variables = {}, {}
    for side in sides:
        for variable in KINETICS:
            if (side, variable) not in trial.kinetics:
                continue
            rows = gait.normalized(trial, cycles, side, variable)
            if not len(rows):
                continue
            key = f"{side}.{variable}"
            curves[key] = {
                "mean": rows.mean(axis=0).tolist(),
                "sd": rows.std(axis=0).tolist(),
                "cycles": len(rows),
            }
            if variable in ref.curves:
                variables[key] = kinetic_metrics(rows.mean(axis=0), *ref.curves[variable])
    return curves, variables


# ---------------------------------------------------------------------------------- figures
SIDE_COLOURS = {"r": "#c0392b", "l": "#2471a3"}
OTHER_COLOURS = ("#27ae60", "#8e44ad", "#d35400")


def _panel(ax, variable, result, ref, others, curves: dict, variables: dict, rmse: str, unit: str) -> None:
    """One variable over the gait cycle: the reference band (and further references), each side's
    mean and SD with its foot-off, and each side's RMSE (``rmse``: the format of its value,
    ``unit`` after it) and r."""
    if variable in ref.curves:
        m, s = ref.curves[variable]
        ax.fill_between(PERCENT, m - s, m + s, color="0.82", lw=0, label=ref.name)
        ax.plot(PERCENT, m, color="0.55", lw=1)
    for other, colour in zip(others, OTHER_COLOURS):
        if variable in other.curves:
            m, s = other.curves[variable]
            ax.fill_between(PERCENT, m - s, m + s, color=colour, alpha=0.12, lw=0)
            ax.plot(PERCENT, m, color=colour, lw=1, ls="--", label=other.name)
    for row, side in enumerate(result["sides"]):
        key = f"{side}.{variable}"
        if key not in curves:
            continue
        c = curves[key]
        mean, sd = np.array(c["mean"]), np.array(c["sd"])
        ax.plot(PERCENT, mean, color=SIDE_COLOURS[side], lw=1.6, label=f"{side} (n={c['cycles']})")
        ax.fill_between(PERCENT, mean - sd, mean + sd, color=SIDE_COLOURS[side], alpha=0.15, lw=0)
        offs = [c_["foot_off_percent"] for c_ in result["cycles"] if c_["side"] == side]
        if offs:
            ax.axvline(np.mean(offs), color=SIDE_COLOURS[side], lw=0.8, ls="--")
        metrics = variables.get(key)
        if metrics:
            r = metrics["r"]
            value = metrics.get("rmse_deg", metrics.get("rmse"))
            ax.text(
                0.02,
                0.97 - 0.1 * row,
                f"{side}: RMSE {format(value, rmse)}{unit}, r " + ("n/a" if r is None else f"{r:.2f}"),
                transform=ax.transAxes,
                va="top",
                fontsize=7,
                color=SIDE_COLOURS[side],
            )
    ax.set_xlim(0, 100)
    ax.tick_params(labelsize=7)


def kinematics_sheet(result: dict, ref: reference.Reference, path_base: Path, others=()) -> list[Path]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 9), dpi=110)
    FigureCanvasAgg(fig)
    for i, variable in enumerate(CURVES):
        ax = fig.add_subplot(3, 3, i + 1)
        _panel(ax, variable, result, ref, others, result["curves"], result["variables"], ".1f", "°")
        ax.set_title(LABELS[variable], fontsize=9)
        if i >= 6:
            ax.set_xlabel("% gait cycle", fontsize=8)
        if i % 3 == 0:
            ax.set_ylabel("deg", fontsize=8)
        if i == 0:
            ax.legend(fontsize=6, loc="lower left")
    gps = result.get("gps_deg")
    fig.suptitle(
        f"{result['trial']} vs {ref.name}: GPS " + ("n/a" if gps is None else f"{gps:.1f}°"), fontsize=11
    )
    fig.tight_layout()
    return _save(fig, path_base)


def kinetics_sheet(result: dict, ref: reference.Reference, path_base: Path, others=()) -> list[Path]:
    """Joint moments and powers over the gait cycle against the reference bands."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(12, 6), dpi=110)
    FigureCanvasAgg(fig)
    for i, (variable, spec) in enumerate(KINETICS.items()):
        ax = fig.add_subplot(2, 4, i + 1)
        curves, variables = result["kinetic_curves"], result["kinetic_variables"]
        _panel(ax, variable, result, ref, others, curves, variables, ".2f", "")
        ax.axhline(0.0, color="0.3", lw=0.5)
        ax.set_title(spec.label, fontsize=9)
        ax.set_ylabel(spec.unit, fontsize=8)
        if i >= 4:
            ax.set_xlabel("% gait cycle", fontsize=8)
        if i == 0:
            ax.legend(fontsize=6, loc="lower left")
    fig.suptitle(f"{result['trial']} vs {ref.name}: joint moments and powers (inverse dynamics)", fontsize=11)
    fig.tight_layout()
    return _save(fig, path_base)


def grf_sheet(result: dict, path_base: Path) -> list[Path]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5, 3.4), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for side, v in result["vgrf"].items():
        mean, sd = np.array(v["mean"]), np.array(v["sd"])
        ax.plot(PERCENT, mean, color=SIDE_COLOURS[side], label=side)
        ax.fill_between(PERCENT, mean - sd, mean + sd, color=SIDE_COLOURS[side], alpha=0.15, lw=0)
    ax.set_xlabel("% gait cycle")
    ax.set_ylabel("vertical GRF (body weights)")
    ax.set_xlim(0, 100)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _save(fig, path_base)


def failure_sheet(message: str, path_base: Path) -> list[Path]:
    """A figure that says why there is no comparison (a run without a complete gait cycle), so
    that a workflow's report has a picture in its place."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 1.6), dpi=110)
    FigureCanvasAgg(fig)
    fig.text(0.5, 0.5, message, ha="center", va="center", wrap=True, fontsize=10)
    return _save(fig, path_base)


def _save(fig, path_base: Path) -> list[Path]:
    import io

    from ..model.osim import write_atomic

    paths = []
    for ext in ("png", "svg"):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext)
        path = path_base.with_suffix(f".{ext}")
        write_atomic(path, buf.getvalue())
        paths.append(path)
    return paths


def muscle_sheet(result: dict, ref: reference.Reference, path_base: Path) -> list[Path]:
    """Activation envelopes (right side, scaled to their maximum) against the EMG envelopes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    muscles = [m for m in result["muscles"] if m.endswith("_r")] or list(result["muscles"])
    cols = 4
    rows = max(1, math.ceil(len(muscles) / cols))
    fig = Figure(figsize=(11, 2.4 * rows), dpi=110)
    FigureCanvasAgg(fig)
    for i, name in enumerate(muscles):
        m = result["muscles"][name]
        ax = fig.add_subplot(rows, cols, i + 1)
        emg = ref.emg[m["channel"]]
        x = np.linspace(0, 100, len(emg))
        ax.fill_between(x, 0, emg, color="0.82", lw=0, label=f"EMG {m['channel']}")
        act = np.array(m["mean"])
        ax.plot(x, act / act.max() if act.max() > 0 else act, color="#c0392b", label="activation / max")
        r = m["r"]
        ax.set_title(f"{name}: r " + ("n/a" if r is None else f"{r:.2f}"), fontsize=9)
        ax.set_xlim(0, 100)
        ax.set_ylim(0, 1.05)
        ax.tick_params(labelsize=7)
        if i == 0:
            ax.legend(fontsize=6)
    fig.tight_layout()
    return _save(fig, path_base)


def summary_markdown(result: dict) -> str:
    st, ref = result["spatiotemporal"], result["spatiotemporal_reference"]
    fmt = lambda v, f=".2f": "n/a" if v is None else format(v, f)
    lines = [
        f"# {result['trial']} against {result['reference']['name']}",
        "",
        f"Gait Profile Score {fmt(result['gps_deg'], '.1f')}° (right "
        f"{fmt(result.get('gps_r_deg'), '.1f')}°, left {fmt(result.get('gps_l_deg'), '.1f')}°; "
        f"cycles after {result['skip_s']:g} s: {st.get('cycles')})",
        "",
        "| variable | side | RMSE ° | RMSE offset removed ° | r | within 1 SD % |",
        "|---|---|---|---|---|---|",
    ]
    for key, m in result["variables"].items():
        side, variable = key.split(".", 1)
        lines.append(
            f"| {variable} | {side} | {m['rmse_deg']:.1f} | "
            f"{m['rmse_offset_removed_deg']:.1f} | {fmt(m['r'])} | "
            f"{m['percent_within_1sd']:.0f} |"
        )
    phases = result.get("phase_errors") or {}
    sagittal = [k for k in phases if k.split(".", 1)[1] in SAGITTAL_JOINTS]
    if sagittal:
        names = [name for name, _, _ in GAIT_PHASES]
        lines += [
            "",
            "Where the sagittal joints' error lies (offset removed): per gait phase (Perry), the mean "
            "error, trial minus reference, ° (its share of the squared error, %)",
            "",
            "| variable | side | " + " | ".join(n.replace("_", " ") for n in names) + " |",
            "|---|---|" + "---|" * len(names),
        ]
        for key in sagittal:
            side, variable = key.split(".", 1)
            cells = [
                f"{phases[key][n]['mean_error']:+.1f} ({phases[key][n]['share_percent']:.0f})" for n in names
            ]
            lines.append(f"| {variable} | {side} | " + " | ".join(cells) + " |")
    for name, other in result.get("other_references", {}).items():
        lines += ["", f"Against {name}: GPS {fmt(other['gps_deg'], '.1f')}°"]
    lines += ["", "| spatiotemporal | trial | reference |", "|---|---|---|"]
    for key in (
        "speed_m_per_s",
        "cadence_steps_per_min",
        "stride_length_m",
        "stance_percent",
        "double_support_percent",
        "step_width_m",
    ):
        lines.append(f"| {key} | {fmt(st.get(key))} | {fmt(ref.get(key))} |")
    if result.get("muscles"):
        lines += [
            "",
            "| muscle | EMG channel | r | best r within ±10 % | shift % | on/off agreement % |",
            "|---|---|---|---|---|---|",
        ]
        for name, m in result["muscles"].items():
            lines.append(
                f"| {name} | {m['channel']} | {fmt(m['r'])} | "
                f"{fmt(m['best_r_within_shift'])} | {m['best_shift_percent']:.0f} | "
                f"{m['on_off_agreement_percent']:.0f} |"
            )
    if result.get("kinetic_variables"):
        lines += [
            "",
            "| joint moment / power (inverse dynamics) | side | unit | RMSE | RMSE offset removed | r "
            "| peak (at %) | reference peak (at %) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for key, m in result["kinetic_variables"].items():
            side, variable = key.split(".", 1)
            lines.append(
                f"| {variable} | {side} | {KINETICS[variable].unit} | {m['rmse']:.2f} | "
                f"{m['rmse_offset_removed']:.2f} | {fmt(m['r'])} | "
                f"{m['peak']:.2f} ({m['peak_percent']:.0f}) | "
                f"{m['reference_peak']:.2f} ({m['reference_peak_percent']:.0f}) |"
            )
    lines += [
        "",
        "| vertical GRF (BW) | peak 1 | of it: 0-6 % (impact) | 6-35 % (loading) | valley | peak 2 |",
        "|---|---|---|---|---|---|",
    ]
    for side, v in result["vgrf"].items():
        lines.append(
            f"| {side} | {v['peak1_bw']:.2f} at {v['peak1_percent']:.0f} % | {fmt(v['impact_bw'])} | "
            f"{v['loading_peak_bw']:.2f} at {v['loading_peak_percent']:.0f} % | "
            f"{v['valley_bw']:.2f} at {v['valley_percent']:.0f} % | "
            f"{v['peak2_bw']:.2f} at {v['peak2_percent']:.0f} % |"
        )
    return "\n".join(lines) + "\n"


def write_comparison(
    trial: gait.Trial, ref: reference.Reference, out_dir, skip: float, sides=("r", "l"), others=()
) -> dict:
    """comparison.json, summary.md and the kinematics, GRF (kinetics, muscle) sheets in ``out_dir``
    (each file atomically); ``others``: further references drawn and scored beside ``ref``."""
    from ..model.osim import write_atomic

    result = compare(trial, ref, skip, sides, others)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    kinematics_sheet(result, ref, out_dir / "kinematics", others)
    grf_sheet(result, out_dir / "grf")
    if result.get("kinetic_curves"):
        kinetics_sheet(result, ref, out_dir / "kinetics", others)
    else:  # the sheet is there either way (the workflow's report shows it): it says why not
        reason = (trial.source.get("kinetics") or {}).get("error", "the trial has no joint moments")
        failure_sheet(f"no inverse dynamics: {reason}", out_dir / "kinetics")
    if result.get("muscles"):
        muscle_sheet(result, ref, out_dir / "muscles")
    write_atomic(out_dir / "summary.md", summary_markdown(result).encode())
    write_atomic(out_dir / "comparison.json", (json.dumps(result, indent=1) + "\n").encode())
    return result
