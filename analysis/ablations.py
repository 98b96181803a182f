"""The §7 ablations against their baseline (issue 15): for each run folder (best.json +
optimized.osim, the baseline first) the optimization's result as it recorded it (objective,
terms, best generation, generations run, wall time) and the best re-simulated 10 s from the
folder's files (walks the full time or falls, speed, the summed muscle force, the cost of transport
where the muscles have a metabolic model, and `musclewalk compare`'s GPS, per-joint r and cadence
against the normative data; "no gait cycle" for a run that falls before one after 2 s). One
Markdown table.

    python3.11 analysis/ablations.py BASELINE ABLATION [ABLATION ...] [--out FILE.md] [--work DIR]

e.g. the baseline and the two ablations of config/experiments/human-walk-1.3-{ablation-baseline,
no-routing,ideal-muscles}.yaml. Objectives differ between the baseline and the ideal-muscle
ablation (its effort is the summed muscle force), so compare their terms, not their sums.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from committed_comparison import resimulate_or_fall  # noqa: E402
from run_folders import emit, require_run_folder, runs_parser  # noqa: E402

HEADER = (
    "| run | objective (terms) | best at generation / run | wall time, h | re-simulated 10 s | "
    "Σ F, M g | CoT, J/(kg m) | GPS | hip / knee / ankle r | cadence, steps/min |\n"
    "|---|---|---|---|---|---|---|---|---|---|"
)


def run_log(run: Path) -> dict:
    """Generations run and wall time from the run's log.txt (the last values written)."""
    text = (run / "log.txt").read_text() if (run / "log.txt").is_file() else ""
    generations = re.findall(r"^generations: (\d+)", text, re.M)
    wall = re.findall(r"^wall time: ([0-9.]+) s", text, re.M)
    return {
        "generations": int(generations[-1]) if generations else None,
        "wall_h": float(wall[-1]) / 3600.0 if wall else None,
    }


def row(run: Path, analysis: dict, comparison: dict | None) -> str:
    best = json.loads((run / "best.json").read_text())
    log = run_log(run)
    terms = " / ".join(f"{k} {v:.2f}" for k, v in best["terms"].items())
    walked = (
        f"falls at {analysis['simulated_time']:.2f} s ({analysis['termination_reason']})"
        if analysis["terminated"]
        else f"walks, {analysis['mean_forward_speed']:.2f} m/s"
    )
    cot = analysis.get("cost_of_transport_J_per_kg_m")
    if comparison is None:
        gait = "no gait cycle | – | –"
    else:
        r = [
            comparison["variables"][f"r.{v}"]["r"]
            for v in ("hip_flexion", "knee_flexion", "ankle_dorsiflexion")
        ]
        gait = (
            f"{comparison['gps_deg']:.1f}° | {' / '.join(f'{x:.2f}' for x in r)} | "
            f"{comparison['spatiotemporal']['cadence_steps_per_min']:.0f}"
        )
    wall = "–" if log["wall_h"] is None else f"{log['wall_h']:.2f}"
    return (
        f"| {run.name} | {best['objective']:.2f} ({terms}) | {best['generation']} / {log['generations']} | "
        f"{wall} | {walked} | {analysis['mean_muscle_force_per_body_weight']:.1f} | "
        f"{'n/a' if cot is None else f'{cot:.1f}'} | {gait} |"
    )


def main(argv=None) -> int:
    ap = runs_parser(__doc__.splitlines()[0], "run folders, the baseline first")
    args = ap.parse_args(argv)
    for run in args.runs:
        require_run_folder(ap, run)
    rows = [HEADER]
    with tempfile.TemporaryDirectory(prefix="musclewalk-ablations-") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        rows += [row(run, *resimulate_or_fall(run, work)) for run in args.runs]
    emit("\n".join(rows) + "\n", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
