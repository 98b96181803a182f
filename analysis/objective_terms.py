"""Score walkers by an objective of your choice: each run folder's best simulated straight at its
speed, as an optimization evaluates a candidate, and scored by ``--objective`` (a name under
models/objectives/ or a YAML file; by default each run's own, as lower_one_at_a_time.py reads it),
with every term's time average and weighted value.

    python3.11 analysis/objective_terms.py RUN_DIR [RUN_DIR ...] [--objective NAME|FILE]
                                           [--duration 10] [--out FILE.md]

What a term would charge a walker its search did not see, e.g. whether a new measure tells the
walkers apart before an optimization is started on it (docs/human-like-gait.md, the sixty-eighth
try: landing_knee_flexion_excess on walkers that met the knee's target and on those that did not).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from run_folders import BestScorer, emit, require_run_folder

import musclewalk  # noqa: F401  (pins numpy's CPU dispatch before numpy loads)
from musclewalk.measures.objective import Objective, ObjectiveError


def score(run: Path, objective: Objective | None, duration: float) -> dict:
    """The run's best simulated ``duration`` s straight at its speed and scored by ``objective``
    (the run's own when None): its simulated time, mean speed, score and per-term averages and
    weighted values."""
    scorer = BestScorer(run, duration, objective)
    scored = scorer.score()
    return {
        "run": str(run),
        "objective": scorer.objective.name,
        "simulated_time": float(scored.result.simulated_time),
        "terminated": bool(scored.result.terminated),
        "speed": scored.result.summary(scorer.scenario)["mean_forward_speed"],
        "score": float(scored.score),
        "averages": {k: float(v) for k, v in scored.averages.items()},
        "terms": {k: float(v) for k, v in scored.terms.items()},
    }


def markdown(rows: list[dict], duration: float) -> str:
    names = list(rows[0]["averages"])
    lines = [
        f"Each run's best, {duration:g} s straight at its speed, scored as an optimization scores a "
        "candidate; per term its time average (its weighted value in the score)",
        "",
        "| run | objective | walks | speed, m/s | score | " + " | ".join(names) + " |",
        "|---|---|---|---|---|" + "---|" * len(names),
    ]
    for row in rows:
        walks = "yes" if not row["terminated"] else f"no: {row['simulated_time']:.2f} s"
        cells = [f"{row['averages'][n]:.4g} ({row['terms'].get(n, 0.0):.2f})" for n in names]
        lines.append(
            f"| {row['run']} | {row['objective']} | {walks} | {row['speed']:.2f} | {row['score']:.2f} | "
            + " | ".join(cells)
            + " |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path, help="run folders (best.json + optimized.osim)")
    ap.add_argument(
        "--objective", help="an objective name (models/objectives/) or YAML file; default: each run's own"
    )
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    args = ap.parse_args(argv)
    if args.duration <= 0:
        ap.error("--duration: must be > 0")
    for run in args.runs:
        require_run_folder(ap, run)
    try:
        objective = Objective.load(args.objective) if args.objective else None
    except ObjectiveError as e:
        ap.error(str(e))
    rows = [score(run, objective, args.duration) for run in args.runs]
    if objective is None and len({tuple(r["averages"]) for r in rows}) > 1:
        ap.error("the runs' own objectives differ in their terms: give one with --objective")
    emit(markdown(rows, args.duration), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
