"""Which of a walker's excitation sources it can do without: each controller value matching a
pattern (by default the constant excitations of eqs. 30-31, ``const.*``) scaled alone toward 0, and
whether the walker then still walks, at what speed and at what metabolic cost (the measure of the
run's own objective: J/(kg m) for the human objectives, W/kg for the paper's; the paper's
termination rules, straight and flat, the run's speed).

    python3.11 analysis/lower_one_at_a_time.py RUN_DIR [--pattern 'const.*'] [--factor 0.5]
                                                  [--min 0.05] [--duration 10] [--out FILE.md]

Co-contraction costs activation and maintenance heat whether or not it holds the gait up: a
constant the walker keeps walking without, at a lower cost, is one a constraint continuation can
take down (an experiment stage's ``parameters:`` upper bound); one it falls without is part of
its balance. Only values of at least --min are probed (a negative constant is an inhibition, and
scaling it toward 0 would add excitation).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
from pathlib import Path

from run_folders import BestScorer, emit, require_run_folder

import musclewalk  # noqa: F401  (pins numpy's CPU dispatch before numpy loads)

COST_MEASURES = ("metabolic_cost_per_target_distance", "metabolic_rate_per_kg")  # the first the objective has


def probed(run: Path, pattern: str, minimum: float) -> list[str]:
    """The controller values of the run's best.json that match ``pattern`` and are >= ``minimum``."""
    controller = json.loads((run / "best.json").read_text())["parameters"]["controller"]
    return sorted(n for n, v in controller.items() if fnmatch.fnmatchcase(n, pattern) and v >= minimum)


def probe(run: Path, names: list[str], factor: float, duration: float) -> tuple[list[dict], str]:
    """(one row per value of ``names`` scaled alone, the run's own values first (``name`` None);
    the cost's measure)."""
    scorer = BestScorer(run, duration)
    values = scorer.values
    terms = {t.measure: t.name for t in scorer.objective.terms}
    measure = next((m for m in COST_MEASURES if m in terms), None)
    cost = terms.get(measure)

    def walk(changed: dict) -> dict:
        scored = scorer.score(changed)
        result, averages = scored.result, scored.averages
        summary = result.summary(scorer.scenario)
        return {
            "walks": not result.terminated,
            "simulated_time": float(result.simulated_time),
            "speed": summary["mean_forward_speed"],
            "cost": averages.get(cost) if cost else None,
        }

    rows = [{"name": None, "value": None, "new": None, **walk(values)}]
    print(_line(rows[0], rows[0]), flush=True)
    for name in names:
        value = values[name]
        row = {"name": name, "value": value, "new": value * factor, **walk({**values, name: value * factor})}
        rows.append(row)
        print(_line(row, rows[0]), flush=True)
    return rows, measure or "none in the objective"


def _line(row: dict, base: dict) -> str:
    what = "as optimized" if row["name"] is None else f"{row['name']} {row['value']:.3f} -> {row['new']:.3f}"
    walked = "walks" if row["walks"] else f"falls at {row['simulated_time']:.2f} s"
    cost = "" if row["cost"] is None else f", cost {row['cost']:.2f}"
    if row["cost"] is not None and row["name"] is not None and base["cost"] is not None:
        cost += f" ({row['cost'] - base['cost']:+.2f})"
    return f"{what}: {walked}, {row['speed']:.2f} m/s{cost}"


def markdown(run: Path, rows: list[dict], measure: str, factor: float, duration: float) -> str:
    base = rows[0]
    lines = [
        f"{run}: each value scaled alone by {factor:g}, {duration:g} s straight at the run's speed; "
        f"cost: the run objective's {measure} (for a fall, of the time it walked)",
        "",
        "| value | from | to | walks the full time | speed, m/s | cost | change |",
        "|---|---|---|---|---|---|---|",
    ]
    walkers = sorted(rows[1:], key=lambda r: (not r["walks"], r["cost"] or 0.0))
    for row in [base, *walkers]:
        full = row["walks"]
        change = (
            ""
            if row["name"] is None or row["cost"] is None or base["cost"] is None
            else f"{row['cost'] - base['cost']:+.2f}"
        )
        lines.append(
            f"| {row['name'] or 'as optimized'} | "
            + ("" if row["value"] is None else f"{row['value']:.3f}")
            + " | "
            + ("" if row["new"] is None else f"{row['new']:.3f}")
            + f" | {'yes' if full else 'no: fell at ' + format(row['simulated_time'], '.2f') + ' s'} | "
            + f"{row['speed']:.2f} | "
            + ("" if row["cost"] is None else f"{row['cost']:.2f}")
            + f" | {change} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="run folder (best.json + optimized.osim)")
    ap.add_argument("--pattern", default="const.*", help="fnmatch pattern over controller names")
    ap.add_argument("--factor", type=float, default=0.5)
    ap.add_argument("--min", type=float, default=0.05, dest="minimum")
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    args = ap.parse_args(argv)
    if not 0.0 <= args.factor < 1.0 or args.duration <= 0:
        ap.error("--factor in [0, 1) and --duration > 0")
    require_run_folder(ap, args.run)
    names = probed(args.run, args.pattern, args.minimum)
    if not names:
        ap.error(f"no controller value matches {args.pattern!r} with a value >= {args.minimum:g}")
    rows, measure = probe(args.run, names, args.factor, args.duration)
    text = markdown(args.run, rows, measure, args.factor, args.duration)
    emit(text, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
