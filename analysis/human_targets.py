"""Issue 14's targets for a human-like Human, measured on a run re-simulated from its committed
files: one Markdown table per run of each target, its value (right / left), the target, the human
value and whether it is met; below it what shows the gait's causes (knee-limit torque, the costliest
muscles, the most switching excitations, what the same motion costs with the least muscle activation
and where its muscles' sagittal power goes: analysis/static_optimization.py).

For each run folder (best.json + optimized.osim): `musclewalk simulate` 10 s at the run's speed,
`musclewalk analyze` (cost of transport) and `musclewalk compare` (cycles after 2 s against the
gaitutils normative data: joint angles, vertical GRF, spatiotemporal parameters).

    python3.11 analysis/human_targets.py RUN_DIR [RUN_DIR ...] [--work DIR] [--out FILE.md]

Loading-response knee flexion is the largest mean knee flexion in 0-20 % of the cycle; the ankle
"dorsiflexes in mid-stance" when its largest mean dorsiflexion in 10-50 % exceeds both 0 deg and its
value at foot strike, and "plantarflexes at push-off" when its smallest mean value in 50-70 % is
below 0 deg.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from musclewalk.analysis.compare import phase_error_text
from musclewalk.analysis.reference import normative

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import static_optimization  # noqa: E402
from committed_comparison import resimulate_or_fall  # noqa: E402
from run_folders import runs_parser  # noqa: E402

SIDES = ("r", "l")


def _window(curve: list, start: float, end: float) -> np.ndarray:
    """Samples of a 0-100 % cycle curve from start to end %."""
    y = np.asarray(curve, float)
    pct = np.linspace(0.0, 100.0, len(y))
    return y[(pct >= start) & (pct <= end)]


def _fmt(values, spec) -> str:
    return " / ".join("–" if v is None else format(v, spec) for v in values)


def target_rows(analysis: dict, comparison: dict) -> list[tuple[str, str, str, str, bool]]:
    """(measure, value r / l, target, human, met) per issue-14 target."""
    v, curves = comparison["variables"], comparison["curves"]
    st, ref = comparison["spatiotemporal"], comparison["spatiotemporal_reference"]
    rows = []
    for joint in ("hip_flexion", "knee_flexion", "ankle_dorsiflexion"):
        r = [v[f"{s}.{joint}"]["r"] for s in SIDES]
        rmse = [v[f"{s}.{joint}"]["rmse_offset_removed_deg"] for s in SIDES]
        label = joint.replace("_", " ")
        rows.append((f"{label}: r with the normative mean", _fmt(r, ".2f"), "≥ 0.85", "", min(r) >= 0.85))
        rows.append((f"{label}: RMSE, offset removed, °", _fmt(rmse, ".1f"), "≤ 8", "", max(rmse) <= 8.0))
    knee = [float(_window(curves[f"{s}.knee_flexion"]["mean"], 0, 20).max()) for s in SIDES]
    rows.append(
        (
            "loading-response knee flexion (max 0-20 %), °",
            _fmt(knee, ".1f"),
            "≥ 10",
            "≈ 15-20",
            min(knee) >= 10,
        )
    )
    dorsi, plantar, met_dorsi = [], [], True
    for s in SIDES:
        ankle = curves[f"{s}.ankle_dorsiflexion"]["mean"]
        peak = float(_window(ankle, 10, 50).max())
        dorsi.append(peak)
        met_dorsi &= peak > 0.0 and peak > ankle[0]
        plantar.append(float(_window(ankle, 50, 70).min()))
    rows.append(
        (
            "ankle: peak dorsiflexion in mid-stance (10-50 %), °",
            _fmt(dorsi, ".1f"),
            "> 0 and above foot strike",
            "≈ +10-15",
            met_dorsi,
        )
    )
    rows.append(
        (
            "ankle: peak plantarflexion at push-off (50-70 %), °",
            _fmt(plantar, ".1f"),
            "< 0",
            "≈ −15-20",
            max(plantar) < 0,
        )
    )
    cadence, stance = st["cadence_steps_per_min"], st["stance_percent"]
    rows.append(
        (
            "cadence, steps/min",
            f"{cadence:.0f}",
            "100-130",
            f"{ref['cadence_steps_per_min']:.0f}",
            100 <= cadence <= 130,
        )
    )
    rows.append(
        (
            "stance, % of the cycle",
            f"{stance:.0f}",
            "58-64",
            f"{ref['stance_percent']:.0f}",
            58 <= stance <= 64,
        )
    )
    grf = [comparison["vgrf"][s] for s in SIDES]
    first = [g["peak1_bw"] for g in grf]
    second = [g["peak2_bw"] for g in grf]
    rows.append(
        (
            "vertical GRF first peak, BW",
            _fmt(first, ".2f"),
            "0.95-1.3",
            "≈ 1.1",
            all(0.95 <= p <= 1.3 for p in first),
        )
    )
    rows.append(
        (
            "vertical GRF second peak, BW",
            _fmt(second, ".2f"),
            "0.95-1.3",
            "≈ 1.15",
            all(0.95 <= p <= 1.3 for p in second),
        )
    )
    cot = analysis["cost_of_transport_J_per_kg_m"]
    rows.append(("gross metabolic cost of transport, J/(kg m)", f"{cot:.1f}", "≤ 4.5", "≈ 3.3", cot <= 4.5))
    speed, target = analysis["mean_forward_speed"], analysis["target_speed"]
    walks = not analysis["terminated"] and analysis["simulated_time"] >= 10.0 - 1e-6
    rows.append(("walks 10 s, no termination rule", f"{analysis['simulated_time']:.2f} s", "10 s", "", walks))
    rows.append(
        ("mean speed, m/s", f"{speed:.2f}", f"{target:g} ± 10 %", "", abs(speed - target) <= 0.1 * target)
    )
    return rows


def diagnostics(analysis: dict, shown: int = 3) -> list[str]:
    """Where the gait's causes show (not targets): the knee-limit torque, the costliest muscles,
    the muscles the target-feature feedback excites most (``excitation_sources``' remainder: the
    feature PDs and balance through the muscles, eq 16-22 and 26-29) and the most switching
    excitations, from `musclewalk analyze`; empty for an analysis without them."""
    lines = []
    limits = analysis.get("joint_limit_torques") or {}
    knees = [limits[k]["mean_abs_Nm"] for k in ("limit_knee_angle_r", "limit_knee_angle_l") if k in limits]
    if knees:
        lines.append(f"knee-limit torque, mean |τ|, N m: {_fmt(knees, '.1f')}")
    energy = analysis.get("metabolic_by_muscle") or {}
    if energy:
        costliest = [
            (name, sum(v for k, v in row.items() if k.endswith("_W")), row["mean_activation"])
            for name, row in list(energy.items())[:shown]
        ]
        lines.append(
            "costliest muscles, W (mean activation): "
            + ", ".join(f"{name} {watts:.0f} ({activation:.2f})" for name, watts, activation in costliest)
        )
    work = analysis.get("fibre_work")
    if work:
        producers = list(work["by_muscle"].items())[:shown]
        lines.append(
            f"muscle fibre work, W: produced {work['produced_W']:.0f}, absorbed {work['absorbed_W']:.0f}, "
            f"net {work['net_W']:.0f}"
            + (
                f", taken by the passive fibre force (fibre damping) {work['passive_absorbed_W']:.0f}"
                if "passive_absorbed_W" in work
                else ""
            )
            + "; largest producers (produced / absorbed): "
            + ", ".join(
                f"{name} {row['produced_W']:.0f} / {row['absorbed_W']:.0f}" for name, row in producers
            )
        )
    operating = analysis.get("operating_range")
    if operating:
        rows = operating["by_muscle"]

        def where(name) -> str:
            length = rows[name]["norm_fiber_length"]
            return f"{length['min']:.2f}-{length['max']:.2f} l_opt"

        lines.append(
            f"passive fibre force, summed over the muscles: {operating['passive_fibre_force_BW']:.2f} BW "
            "(the objective measure passive_fibre_force)"
        )
        lines.append(
            "muscles outside their working range: stretched (mean passive force, fibre length): "
            + (
                ", ".join(
                    f"{name} {rows[name]['mean_passive_force_N']:.0f} N, {where(name)}"
                    for name in operating["stretched"]
                )
                or "none"
            )
            + "; idle (excited but never above 2 % of F_max: mean excitation, fibre length): "
            + (
                ", ".join(
                    f"{name} {rows[name]['mean_excitation']:.2f}, {where(name)}" for name in operating["idle"]
                )
                or "none"
            )
        )
    phases = analysis.get("leg_phases")
    if phases:
        legs = [phases[side] for side in ("r", "l")]
        order = ("stance", "lift_off", "swing", "stance_preparation")
        lines.append(
            f"leg phases after {phases['from_s']:g} s (right / left): mean s in "
            + ", ".join(
                f"{state} {_fmt([leg['mean_state_duration_s'].get(state) for leg in legs], '.2f')}"
                for state in order
            )
            + "; at touch-down the foot {} m ahead of the centre of mass, step {} m, hip {} rad".format(
                *(
                    _fmt([leg[key] for leg in legs], ".2f")
                    for key in (
                        "foot_ahead_of_com_at_touch_down_m",
                        "step_length_m",
                        "hip_flexion_at_touch_down_rad",
                    )
                )
            )
        )
    sources = analysis.get("excitation_sources") or {}
    feedback = sorted(
        (
            (parts["remainder"], name, phase)
            for name, phases in sources.items()
            for phase, parts in phases.items()
            if parts["remainder"] > 0.0
        ),
        reverse=True,
    )[: 2 * shown]
    if feedback:
        lines.append(
            "largest mean excitations from feedback other than F+ (target features, balance, features "
            "beyond the paper, less clipping; name, leg phase: that part / all): "
            + ", ".join(
                f"{name} {phase} {part:.2f} / {sources[name][phase]['excitation']:.2f}"
                for part, name, phase in feedback
            )
        )
    variation = analysis.get("excitation_variation") or {}
    if variation:
        lines.append(
            "most switching excitations, per s: "
            + ", ".join(
                f"{name} {row['variation_per_s']:.0f}" for name, row in list(variation.items())[:shown]
            )
        )
        shaking = sorted(
            ((name, row) for name, row in variation.items() if row.get("rms_above_6Hz")),
            key=lambda kv: -kv[1]["rms_above_6Hz"],
        )[:shown]
        if shaking:
            lines.append(
                "largest excitation oscillations above the gait band (RMS above 6 Hz, share of the "
                "variance, peak): "
                + ", ".join(
                    f"{name} {row['rms_above_6Hz']:.2f} ({row['variance_share_above_6Hz']:.2f}, "
                    f"{row['tremor_peak_Hz']:.1f} Hz)"
                    for name, row in shaking
                )
            )
    return lines


def motion_lines(motion: dict | None) -> list[str]:
    """What the motion itself costs and where its muscles' sagittal power goes (an
    analysis/static_optimization.py result; not targets)."""
    if not motion:
        return []
    c, s = motion["controller"], motion["static_optimization"]
    lines = [
        "the same motion with the least muscle activation (analysis/static_optimization.py): cost of "
        f"transport {s['cost_of_transport_J_per_kg_m']:.1f} J/(kg m), the controller's "
        f"{c['cost_of_transport_J_per_kg_m']:.1f} (after {motion['window_s'][0]:.0f} s)"
    ]
    phases = motion.get("sagittal_power_by_leg_phase_W_per_kg") or {}
    sagittal = motion.get("sagittal_power_W_per_kg") or {}
    if sagittal:
        parts = []
        for joint, v in sagittal.items():
            stance = phases.get(joint, {}).get("stance", (0.0, 0.0))
            lift_off = phases.get(joint, {}).get("lift_off", (0.0, 0.0))
            parts.append(
                f"{joint} +{v['walker'][0]:.2f} / {v['walker'][1]:.2f} (stance +{stance[0]:.2f} / "
                f"{stance[1]:.2f}, lift-off +{lift_off[0]:.2f}; people +{v['people'][0]:.2f} / "
                f"{v['people'][1]:.2f})"
            )
        lines.append("muscles' sagittal power per leg, W/kg, positive / negative: " + ", ".join(parts))
    return lines


def table(name: str, analysis: dict, comparison: dict, motion: dict | None = None) -> str:
    rows = target_rows(analysis, comparison)
    met = sum(r[4] for r in rows)
    lines = [
        f"{name}: {met} of {len(rows)} targets met (GPS {comparison['gps_deg']:.2f}°)",
        "",
        "| target | value (right / left) | target | human | met |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {m} | {value} | {goal} | {human} | {'yes' if ok else 'no'} |"
        for m, value, goal, human, ok in rows
    ]
    extra = [
        *gps_lines(comparison),
        *phase_lines(comparison),
        *grf_split(comparison),
        *spatiotemporal_lines(comparison),
        *kinetics_lines(comparison),
        *diagnostics(analysis),
        *motion_lines(motion),
    ]
    if extra:
        lines += ["", *(f"- {line}" for line in extra)]
    return "\n".join(lines) + "\n"


def gps_lines(comparison: dict) -> list[str]:
    """What the GPS is made of (`musclewalk compare`'s Movement Analysis Profile): each variable's
    score over both sides, largest first; the GPS is the RMS of the sides' scores."""
    profile = {k: v for k, v in (comparison.get("map_deg") or {}).items() if v is not None}
    if not profile:
        return []
    ranked = sorted(profile.items(), key=lambda kv: -kv[1])
    parts = ", ".join(f"{name.replace('_', ' ')} {value:.1f}" for name, value in ranked)
    return [f"GPS by variable (Movement Analysis Profile, RMSE °, largest first): {parts}"]


def phase_lines(comparison: dict) -> list[str]:
    """Where the knee's and the ankle's offset-removed error lies in the cycle (`musclewalk
    compare`'s phase_errors, Perry's phases): for each side the phases that carry most of it,
    largest first until they hold half, with their mean error (trial minus norm)."""
    phases = comparison.get("phase_errors") or {}
    lines = []
    for variable in ("knee_flexion", "ankle_dorsiflexion"):
        parts = []
        for side in SIDES:
            by_phase = phases.get(f"{side}.{variable}")
            if not by_phase:
                continue
            ranked = sorted(by_phase.items(), key=lambda kv: -kv[1]["share_percent"])
            kept, held = [], 0.0
            for name, p in ranked:
                kept.append(phase_error_text(name, p))
                held += p["share_percent"]
                if held >= 50.0:
                    break
            parts.append(f"{'right' if side == 'r' else 'left'}: " + ", ".join(kept))
        if parts:
            label = variable.replace("_", " ")
            lines.append(
                f"{label}: where its error lies (phase, mean error against the norm, share of the "
                f"squared error): " + "; ".join(parts)
            )
    return lines


def spatiotemporal_lines(comparison: dict) -> list[str]:
    """The step's shape beside the norm (`musclewalk compare`; not targets): how long and how wide
    the steps are and how long both feet are down."""
    st, ref = comparison["spatiotemporal"], comparison["spatiotemporal_reference"]
    keys = (
        ("stride length", "stride_length_m", "m", ".2f"),
        ("step width", "step_width_m", "m", ".2f"),
        ("double support", "double_support_percent", "% of the cycle", ".0f"),
    )
    parts = [
        f"{label} {st[key]:{spec}} {unit} (human {ref[key]:{spec}})"
        for label, key, unit, spec in keys
        if st.get(key) is not None and ref.get(key) is not None
    ]
    return ["steps: " + ", ".join(parts)] if parts else []


def kinetics_lines(comparison: dict) -> list[str]:
    """Where the gait's work comes from (inverse dynamics, `musclewalk compare`; not targets):
    the ankle's push-off and the knee's mid-stance moment against the norm."""
    k = comparison.get("kinetic_variables") or {}
    curves = comparison.get("kinetic_curves") or {}
    keys = [f"{s}.ankle_power" for s in SIDES] + [f"{s}.knee_extension_moment" for s in SIDES]
    if not all(key in k and key in curves for key in keys):
        return []
    ankle = [k[f"{s}.ankle_power"] for s in SIDES]
    plantar = [k.get(f"{s}.ankle_plantarflexion_moment") for s in SIDES]
    knee = [float(np.mean(_window(curves[f"{s}.knee_extension_moment"]["mean"], 20, 50))) for s in SIDES]
    norm_knee = float(np.mean(_window(normative().curves["knee_extension_moment"][0], 20, 50)))
    lines = [
        "ankle power peak (right / left), W/kg: "
        f"{_fmt([a['peak'] for a in ankle], '.2f')} at {_fmt([a['peak_percent'] for a in ankle], '.0f')} % "
        f"(human {ankle[0]['reference_peak']:.2f} at {ankle[0]['reference_peak_percent']:.0f} %: push-off)",
        f"knee moment in mid-stance (20-50 %), mean, N m/kg, extensor +: {_fmt(knee, '.2f')} "
        f"(human {norm_knee:.2f})",
    ]
    if all(plantar):
        r, peak, at = ([p[key] for p in plantar] for key in ("r", "peak", "peak_percent"))
        human = f"{plantar[0]['reference_peak']:.2f} at {plantar[0]['reference_peak_percent']:.0f} %"
        lines.append(
            f"ankle plantarflexor moment: r with the norm {_fmt(r, '.2f')}, peak {_fmt(peak, '.2f')} "
            f"N m/kg at {_fmt(at, '.0f')} % (human {human})"
        )
    return lines


def grf_split(comparison: dict) -> list[str]:
    """The vertical GRF's first peak told apart: a heel-strike transient (0-6 % of the cycle)
    and the weight-acceptance peak after it (6-35 %)."""
    grf = [comparison["vgrf"][s] for s in SIDES]
    if not all("impact_bw" in g for g in grf):
        return []
    return [
        "vertical GRF first peak split (right / left): heel-strike impact (0-6 % of the cycle) "
        f"{_fmt([g['impact_bw'] for g in grf], '.2f')} BW, weight-acceptance peak (6-35 %) "
        f"{_fmt([g['loading_peak_bw'] for g in grf], '.2f')} BW at "
        f"{_fmt([g['loading_peak_percent'] for g in grf], '.0f')} % (human ≈ 1.1 at ≈ 15 %)"
    ]


def both_legs_measured(comparison: dict | None) -> bool:
    """Whether `musclewalk compare` found a gait cycle after 2 s of each leg (a run that falls
    soon after 2 s may have one of a single leg: its targets are not measured)."""
    return comparison is not None and all(f"{s}.hip_flexion" in comparison["variables"] for s in SIDES)


def no_cycle_table(name: str, analysis: dict) -> str:
    """The table of a run that falls before `musclewalk compare` finds a gait cycle after 2 s of
    each leg."""
    lines = [
        f"{name}: no target measured: it falls after {analysis['simulated_time']:.2f} s "
        f"({analysis['termination_reason']}), before a complete gait cycle of each leg after 2 s"
    ]
    extra = diagnostics(analysis)
    if extra:
        lines += ["", *(f"- {line}" for line in extra)]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    args = runs_parser(__doc__.splitlines()[0]).parse_args(argv)
    tables = []
    with tempfile.TemporaryDirectory(prefix="musclewalk-targets-") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        for run in args.runs:
            analysis, comparison = resimulate_or_fall(run, work)
            if not both_legs_measured(comparison):
                tables.append(no_cycle_table(str(run), analysis))
            else:
                motion = static_optimization.cost_table(work / f"{run.name}-sim", 2.0, 2)
                tables.append(table(str(run), analysis, comparison, motion))
            print(tables[-1], flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.out.with_suffix(".tmp")
        tmp.write_text("\n".join(tables))
        tmp.replace(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
