"""Whether tension in a chain's muscles buckles its joints: for every neck and tail coordinate of a
built model, the slope of the chain muscles' summed generalized force with the coordinate, dtau/dq,
at one activation for all of them (the others at their defaults, the pose the base pose), beside
the spring on that coordinate. A positive slope is a negative stiffness: a joint bent one way is
pulled further that way, as a strut under compression is. Where it exceeds the spring, the
joint on its own is unstable at that activation and comes to rest on a limit; a chain of such
joints that holds its head where the head control wants it can still fold into a zigzag, which
the head's position and orientation do not see. The figure leaves out gravity (a further
negative stiffness for a raised neck) and the coupling of a joint's flexion and bending, so a
positive "spring - muscles" does not by itself make a joint stable; a negative one makes it
unstable.

    musclewalk build LongLegs -o longlegs.osim
    python3.11 analysis/chain_stiffness.py longlegs.osim [MODEL.osim ...] [--activation 0.5]
        [--coordinates neck_bending_ ...] [--out FILE.md]

The slope is a central difference over +-2.5 deg; each muscle's force is its tendon force with
the muscles equilibrated at the pose (rigid tendons: the fibre's force-length-velocity force at
zero velocity). The exit status is 0 whatever is found (a report, not a check).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from run_folders import model_tables

import musclewalk  # noqa: F401  (pins numpy's CPU dispatch before numpy loads)
from musclewalk.opensim_env import import_opensim

STEP = math.radians(2.5)
CHAIN_PREFIXES = ("neck_", "tail_")  # the neck-tail template's coordinates and muscles


def _chain_force(model, state, muscles, coordinate) -> float:
    """The muscles' summed generalized force on ``coordinate`` (N m) at the state's pose."""
    model.realizeVelocity(state)
    model.equilibrateMuscles(state)
    model.realizeDynamics(state)
    return sum(m.computeMomentArm(state, coordinate) * m.getTendonForce(state) for m in muscles)


def stiffness_rows(path: Path, activation: float, prefixes=CHAIN_PREFIXES) -> list[dict]:
    """Per chain coordinate whose name starts with one of ``prefixes``: every chain muscle's
    summed dtau/dq (N m/rad) at ``activation``, the spring's stiffness on it and their difference
    (spring - muscles; negative: the joint buckles). A model without chain muscles is a
    ValueError."""
    osim = import_opensim()
    model = osim.Model(str(path))
    state = model.initSystem()
    muscles = [m for m in model.getMuscles() if m.getName().startswith(CHAIN_PREFIXES)]
    if not muscles:
        raise ValueError(
            f"{path}: no neck or tail muscles (names starting with {' or '.join(CHAIN_PREFIXES)})"
        )
    for m in muscles:
        m.setActivation(state, activation)
    springs = {}
    for force in model.getForceSet():
        spring = osim.SpringGeneralizedForce.safeDownCast(force)
        if spring is not None:
            springs[spring.get_coordinate()] = spring.getStiffness()
    rows = []
    for coordinate in model.getCoordinateSet():
        name = coordinate.getName()
        if coordinate.getMotionType() != osim.Coordinate.Rotational or not name.startswith(tuple(prefixes)):
            continue
        default = coordinate.getDefaultValue()
        forces = []
        for q in (default - STEP, default + STEP):
            coordinate.setValue(state, q)
            forces.append(_chain_force(model, state, muscles, coordinate))
        coordinate.setValue(state, default)
        slope = (forces[1] - forces[0]) / (2 * STEP)
        spring = springs.get(name, 0.0)
        rows.append({"coordinate": name, "muscles": slope, "spring": spring, "net": spring - slope})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", type=Path, help="built .osim models")
    ap.add_argument(
        "--activation", type=float, default=0.5, help="every chain muscle's activation (default 0.5)"
    )
    ap.add_argument(
        "--coordinates",
        action="append",
        default=[],
        help="coordinate name prefix (repeatable; default neck_ and tail_); the muscles are always "
        "every neck and tail muscle",
    )
    ap.add_argument("--out", type=Path, help="also write the tables to this Markdown file")
    args = ap.parse_args(argv)
    prefixes = tuple(args.coordinates) or CHAIN_PREFIXES

    def table(path: Path) -> list[str]:
        rows = stiffness_rows(path, args.activation, prefixes)
        unstable = sum(r["net"] < 0 for r in rows)
        return [
            f"{path}: at activation {args.activation:g} of every neck and tail muscle, "
            f"{unstable} of {len(rows)} coordinates buckle (their muscles' negative stiffness "
            "exceeds the spring)",
            "",
            "| coordinate | muscles' dtau/dq, N m/rad | spring, N m/rad | spring - muscles |",
            "|---|---|---|---|",
            *(
                f"| {r['coordinate']} | {r['muscles']:+.1f} | {r['spring']:.1f} | {r['net']:+.1f} |"
                for r in rows
            ),
        ]

    try:
        return model_tables("chain_stiffness.py", args.models, table, args.out)
    except ValueError as exc:
        print(f"chain_stiffness.py: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
