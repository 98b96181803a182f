"""What the searches made of some parameters: each named controller or initial-state value across
every best.json under the given folders (default models/optimized, committed and in progress), per
creature its count, smallest, median and largest value, and with --runs each run's value, its
time walked and its folder. Reads files only, no simulation.

    python3.11 analysis/parameter_survey.py NAME [NAME ...] [--under DIR ...] [--runs] [--out FILE.md]

A value every search of one creature pushes to the same place (e.g. onto a bound, where the
walkers of another creature keep it far from there) points at a cause in the model or the
controller, not at one run's luck (the README's Ostrich lift-off).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from run_folders import emit

REPO = Path(__file__).resolve().parents[1]
DEFAULT_UNDER = REPO / "models" / "optimized"


def collect(folders: list[Path], names: list[str]) -> list[dict]:
    """One row per best.json under ``folders`` that has every one of ``names``: creature, run
    folder, simulated time and the values (controller or initial state)."""
    rows = []
    for folder in folders:
        for path in sorted(Path(folder).rglob("best.json")):
            try:
                best = json.loads(path.read_text())
                params = best["parameters"]
                values = {**params.get("controller", {}), **params.get("initial_state", {})}
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                continue  # not an optimizer's best.json
            if not all(name in values for name in names):
                continue
            rows.append(
                {
                    "creature": best.get("creature", "?"),
                    "run": str(path.parent),
                    "simulated_time": best.get("simulated_time"),
                    "values": {name: float(values[name]) for name in names},
                }
            )
    return rows


def table(rows: list[dict], names: list[str], runs: bool) -> str:
    """Markdown: per creature and parameter count, min, median, max; then each run (--runs)."""
    lines = ["| creature | parameter | runs | smallest | median | largest |", "|---|---|---|---|---|---|"]
    for creature in sorted({r["creature"] for r in rows}):
        own = [r for r in rows if r["creature"] == creature]
        for name in names:
            values = [r["values"][name] for r in own]
            lines.append(
                f"| {creature} | {name} | {len(values)} | {min(values):.3g} | "
                f"{statistics.median(values):.3g} | {max(values):.3g} |"
            )
    if runs:
        lines += [
            "",
            f"| creature | walked, s | {' | '.join(names)} | run |",
            "|---|---|" + "---|" * (len(names) + 1),
        ]
        for r in sorted(rows, key=lambda r: (r["creature"], r["run"])):
            walked = "" if r["simulated_time"] is None else f"{r['simulated_time']:.2f}"
            values = " | ".join(f"{r['values'][n]:.3g}" for n in names)
            lines.append(f"| {r['creature']} | {walked} | {values} | {r['run']} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="+", help="controller or initial-state parameter names (best.json)")
    ap.add_argument("--under", type=Path, nargs="+", default=[DEFAULT_UNDER], help="folders searched")
    ap.add_argument("--runs", action="store_true", help="also list each run's values")
    ap.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    args = ap.parse_args(argv)
    for folder in args.under:
        if not folder.is_dir():
            ap.error(f"{folder}: no such folder")
    rows = collect(args.under, args.names)
    if not rows:
        print(
            f"parameter_survey.py: error: no best.json under {', '.join(map(str, args.under))} has "
            f"{', '.join(args.names)}",
            file=sys.stderr,
        )
        return 1
    emit(table(rows, args.names, args.runs), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
