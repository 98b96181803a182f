"""Do the committed walkers give the same numbers on this machine, now, under this load?

Each committed run under models/optimized/ (best.json + optimized.osim) is re-simulated straight
with `musclewalk simulate` at its speed for --duration s, and what it produced is recorded: how
long it walked, how it ended, the distance its centre of mass travelled (every bit) and a SHA-256
of the recorded states (states.sto's numbers). `--out FILE.json` writes that record;
`--check FILE.json` re-simulates the runs of a record and compares: every field but the wall time
must be equal to the last bit, or the script lists what differs and exits 1. `--burn N` keeps N
CPU-burning processes running beside the simulations, so that the check is made under load.

    python3.11 analysis/reproducibility.py --out docs/tables/reproducibility.json
    python3.11 analysis/reproducibility.py --check docs/tables/reproducibility.json --burn 2
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import sys
import tempfile
from pathlib import Path

from committed_comparison import REPO, simulate_run
from run_folders import require_run_folder, write_whole

from musclewalk.analysis.reproducibility import COMPARED, differences, record_of


def committed_runs(optimized: Path) -> list[Path]:
    """The run folders directly under ``optimized`` (in-progress/ holds none of them), by name."""
    return sorted(p.parent for p in optimized.glob("*/best.json") if (p.parent / "optimized.osim").is_file())


def run_key(run: Path) -> str:
    """A run folder as a record names it: relative to the repository when inside it."""
    run = run.resolve()
    return str(run.relative_to(REPO)) if run.is_relative_to(REPO) else str(run)


def _burn() -> None:
    while True:
        pass


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", type=Path, nargs="*", help="run folders (default: those under models/optimized/)")
    ap.add_argument("--duration", type=float, default=10.0, help="simulated time, s (default 10)")
    ap.add_argument("--out", type=Path, help="write the record (JSON) here")
    ap.add_argument("--check", type=Path, help="a record to compare with (its runs and duration)")
    ap.add_argument("--burn", type=int, default=0, help="CPU-burning processes beside (default 0)")
    ap.add_argument("--work", type=Path, help="keep the simulations here (default: a temp folder)")
    args = ap.parse_args(argv)
    if args.burn < 0:
        ap.error(f"--burn {args.burn}: expected 0 or more processes")
    if args.duration <= 0:
        ap.error(f"--duration {args.duration:g}: expected a positive time")

    expected = None
    if args.check:
        try:
            record = json.loads(args.check.read_text())
            expected = record["runs"]
            args.duration = float(record["duration"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            ap.error(f"{args.check}: --check: not a record of this script ({exc})")
        if args.runs:
            ap.error("--check re-simulates the record's runs: give no run folders with it")
        runs = [REPO / name for name in expected]
    else:
        runs = args.runs or committed_runs(REPO / "models" / "optimized")
    for run in runs:
        require_run_folder(ap, run)

    burners = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(args.burn)]
    for b in burners:
        b.start()
    found = {}
    try:
        with tempfile.TemporaryDirectory(prefix="reproducibility-") as scratch:
            work = args.work or Path(scratch)
            work.mkdir(parents=True, exist_ok=True)
            for run in runs:
                key = run_key(run)
                found[key] = r = record_of(simulate_run(run, work, args.duration))
                print(
                    f"{key}: {r['simulated_time']:.2f} s, distance {r['distance']!r} m, states "
                    f"{r['states_sha256'][:16]}, wall {r['wall_per_simulated_second']:.2f} s per s",
                    flush=True,
                )
    finally:
        for b in burners:
            b.terminate()

    load = os.getloadavg()[0]
    print(f"{len(found)} runs of {args.duration:g} s beside {args.burn} CPU burners; load {load:.2f}")
    if args.out:
        record = {
            "duration": args.duration,
            "written_beside_cpu_burners": args.burn,
            "load_average_1min": round(load, 2),
            "machine": f"{platform.machine()} {os.cpu_count()} cores, {platform.platform()}",
            "runs": found,
        }
        write_whole(json.dumps(record, indent=1) + "\n", args.out)
        print(f"wrote {args.out}")
    if expected is not None:
        lines = differences(expected, found)
        if lines:
            print(f"{len(lines)} differences from {args.check}:", *lines, sep="\n")
            return 1
        print(f"every run equal to {args.check} to the last bit ({', '.join(COMPARED)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
