"""Every committed walker against human gait data: the numbers and figures of the README's
"Against human gait data" section.

For each run under models/optimized/ (best.json + optimized.osim) of a human-bodied creature
(the human templates' legs with the human upper body or a single trunk): re-simulate it from the
committed files (its speed, 10 s), `musclewalk analyze` and `musclewalk compare` it, copy its
kinematics, kinetics and muscle sheets to docs/images/<run>-compare-*.png and write two Markdown
tables of headline numbers, kinematics and kinetics (docs/tables/committed_comparison.md).

    python3.11 analysis/committed_comparison.py [--runs DIR ...] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from musclewalk.analysis.reference import human_bodied

REPO = Path(__file__).resolve().parents[1]


def musclewalk(*args) -> None:
    """Run the CLI from the repository (its models/ and config/ resolve there); path arguments
    are made absolute first, so that a run folder given relative to the caller's directory works."""
    arguments = [str(a.resolve() if isinstance(a, Path) else a) for a in args]
    subprocess.run(
        [sys.executable, "-m", "musclewalk.cli", *arguments],
        check=True,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
    )


def simulate_run(run: Path, work: Path, duration: float = 10) -> Path:
    """Re-simulate a run folder (best.json + optimized.osim) ``duration`` s at its speed into
    ``work``: the simulation folder."""
    best = json.loads((run / "best.json").read_text())
    sim = work / f"{run.name}-sim"
    musclewalk(
        "simulate", run / "optimized.osim", "--params", run / "best.json", "--speed", best["speed"],
        "--duration", duration, "--out", sim,
    )  # fmt: skip
    return sim


def simulate_and_analyze(run: Path, work: Path, duration: float = 10) -> tuple[dict, Path]:
    """`simulate_run`, then `musclewalk analyze`: (analysis, simulation folder)."""
    sim = simulate_run(run, work, duration)
    summary = work / f"{run.name}-analysis.json"
    musclewalk("analyze", sim, "-o", summary)
    return json.loads(summary.read_text()), sim


def resimulate(run: Path, work: Path) -> tuple[dict, dict, Path]:
    """`simulate_and_analyze` 10 s, then `musclewalk compare`: (analysis, comparison, comparison
    folder)."""
    analysis, sim = simulate_and_analyze(run, work)
    cmp_dir = work / f"{run.name}-compare"
    musclewalk("compare", sim, "-o", cmp_dir)
    return analysis, json.loads((cmp_dir / "comparison.json").read_text()), cmp_dir


def resimulate_or_fall(run: Path, work: Path) -> tuple[dict, dict | None]:
    """resimulate, for a run that may fall: (analysis, None) when it falls before `musclewalk
    compare` finds a gait cycle after 2 s (compare refuses it)."""
    try:
        analysis, comparison, _ = resimulate(run, work)
    except subprocess.CalledProcessError as exc:
        analysis_json = work / f"{run.name}-analysis.json"
        if "compare" not in exc.cmd or not analysis_json.is_file():
            raise
        analysis = json.loads(analysis_json.read_text())
        if not analysis["terminated"]:
            raise
        return analysis, None
    return analysis, comparison


def row(name, analysis, comparison) -> str:
    v = comparison["variables"]
    st, ref = comparison["spatiotemporal"], comparison["spatiotemporal_reference"]
    g = comparison["vgrf"]["r"]

    def joint(variable):
        m = v[f"r.{variable}"]
        return f"{m['rmse_deg']:.1f}° / {m['r']:.2f}"

    return (
        f"| {name} | {analysis['distance']:.2f} m, {analysis['mean_forward_speed']:.2f} m/s | "
        f"{comparison['gps_deg']:.1f}° | {joint('hip_flexion')} | {joint('knee_flexion')} | "
        f"{joint('ankle_dorsiflexion')} | {st['cadence_steps_per_min']:.0f} "
        f"({ref['cadence_steps_per_min']:.0f}) | {st['stride_length_m']:.2f} "
        f"({ref['stride_length_m']:.2f}) | {st['stance_percent']:.0f} "
        f"({ref['stance_percent']:.0f}) | {g['peak1_bw']:.2f} at {g['peak1_percent']:.0f} % | "
        f"{analysis['cost_of_transport_J_per_kg_m']:.1f} / "
        f"{analysis['net_cost_of_transport_J_per_kg_m']:.1f} |"
    )


