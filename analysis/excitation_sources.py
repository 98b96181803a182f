"""Where each leg muscle's excitation comes from, and what it costs: each run folder re-simulated
(its speed, 10 s by default) and `musclewalk analyze`d, then per leg muscle (both sides averaged)
its metabolic rate (W per muscle) and, in its leg's stance (stance and lift-off) and swing (swing
and stance preparation), the mean excitation, the constant part (eq 30-31, with the lift-off
terms of eq 24-25), the feedback terms that deliver at least --min on average (`musclewalk
analyze`'s ``feedback_by_source``: trunk = eq 21 through the stance hip, upper_leg = eq 26-27,
lower_leg = eq 28, foot = eq 29, each by the plane of its torque in the trunk's frame;
force_feedback = eq 23's F+, and the laws beyond the paper) and what the clipping to [0, 1] added
(negative where the terms asked for more than full excitation, positive where they drove it
below 0).

    python3.11 analysis/excitation_sources.py RUN_DIR [RUN_DIR ...] [--min 0.05] [--duration S]
                                              [--out FILE.md] [--work DIR]

A muscle whose mean excitation comes from a feedback term pushed far past 1 (large negative
clipping) is driven by a feature its muscles cannot reach: co-contraction and heat the optimizer
pays for, and a controller cause a constraint on that feature's target or gain can address.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from committed_comparison import simulate_and_analyze  # noqa: E402
from run_folders import require_run_folder, runs_parser, write_whole  # noqa: E402

PHASES = ("stance", "swing")


def leg_muscles(sources: dict) -> list[str]:
    """Muscle names without their side, in the model's order, for the muscles that have both
    sides and a stance and a swing phase."""
    names = []
    for name, phases in sources.items():
        base, _, side = name.rpartition("_")
        if side == "r" and f"{base}_l" in sources and set(PHASES) <= set(phases):
            names.append(base)
    return names


def _mean(values) -> float:
    return sum(values) / len(values)


def table(run: str, analysis: dict, minimum: float) -> str:
    """One Markdown table of a run's `musclewalk analyze` output: a row per leg muscle."""
    sources = analysis["excitation_sources"]
    if not sources or "feedback_by_source" not in next(iter(next(iter(sources.values())).values())):
        return f"{run}: no feedback_sources.npz split (a model with ideal muscles?)\n"
    heat = analysis.get("metabolic_by_muscle") or {}
    lines = [
        f"{run}: {analysis['simulated_time']:.2f} s, {analysis['mean_forward_speed']:.2f} m/s, CoT "
        f"{analysis['cost_of_transport_J_per_kg_m'] or float('nan'):.1f} J/(kg m); mean excitation "
        f"(both sides) by phase = constant + feedback terms of at least {minimum:g} + clipping",
        "",
        "| muscle | W each | stance u | stance: constant, feedback, clipping | swing u | "
        "swing: constant, feedback, clipping |",
        "|---|---|---|---|---|---|",
    ]
    for base in leg_muscles(sources):
        sides = (f"{base}_r", f"{base}_l")
        watts = [sum(v for k, v in heat[s].items() if k.endswith("_W")) for s in sides if s in heat]
        cells = []
        for phase in PHASES:
            parts = [sources[s][phase] for s in sides]
            terms = {}
            for p in parts:
                for k, v in p["feedback_by_source"].items():
                    terms[k] = terms.get(k, 0.0) + v / len(parts)
            largest_first = sorted(terms.items(), key=lambda kv: -abs(kv[1]))
            shown = ", ".join(f"{k} {v:+.2f}" for k, v in largest_first if abs(v) >= minimum)
            cells.append(f"{_mean([p['excitation'] for p in parts]):.2f}")
            cells.append(
                f"{_mean([p['constant'] for p in parts]):+.2f}; {shown or '—'}; "
                f"{_mean([p['clipping'] for p in parts]):+.2f}"
            )
        watts_cell = f"{_mean(watts):.0f}" if watts else "—"
        lines.append(f"| {base} | {watts_cell} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = runs_parser(__doc__.splitlines()[0])
    ap.add_argument(
        "--min", type=float, default=0.05, help="the smallest mean feedback term shown (default 0.05)"
    )
    ap.add_argument("--duration", type=float, default=10.0, help="simulated time, s (default 10)")
    args = ap.parse_args(argv)
    for run in args.runs:
        require_run_folder(ap, run)
    with tempfile.TemporaryDirectory(prefix="musclewalk-sources-") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        out = []
        for run in args.runs:
            analysis, _ = simulate_and_analyze(run, work, args.duration)
            out.append(table(str(run), analysis, args.min))
            print(out[-1], flush=True)
    if args.out:
        write_whole("\n".join(out), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
