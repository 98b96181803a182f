"""Where long optimizations stand: one row per run folder and stage, read from the files the
optimizer writes every generation (history.csv, settings.json, the run lock), without simulating.
For the runs that go on across sessions (README "Compute is the scarce resource": resumed until
done), to see at a glance which stage each is in, how long its best has stood, and which are
running now.

    python3.11 analysis/run_status.py [RUN ...] [--out FILE.md]

RUN: an optimization run folder (default: every folder under models/optimized/in-progress). A
run with continuation stages gets a row per stage (stages/<name>/, in the order they started).
Columns: generations run, the best objective and the generation that found it, the generations
since then, how long the best candidate stayed up of its t_max (with several trials per candidate:
the shortest, then each trial's), the mean of the last 5
generations' median objectives (where the search distribution stands: a best far below it that
the medians do not follow is one lucky candidate, e.g. a chaotic fall time), the wall time of the
stage, and "running" when an optimizer holds the run's lock (its process alive). A stage still in its first
generation (only its lock, or its settings.json) reads "no generation yet".
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_folders import emit  # noqa: E402

LOCK = ".musclewalk.lock"  # musclewalk.optimize.driver.LOCK


def _is_stage(folder: Path) -> bool:
    """A started optimization: its history.csv and settings.json (written after each generation),
    or the lock of the optimizer running its first generation."""
    return any((folder / name).is_file() for name in ("history.csv", "settings.json", LOCK))


def stage_folders(run: Path) -> list[Path]:
    """The started optimizations in ``run``: its stages (stages/<name>/, in the order of their
    settings.json's times; one in its first generation, which has none yet, last), then the run
    folder itself (a run without stages, or an experiment's last stage, which runs there)."""

    def started(p: Path):
        settings = p / "settings.json"
        return (settings.stat().st_mtime if settings.is_file() else float("inf"), p.name)

    stages = sorted((p for p in (run / "stages").glob("*") if _is_stage(p)), key=started)
    if _is_stage(run):
        stages.append(run)
    return stages


def running(folder: Path) -> bool:
    """An optimizer holds the folder's lock (each stage of an experiment is locked on its own):
    the lock file is there and the pid it names is alive."""
    lock = folder / LOCK
    if not lock.is_file():
        return False
    try:
        pid = int(lock.read_text().strip() or "0")
    except (OSError, ValueError):
        return False
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stage_status(folder: Path) -> dict | None:
    """One stage's row, or None when its history has no generation yet."""
    if not (folder / "history.csv").is_file():
        return None
    with (folder / "history.csv").open() as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return None
    last = rows[-1]
    best = float(last["best"])
    found = next(int(r["generation"]) for r in rows if float(r["best"]) == best)
    duration = None
    if (folder / "settings.json").is_file():
        duration = json.loads((folder / "settings.json").read_text()).get("duration")
    survived = last.get("best_simulated_time")
    medians = [float(r["median"]) for r in rows[-5:] if r.get("median") not in (None, "")]
    trial_times = None  # a run with several trials per candidate: each of its best's
    if (folder / "best.json").is_file():
        try:
            trial_times = (json.loads((folder / "best.json").read_text()).get("trials") or {}).get(
                "simulated_times"
            )
        except ValueError:
            trial_times = None
    return {
        "generations": int(last["generation"]),
        "best": best,
        "found": found,
        "since": int(last["generation"]) - found,
        "survived": float(survived) if survived not in (None, "") else None,
        "trial_times": trial_times,
        "median": sum(medians) / len(medians) if medians else None,
        "duration": duration,
        "wall_h": float(last["wall_time"]) / 3600.0,
        "running": running(folder),
    }


def status_table(runs: list[Path]) -> str:
    lines = [
        "| run | stage | generations | best (at generation) | unchanged for | best stays up, s "
        "| median, last 5 generations | wall, h | now |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        folders = stage_folders(run)
        for folder in folders:
            s = stage_status(folder)
            stage = folder.name if folder != run else ("last (the run folder)" if len(folders) > 1 else "—")
            if s is None:
                now = "running" if running(folder) else ""
                lines.append(f"| {run.name} | {stage} | 0 | no generation yet | | | | | {now} |")
                continue
            up = "—" if s["survived"] is None else f"{s['survived']:g}"
            if s["duration"] is not None and s["survived"] is not None:
                up += f" of {s['duration']:g}"
            if s["trial_times"]:
                up += (
                    f" (its {len(s['trial_times'])} trials: {', '.join(f'{t:g}' for t in s['trial_times'])})"
                )
            median = "—" if s["median"] is None else f"{s['median']:.2f}"
            lines.append(
                f"| {run.name} | {stage} | {s['generations']} | {s['best']:.2f} ({s['found']}) | "
                f"{s['since']} | {up} | {median} | {s['wall_h']:.2f} | {'running' if s['running'] else ''} |"
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "runs", type=Path, nargs="*", help="run folders (default: models/optimized/in-progress/*)"
    )
    ap.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    args = ap.parse_args(argv)
    runs = args.runs or sorted(p for p in (REPO / "models/optimized/in-progress").iterdir() if p.is_dir())
    for run in runs:
        if not run.is_dir():
            ap.error(f"{run}: not a folder")
        if not stage_folders(run):
            ap.error(f"{run}: no history.csv, settings.json or lock (not an optimization run folder)")
    emit(status_table(runs), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
