"""Does a candidate walker replace the committed human-objective Human? The README's commit rule
as one command: more of issue 14's targets met than the committed walker, or as many at a lower
Gait Profile Score, and walking the full time on every seed with its controller and initial
state moved by each epsilon (default 1e-12, 1e-9 and 1e-6 of each range: a walker that falls
after a change at the scale of rounding survives by luck and may not walk on another machine).

Each run folder (the committed one first) is re-simulated 10 s straight at its speed and compared
with the normative gait data (`human_targets.py`'s targets and GPS), then probed as
`parameter_sensitivity.py` does; a candidate that misses on targets is not probed.

    python3.11 analysis/commit_rule.py CANDIDATE [CANDIDATE ...]
        [--committed models/optimized/Human-walk-1.3-human] [--epsilon 1e-12 1e-9 1e-6]
        [--seeds 5] [--out FILE.md] [--work DIR]

--work keeps the simulations: each walker's re-simulation and comparison, and each probe of a
candidate in DIR/CANDIDATE-probes/ as `parameter_sensitivity.py --work` keeps them (its recorded
simulation and the params.json that re-simulates it).
"""

from __future__ import annotations

# isort: off
import musclewalk  # noqa: F401  (pins numpy's CPU dispatch before human_targets loads numpy)

# isort: on
import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from committed_comparison import REPO, resimulate_or_fall
from human_targets import both_legs_measured, target_rows
from parameter_sensitivity import fall_reasons, survival, walked_full
from run_folders import emit, require_run_folder

DURATION = 10.0


@dataclass
class Standing:
    """Where one walker stands on the rule."""

    run: Path
    met: int  # issue-14 targets met (0 when it has no complete cycle of both legs)
    targets: int
    gps: float | None
    walked: dict | None = None  # epsilon -> times walked per seed, s; None: not probed

    def survives(self) -> bool | None:
        if self.walked is None:
            return None
        return all(walked_full(times, DURATION) == len(times) for times in self.walked.values())


def ranks_above(candidate: Standing, committed: Standing) -> bool:
    """More targets met, or as many at a lower GPS (a walker without a GPS ranks below any)."""
    if candidate.met != committed.met:
        return candidate.met > committed.met
    if candidate.gps is None:
        return False
    return committed.gps is None or candidate.gps < committed.gps


def verdict(candidate: Standing, committed: Standing) -> str:
    if not ranks_above(candidate, committed):
        return "keep the committed walker: fewer targets, or as many at no lower GPS"
    if candidate.survives() is False:
        return "keep the committed walker: it ranks above, but falls with its parameters moved"
    return "commit: it ranks above and walks on every seed at every epsilon"


def standing(run: Path, work: Path) -> Standing:
    analysis, comparison = resimulate_or_fall(run, work)
    if not both_legs_measured(comparison):
        return Standing(run, 0, 16, None)
    rows = target_rows(analysis, comparison)
    return Standing(run, sum(row[-1] for row in rows), len(rows), comparison["gps_deg"])


def walked_cell(s: Standing) -> str:
    if s.walked is None:
        return "not probed"
    cells = []
    for eps, times in s.walked.items():
        falls = fall_reasons(times)
        cell = f"{eps:g}: {walked_full(times, DURATION)} of {len(times)}"
        cells.append(f"{cell} ({falls})" if falls else cell)
    return ", ".join(cells)


def markdown(committed: Standing, candidates: list[Standing]) -> str:
    lines = [
        "| walker | targets met | GPS, ° | walks 10 s with its parameters moved by ε (seeds) | verdict |",
        "|---|---|---|---|---|",
    ]
    for s in [committed, *candidates]:
        gps = "—" if s.gps is None else f"{s.gps:.2f}"
        rule = "(committed)" if s is committed else verdict(s, committed)
        lines.append(f"| {s.run} | {s.met} of {s.targets} | {gps} | {walked_cell(s)} | {rule} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("candidates", type=Path, nargs="+", help="run folders (best.json + optimized.osim)")
    ap.add_argument("--committed", type=Path, default=REPO / "models/optimized/Human-walk-1.3-human")
    ap.add_argument("--epsilon", type=float, nargs="+", default=[1e-12, 1e-9, 1e-6])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    ap.add_argument("--work", type=Path, help="keep the simulations here (default: a temp folder)")
    args = ap.parse_args(argv)
    if args.seeds < 1 or any(e <= 0 for e in args.epsilon):
        ap.error("--seeds >= 1 and --epsilon > 0")
    for run in [args.committed, *args.candidates]:
        require_run_folder(ap, run)
    with tempfile.TemporaryDirectory(prefix="commit-rule-") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        committed = standing(args.committed, work)
        print(f"{args.committed}: {committed.met} of {committed.targets}, GPS {committed.gps}", flush=True)
        candidates = []
        for run in args.candidates:
            s = standing(run, work)
            print(f"{run}: {s.met} of {s.targets}, GPS {s.gps}", flush=True)
            if ranks_above(s, committed):
                probes = args.work / f"{run.name}-probes" if args.work else None
                s.walked = survival(run, args.epsilon, args.seeds, DURATION, work=probes)
            candidates.append(s)
    emit(markdown(committed, candidates), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
