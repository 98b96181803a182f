"""This project's Table 4 next to the paper's: `musclewalk table4 -o table4.md`.

One row per experiment of Geijtenbeek et al. 2013, Table 4 (gait column from the thesis, Table
7.4), plus one per other committed run. The project's columns come from files only, never from a
simulation here:

- generations and wall time: the committed straight controller ``<optimized>/<run>/`` (its
  ``log.txt``: the generation at which all objective thresholds were met, or how many ran
  without; ``history.csv``: the wall time up to then on this project's 2 cores). A run that
  started from another run's result (a warm start) counts its own generations only: the column
  says so.
- slope, push, turning: ``robustness/<test>.json`` (``musclewalk robustness``, the README's
  protocol) of the controller optimized for that task (``<creature>-slope|push|steer-<speed>``),
  else of the straight controller (marked "straight").
- gait and survival: a gait summary (``musclewalk analyze``) of ``<analysis>/<run>.json`` when
  given: in the workflow the re-simulated best of its own optimization of the run (on the quick
  budget one generation around the committed controller).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..optimize.experiment import RUN_NAME_PATTERN


@dataclass(frozen=True)
class PaperRow:
    creature: str
    speed: float
    task: str  # this project's task of the straight controller: walk or run
    gait: str
    generations: int
    slope_deg: float
    push_N: float
    turning_deg_s: float

    @property
    def run(self) -> str:
        return f"{self.creature}-{self.task}-{self.speed}"  # as run names write a speed: 2.0


# Geijtenbeek, van de Panne & van der Stappen 2013, Table 4 (the thesis' Table 7.4 adds the gait;
# its footnote: the ostrich performs an "inverted knee" stepping gait)
PAPER_TABLE4 = (
    PaperRow("Human", 2.0, "walk", "walk", 197, 5, 100, 12),
    PaperRow("Human", 4.0, "run", "run", 760, 3, 50, 12),
    PaperRow("Ostrich", 1.2, "walk", "walk (inverted-knee stepping)", 698, 5, 50, 6),
    PaperRow("LongNeck", 1.5, "walk", "walk", 541, 5, 100, 12),
    PaperRow("LongLegs", 2.0, "walk", "walk", 403, 3, 100, 12),
)
SPEED_TOLERANCE = 0.1  # Table 4's rows are re-simulated at their target speed ± 10 % (issue 15)
ROBUSTNESS = (("slope", "slope", "deg"), ("push", "push", "N"), ("turn", "steer", "deg/s"))
_RUN = re.compile(RUN_NAME_PATTERN)


def _thresholds(log: str) -> tuple[int | None, int | None]:
    """(generation at which all thresholds were met or None, generations run) from a log.txt."""
    met = re.search(r"^thresholds met at generation: (\S+)", log, re.M)
    ran = re.search(r"^generations: (\d+)", log, re.M)
    at = int(met.group(1)) if met and met.group(1).isdigit() else None
    return at, int(ran.group(1)) if ran else None


def _wall_hours(history: Path, generation: int | None) -> float | None:
    """Wall time (h) of the run up to ``generation`` (the last one when None)."""
    if not history.is_file():
        return None
    import pandas as pd

    table = pd.read_csv(history)
    if table.empty:
        return None
    rows = table if generation is None else table[table["generation"] <= generation]
    return float(rows["wall_time"].iloc[-1]) / 3600.0 if len(rows) else None


def controller_cell(folder: Path) -> str:
    """'197 (1.2 h)' when the thresholds were met, 'not met after 35 (1.9 h)' otherwise,
    '—' without a committed run; '(warm start)' when it started from another result."""
    log_path = folder / "log.txt"
    if not log_path.is_file():
        return "—"
    log = log_path.read_text()
    met_at, ran = _thresholds(log)
    committed = _best_generation(folder / "best.json")
    # an earlier generation's best committed from a run that met them later with another one
    earlier = met_at is not None and committed is not None and committed < met_at
    hours = _wall_hours(folder / "history.csv", committed if earlier else met_at)
    wall = f" ({hours:.1f} h)" if hours is not None else ""
    warm = " from a warm start" if re.search(r"^warm start: (?!none\b)", log, re.M) else ""
    if earlier:
        return f"not met by its generation-{committed} best{wall}{warm} (the run met them at {met_at})"
    if met_at is not None:
        return f"{met_at}{wall}{warm}"
    return f"not met after {ran}{wall}{warm}" if ran is not None else "—"


def _best_generation(best: Path) -> int | None:
    """The generation of a run folder's best.json (None without one)."""
    if not best.is_file():
        return None
    generation = json.loads(best.read_text()).get("generation")
    return generation if isinstance(generation, int) and not isinstance(generation, bool) else None


