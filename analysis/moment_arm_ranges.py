"""Which muscles lose or reverse their action within their joints' ranges: for every muscle and
every rotational coordinate it has a moment arm about in the model's default pose (at least
--min-arm), the coordinate is swept over its range (the others at their defaults) and the
smallest moment arm, as a fraction of the default pose's with its sign, is reported. A fraction
below 0 is a muscle that acts the other way there (a straight path that has crossed its joint's
centre); one below --fraction (default 0.2) is listed.

    musclewalk build Ostrich -o ostrich.osim
    python3.11 analysis/moment_arm_ranges.py ostrich.osim [MODEL.osim ...] [--fraction 0.2]
        [--coordinates neck_flexion_ --coordinates neck_bending_] [--out FILE.md]

--coordinates keeps only coordinates whose names start with one of the given prefixes. The exit
status is 0 whatever is found (a report, not a check); tests/test_analysis_scripts.py holds the
neck-tail creatures' neck flexion and bending to the default fraction.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from run_folders import model_tables

import musclewalk  # noqa: F401  (pins numpy's CPU dispatch before numpy loads)
from musclewalk.opensim_env import import_opensim

SWEEP_POINTS = 25


def moment_arm_rows(path: Path, prefixes=(), min_arm: float = 1e-3) -> list[dict]:
    """Per (muscle, coordinate) with |moment arm| >= min_arm in the default pose: the default
    arm, the smallest arm over the range as a fraction of it, and where that is."""
    osim = import_opensim()
    model = osim.Model(str(path))
    state = model.initSystem()
    coordinates = [
        c
        for c in model.getCoordinateSet()
        if c.getMotionType() == 1  # rotational
        and not c.get_locked(0)
        and (not prefixes or c.getName().startswith(tuple(prefixes)))
    ]
    muscles = list(model.getMuscles())
    rows = []
    for coordinate in coordinates:
        default = coordinate.getDefaultValue()
        coordinate.setValue(state, default)
        base = np.array([m.computeMomentArm(state, coordinate) for m in muscles])
        acting = np.abs(base) >= min_arm
        if not acting.any():
            continue
        angles = np.linspace(coordinate.getRangeMin(), coordinate.getRangeMax(), SWEEP_POINTS)
        arms = np.empty((SWEEP_POINTS, len(muscles)))
        for k, q in enumerate(angles):
            coordinate.setValue(state, q)
            arms[k] = [m.computeMomentArm(state, coordinate) if a else 0.0 for m, a in zip(muscles, acting)]
        coordinate.setValue(state, default)
        for i in np.flatnonzero(acting):
            fraction = arms[:, i] / base[i]
            worst = int(np.argmin(fraction))
            rows.append(
                {
                    "muscle": muscles[i].getName(),
                    "coordinate": coordinate.getName(),
                    "range": (np.degrees(angles[0]), np.degrees(angles[-1])),
                    "arm": float(base[i]),
                    "fraction": float(fraction[worst]),
                    "at": float(np.degrees(angles[worst])),
                }
            )
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", type=Path, help="built .osim models")
    ap.add_argument("--fraction", type=float, default=0.2, help="list arms falling below this (default 0.2)")
    ap.add_argument("--min-arm", type=float, default=1e-3, help="smallest default-pose arm, m (default 1 mm)")
    ap.add_argument("--coordinates", action="append", default=[], help="coordinate name prefix (repeatable)")
    ap.add_argument("--out", type=Path, help="also write the tables to this Markdown file")
    args = ap.parse_args(argv)

    def table(path: Path) -> list[str]:
        rows = moment_arm_rows(path, args.coordinates, args.min_arm)
        weak = sorted(
            (r for r in rows if r["fraction"] < args.fraction), key=lambda r: (r["coordinate"], r["muscle"])
        )
        return [
            f"{path}: {len(weak)} of {len(rows)} muscle-coordinate pairs fall below {args.fraction:g} "
            "of their default-pose moment arm within the coordinate's range (below 0: they act the "
            "other way there)",
            "",
            "| muscle | coordinate | range, deg | default-pose arm, mm | smallest / default | at, deg |",
            "|---|---|---|---|---|---|",
            *(
                f"| {r['muscle']} | {r['coordinate']} | {r['range'][0]:.0f} to {r['range'][1]:.0f} | "
                f"{1000 * r['arm']:+.1f} | {r['fraction']:+.2f} | {r['at']:.0f} |"
                for r in weak
            ),
        ]

    return model_tables("moment_arm_ranges.py", args.models, table, args.out)


if __name__ == "__main__":
    sys.exit(main())
