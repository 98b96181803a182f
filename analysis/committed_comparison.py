"""Every committed walker against human gait data: the numbers and figures of the README's
"Against human gait data" section.

For each run under models/optimized/ (best.json + optimized.osim): re-simulate it from the
committed files (its speed, 10 s), `musclewalk analyze` and `musclewalk compare` it, copy its
kinematics and muscle sheets to docs/images/<run>-compare-*.png and write one Markdown table
of headline numbers (docs/tables/committed_comparison.md).

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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--runs",
        type=Path,
        nargs="+",
        default=sorted(p.parent for p in (REPO / "models/optimized").glob("*/best.json")),
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
    for run in args.runs:
        analysis, comparison, cmp_dir = resimulate(run, work)
        rows.append(row(run.name, analysis, comparison))
        print(rows[-1], flush=True)
        shutil.copy(cmp_dir / "kinematics.png", args.images / f"{run.name}-compare-kinematics.png")
        if (cmp_dir / "muscles.png").exists():
            shutil.copy(cmp_dir / "muscles.png", args.images / f"{run.name}-compare-muscles.png")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(rows) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