def first_failures(result: dict) -> str:
    """'self_collision 8 of 8': what ended each seed's first failed trial of a robustness
    result (its per-seed trials), the commonest first; '' when it records none."""
    reasons = Counter()
    for seed in result.get("seeds") or []:
        level = seed.get("first_failure")
        if level is None:
            continue
        trial = next((t for t in seed.get("trials", []) if t.get("level") == level), None)
        if trial is not None:
            reasons[trial.get("failure") or trial.get("termination_reason") or "unknown"] += 1
    if not reasons:
        return ""
    return ", ".join(f"{r} {n}" for r, n in reasons.most_common()) + f" of {sum(reasons.values())}"


def robustness_cell(optimized: Path, straight: str, test: str, task: str) -> str:
    """The median of ``robustness/<test>.json`` of the task's controller (the straight run's
    name with its task replaced), else of the straight one (marked), with what ended the seeds'
    first failed trials; '—' when neither was measured."""
    parts = _RUN.fullmatch(straight)
    task_run = f"{parts['creature']}-{task}-{parts['speed']}" + (
        f"-{parts['variant']}" if parts["variant"] else ""
    )
    for run, mark in ((task_run, ""), (straight, " (straight)")):
        path = optimized / run / "robustness" / f"{test}.json"
        if path.is_file():
            result = json.loads(path.read_text())
            median = result.get("median")
            value = "below the first level" if median is None else f"{median:g}"
            seeds = len(result.get("per_seed_max", [])) or 1
            capped = "≥ " if median is not None and 2 * result.get("seeds_capped", 0) > seeds else ""
            failures = first_failures(result)
            return f"{capped}{value}{mark}" + (f"; first failures: {failures}" if failures else "")
    return "—"


def gait_cell(analysis: Path | None, run: str, target_speed: float | None = None) -> str:
    """'walk, 10 s at 1.23 m/s' / 'run (flight 12 %), 10 s at …' / '…; fell at 3.2 s' from a
    re-simulation's summary; a mean speed off ``target_speed`` by more than Table 4's 10 % says
    by how much."""
    if analysis is None or not (analysis / f"{run}.json").is_file():
        return "—"
    summary = json.loads((analysis / f"{run}.json").read_text())
    gait = summary.get("gait") or {}
    pattern = gait.get("pattern") or "n/a"
    if pattern == "run":
        pattern += f" (flight {100 * gait.get('flight_fraction', math.nan):.0f} %)"
    if summary.get("terminated"):
        return f"{pattern}; fell at {summary['simulated_time']:.1f} s"
    speed = summary.get("mean_forward_speed")
    cell = f"{pattern}, {summary['simulated_time']:.0f} s at {speed:.2f} m/s"
    off = speed / target_speed - 1 if target_speed and speed is not None else 0.0
    if abs(off) > SPEED_TOLERANCE:
        side = "under" if off < 0 else "over"
        cell += f" ({100 * abs(off):.0f} % {side} its target, outside ± {100 * SPEED_TOLERANCE:g} %)"
    return cell


def table4(optimized: Path, analysis: Path | None = None) -> str:
    """The markdown table (paper | here per column)."""
    optimized = Path(optimized)
    lines = [
        "| creature | speed m/s | gait: paper | gait: here (workflow's re-simulated best) | "
        "generations: paper | generations: here (wall, 2 cores) | slope °: paper | here | push N: paper "
        "| here | turning °/s: paper | here |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    listed = set()
    for row in PAPER_TABLE4:
        listed.add(row.run)
        cells = [robustness_cell(optimized, row.run, t, task) for t, task, _ in ROBUSTNESS]
        lines.append(
            f"| {row.creature} | {row.speed} | {row.gait} | {gait_cell(analysis, row.run, row.speed)} | "
            f"{row.generations} | {controller_cell(optimized / row.run)} | {row.slope_deg:g} | {cells[0]} | "
            f"{row.push_N:g} | {cells[1]} | {row.turning_deg_s:g} | {cells[2]} |"
        )
    for folder in sorted(p for p in optimized.iterdir() if p.is_dir()):
        match = _RUN.fullmatch(folder.name)
        if match is None or folder.name in listed or match["task"] in ("push", "slope", "steer"):
            continue
        cells = [robustness_cell(optimized, folder.name, t, task) for t, task, _ in ROBUSTNESS]
        task = match["task"] + (f", {match['variant']}" if match["variant"] else "")
        gait = gait_cell(analysis, folder.name, float(match["speed"]))
        lines.append(
            f"| {match['creature']} | {match['speed']} | — (not in Table 4; {task}) | {gait} "
            f"| — | {controller_cell(folder)} | — | {cells[0]} | — | {cells[1]} | — | {cells[2]} |"
        )
    return "\n".join(lines) + "\n"