KINETICS_HEADER = (
    "| run (right side) | hip extensor moment r / peak, N m/kg (at %) | hip abductor moment r | knee "
    "extensor moment r / peak (at %) | ankle plantarflexor moment r / peak (at %) | ankle power "
    "peak, W/kg (at %) | mean root residual, BW |"
)


def kinetics_row(name, comparison) -> str:
    """The joint moments and powers (inverse dynamics) of the right side against the norm; the
    norm's peaks in the table's last row (kinetics_norm_row)."""
    k = comparison["kinetic_variables"]

    def r(variable):
        m = k.get(f"r.{variable}")
        return "n/a" if m is None or m["r"] is None else f"{m['r']:.2f}"

    def peak(variable):
        m = k.get(f"r.{variable}")
        return "n/a" if m is None else f"{m['peak']:.2f} ({m['peak_percent']:.0f})"

    residual = comparison["source"].get("kinetics", {}).get("mean_root_residual_force_bw")
    return (
        f"| {name} | {r('hip_extension_moment')} / {peak('hip_extension_moment')} | "
        f"{r('hip_abduction_moment')} | {r('knee_extension_moment')} / {peak('knee_extension_moment')} | "
        f"{r('ankle_plantarflexion_moment')} / {peak('ankle_plantarflexion_moment')} | "
        f"{peak('ankle_power')} | {'n/a' if residual is None else f'{residual:.3f}'} |"
    )


def kinetics_norm_row() -> str:
    """The normative curves' peaks (gaitutils), the table's last row."""
    import numpy as np

    from musclewalk.analysis.reference import PERCENT, normative

    curves = normative().curves

    def peak(variable):
        mean = curves[variable][0]
        return f"{mean.max():.2f} ({PERCENT[int(np.argmax(mean))]:.0f})"

    return (
        f"| normative (gaitutils) | 1 / {peak('hip_extension_moment')} | 1 | "
        f"1 / {peak('knee_extension_moment')} | 1 / {peak('ankle_plantarflexion_moment')} | "
        f"{peak('ankle_power')} | |"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--runs",
        type=Path,
        nargs="+",
        default=sorted(
            p.parent
            for p in (REPO / "models/optimized").glob("*/best.json")
            if human_bodied(p.parent / "optimized.meta.json")
        ),
    )
    ap.add_argument("--work", type=Path, help="keep the simulations here (default: a temp folder)")
    ap.add_argument("--images", type=Path, default=REPO / "docs/images")
    ap.add_argument("--out", type=Path, default=REPO / "docs/tables/committed_comparison.md")
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="musclewalk-committed-"))
    rows = [
        "| run (right side) | re-simulated 10 s | GPS | hip flexion RMSE / r | knee flexion "
        "RMSE / r | ankle dorsiflexion RMSE / r | cadence, steps/min (norm) | stride length, "
        "m (norm) | stance % (norm) | vGRF first peak, BW | CoT gross / net, J/(kg m) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    kinetic_rows = [
        "Joint moments and powers (inverse dynamics of the re-simulated kinematics under its GRF; "
        "Plug-in Gait's convention, per kg; r with the normative mean):",
        "",
        KINETICS_HEADER,
        "|---|---|---|---|---|---|---|",
    ]
    for run in args.runs:
        analysis, comparison, cmp_dir = resimulate(run, work)
        rows.append(row(run.name, analysis, comparison))
        kinetic_rows.append(kinetics_row(run.name, comparison))
        print(rows[-1], flush=True)
        for sheet in ("kinematics", "kinetics", "muscles"):
            if (cmp_dir / f"{sheet}.png").exists():
                shutil.copy(cmp_dir / f"{sheet}.png", args.images / f"{run.name}-compare-{sheet}.png")
    kinetic_rows.append(kinetics_norm_row())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(rows + [""] + kinetic_rows) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
