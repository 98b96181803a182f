"""What the searches made of some parameters: each named controller or initial-state value across
every best.json under the given folders (default models/optimized, committed and in progress), per
creature its count, smallest, median and largest value, and with --runs each run's value, its
time walked and its folder. Reads files only, no simulation.

    python3.11 analysis/parameter_survey.py NAME [NAME ...] [--under DIR ...] [--runs] [--out FILE.md]

A value every search of one creature pushes to the same place (e.g. onto a bound, where the
walkers of another creature keep it far from there) points at a cause in the model or the
controller, not at one run's luck (the Ostrich's lift-off: docs/getting-creatures-to-walk.md).

    python3.11 analysis/parameter_survey.py --against Human HumanLegs [NAME ...] [--top 12]

looks for such values: the reference is every best of the --against creatures that ran its full
duration without a balance aid (a walker); for each other creature and each controller parameter
its bests share with the walkers (or each NAME), the parameter is listed when the median of the
creature's bests lies outside the walkers' range, by how far in units of that range's width (at
least a tenth of its largest magnitude, for walkers that agree), the furthest first. The
creatures differ (an inverted leg's targets are not a human's), so gains and dimensionless
values are the ones to compare; each lead is a hypothesis to test by a run (e.g. the LongNeck's
trunk damping, config/experiments/longneck-walk-1.5-trunkdamping.yaml).
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


def collect(folders: list[Path], names: list[str] | None) -> list[dict]:
    """One row per best.json under ``folders`` that has every one of ``names`` (None: its
    controller values, whatever they are): creature, run folder, simulated time, whether it ran
    its full duration, and the values (controller or initial state)."""
    rows = []
    for folder in folders:
        for path in sorted(Path(folder).rglob("best.json")):
            try:
                best = json.loads(path.read_text())
                params = best["parameters"]
                controller = params.get("controller", {})
                values = {**controller, **params.get("initial_state", {})}
                wanted = list(controller) if names is None else names
                picked = {name: float(values[name]) for name in wanted if name in values}
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                continue  # not an optimizer's best.json
            if names is not None and len(picked) < len(names):
                continue
            walked, duration = best.get("simulated_time"), best.get("duration")
            rows.append(
                {
                    "creature": best.get("creature", "?"),
                    "run": str(path.parent),
                    "simulated_time": walked,
                    "walks": isinstance(walked, (int, float))
                    and isinstance(duration, (int, float))
                    and walked >= duration - 1e-6
                    and not _aided(path, best),
                    "values": picked,
                }
            )
    return rows


def _aided(path: Path, best: dict) -> bool:
    """Whether the best was scored with a balance aid: its task definition (best.json's, or the
    settings.json beside it for older bests) has an assist section."""
    definition = best.get("task_definition")
    if not isinstance(definition, dict):
        try:
            definition = json.loads((path.parent / "settings.json").read_text()).get("task_definition")
        except (OSError, ValueError, AttributeError):
            definition = None
    return isinstance(definition, dict) and bool(definition.get("assist"))


def apart(rows: list[dict], against: list[str], top: int) -> str:
    """Markdown: per creature not in ``against``, the parameters whose median over its bests lies
    outside the range of the walking bests of ``against``, furthest (in widths of that range)
    first, at most ``top`` each. ValueError when ``against`` has no walking best."""
    reference = [r for r in rows if r["creature"] in against and r["walks"]]
    if not reference:
        raise ValueError(f"no best of {', '.join(against)} ran its full duration")
    shared = set.intersection(*(set(r["values"]) for r in reference))
    lines = [
        f"Against {len(reference)} walking bests of {', '.join(against)}:",
        "",
        "| creature | parameter | its bests | median | smallest | largest | walkers | off by, widths |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for creature in sorted({r["creature"] for r in rows} - set(against)):
        own = [r for r in rows if r["creature"] == creature]
        found = []
        for name in sorted(shared):
            values = [r["values"][name] for r in own if name in r["values"]]
            if not values:
                continue
            ref = [r["values"][name] for r in reference]
            low, high, median = min(ref), max(ref), statistics.median(values)
            if low <= median <= high:
                continue
            width = max(high - low, 0.1 * max(abs(low), abs(high)), 1e-9)  # one walker, or all at 0
            off = (low - median if median < low else median - high) / width
            found.append((off, name, len(values), median, min(values), max(values), low, high))
        for off, name, count, median, smallest, largest, low, high in sorted(found, reverse=True)[:top]:
            lines.append(
                f"| {creature} | {name} | {count} | {median:.3g} | {smallest:.3g} | {largest:.3g} | "
                f"{low:.3g} to {high:.3g} | {off:.2f} |"
            )
    return "\n".join(lines) + "\n"


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
    ap.add_argument("names", nargs="*", help="controller or initial-state parameter names (best.json)")
    ap.add_argument("--under", type=Path, nargs="+", default=[DEFAULT_UNDER], help="folders searched")
    ap.add_argument("--runs", action="store_true", help="also list each run's values")
    ap.add_argument(
        "--against",
        nargs="+",
        metavar="CREATURE",
        help="list each other creature's parameters whose median lies outside these creatures' walkers'",
    )
    ap.add_argument("--top", type=int, default=12, help="with --against: at most this many per creature")
    ap.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    args = ap.parse_args(argv)
    if not args.names and not args.against:
        ap.error("name a parameter, or give --against")
    for folder in args.under:
        if not folder.is_dir():
            ap.error(f"{folder}: no such folder")
    if args.against:
        try:
            text = apart(collect(args.under, args.names or None), args.against, args.top)
        except ValueError as e:
            print(f"parameter_survey.py: error: {e}", file=sys.stderr)
            return 1
        emit(text, args.out)
        return 0
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
