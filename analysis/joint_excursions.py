"""Which joints a gait drives onto their limits: for each coordinate of a `musclewalk simulate`
folder (optionally only those whose names start with a --prefix), its mean, smallest and largest
angle after --after seconds and the share of that time it spends past the onset of its limit force
(the model's CoordinateLimitForce), the most-limited first.

    musclewalk simulate RUN/optimized.osim --params RUN/best.json --duration 10 --out s/
    python3.11 analysis/joint_excursions.py s/ [s2/ ...] [--prefix neck_ ...] [--after 0.5] [--out FILE.md]

A joint the gait holds on a limit (the committed walkers' stance knees before the
knee-overextension inhibition) or swings from one limit to the other (every neck-tail creature's
neck joints, docs/getting-creatures-to-walk.md) leans on forces the controller does not command.
Reads files only (kinematics.mot, summary.json and the model it names).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lxml import etree
from run_folders import emit

import musclewalk  # noqa: F401  (pins numpy's CPU dispatch before numpy loads)
from musclewalk.analysis.summary import read_run_summary
from musclewalk.sim.outputs import read_storage


def limit_onsets(model: Path) -> dict[str, tuple[float, float]]:
    """Coordinate name -> (lower, upper) angle in degrees where its limit force begins."""
    tree = etree.parse(str(model))
    out = {}
    for force in tree.iter("CoordinateLimitForce"):
        name = force.findtext("coordinate")
        lower, upper = force.findtext("lower_limit"), force.findtext("upper_limit")
        if name and lower is not None and upper is not None:
            out[name.strip()] = (float(lower), float(upper))
    return out


def excursions(sim_dir: Path, prefixes: tuple = (), after: float = 0.5) -> tuple[list[dict], float]:
    """One row per limited coordinate (matching ``prefixes``) of the folder's kinematics after
    ``after`` s: mean, smallest, largest (deg) and the share of samples past a limit onset; and
    the kinematics' last time."""
    summary = read_run_summary(sim_dir)
    onsets = limit_onsets(Path(summary["model"]))
    kinematics = read_storage(sim_dir / "kinematics.mot")
    if not kinematics.attrs.get("degrees"):
        raise ValueError(f"{sim_dir / 'kinematics.mot'}: expected angles in degrees (inDegrees=yes)")
    time = kinematics["time"].to_numpy()
    window = time >= after
    if not window.any():
        raise ValueError(f"{sim_dir}: no samples after {after:g} s (it ran {time[-1]:.2f} s)")
    rows = []
    for name, (lower, upper) in sorted(onsets.items()):
        if name not in kinematics.columns or (prefixes and not name.startswith(prefixes)):
            continue
        angle = kinematics[name].to_numpy()[window]
        past = (angle < lower) | (angle > upper)
        rows.append(
            {
                "coordinate": name,
                "mean": float(angle.mean()),
                "smallest": float(angle.min()),
                "largest": float(angle.max()),
                "onsets": (lower, upper),
                "past": float(past.mean()),
                "below": float((angle < lower).mean()),
                "above": float((angle > upper).mean()),
            }
        )
    return sorted(rows, key=lambda r: (-r["past"], r["coordinate"])), float(time[-1])


def table(sim_dir: Path, rows: list[dict], after: float, time_end: float) -> str:
    lines = [
        f"{sim_dir}: {after:g}-{time_end:.2f} s",
        "",
        "| coordinate | mean, deg | smallest | largest | limit force from | time past it (below / above) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lower, upper = r["onsets"]
        lines.append(
            f"| {r['coordinate']} | {r['mean']:+.1f} | {r['smallest']:+.1f} | {r['largest']:+.1f} | "
            f"{lower:+g} / {upper:+g} | {100 * r['past']:.0f} % ({100 * r['below']:.0f} / "
            f"{100 * r['above']:.0f}) |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("simulations", type=Path, nargs="+", help="musclewalk simulate folders")
    ap.add_argument("--prefix", action="append", default=[], help="coordinate name prefix (repeatable)")
    ap.add_argument("--after", type=float, default=0.5, help="ignore the first seconds (default 0.5)")
    ap.add_argument("--out", type=Path, help="also write the tables to this Markdown file")
    args = ap.parse_args(argv)
    texts = []
    for sim_dir in args.simulations:
        try:
            rows, end = excursions(sim_dir, tuple(args.prefix), args.after)
        except (OSError, ValueError, KeyError) as e:
            print(f"joint_excursions.py: error: {e}", file=sys.stderr)
            return 1
        texts.append(table(sim_dir, rows, args.after, end))
    emit("\n".join(texts), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
