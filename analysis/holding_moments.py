"""How strongly each flexion joint's muscles hold what lies beyond it: for every coordinate whose
name contains "flexion" (hips, spine, neck and tail segments, arms), in the model's default pose,
the mass the joint carries (the bodies beyond it), the moment gravity puts on the joint when they
are tipped level in their default-pose shape (their weight times the distance of their centre of
mass from the joint), the muscles' largest moments either way (sum of F_max x moment arm, each
direction) and the weaker of the two as a multiple of that moment.

    musclewalk build LongNeck -o longneck.osim [--set upper_body.neck_holding=0.5]
    python3.11 analysis/holding_moments.py longneck.osim [MODEL.osim ...] [--out FILE.md]

(`upper_body.neck_holding=0.5` builds the neck-tail creatures as they were before the template's
neck muscles were sized by the load: 250 N x force_scale at every neck joint.) A ratio below 1
is a joint whose muscles cannot hold the chain beyond it out at all.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from run_folders import model_tables

import musclewalk  # noqa: F401  (pins numpy's CPU dispatch before numpy loads)
from musclewalk.analysis.gait import model_joints
from musclewalk.constants import GRAVITY
from musclewalk.model.kinematics import bodies_beyond
from musclewalk.opensim_env import import_opensim


def holding_rows(path: Path) -> list[dict]:
    osim = import_opensim()
    model = osim.Model(str(path))
    state = model.initSystem()
    model.realizePosition(state)
    bodies = {b.getName(): b for b in model.getBodySet()}
    joints = model_joints(model)
    links = [(parent.getName(), child.getName()) for _, parent, child in joints]
    rows = []
    for joint, _, child_frame in joints:
        child = child_frame.getName()
        if child not in bodies:
            continue
        distal = bodies_beyond(links, child)
        masses = np.array([bodies[b].getMass() for b in distal])
        coms = np.array(
            [
                bodies[b].findStationLocationInGround(state, bodies[b].getMassCenter()).to_numpy()
                for b in distal
            ]
        )
        centre = joint.getChildFrame().getPositionInGround(state).to_numpy()
        load = masses.sum() * GRAVITY * float(np.linalg.norm(masses @ coms / masses.sum() - centre))
        for k in range(joint.numCoordinates()):
            coordinate = joint.get_coordinates(k)
            if "flexion" not in coordinate.getName():
                continue
            moments = [
                m.getMaxIsometricForce() * m.computeMomentArm(state, coordinate) for m in model.getMuscles()
            ]
            positive = sum(x for x in moments if x > 0)
            negative = -sum(x for x in moments if x < 0)
            rows.append(
                {
                    "coordinate": coordinate.getName(),
                    "mass": float(masses.sum()),
                    "load": load,
                    "positive": positive,
                    "negative": negative,
                    "ratio": min(positive, negative) / load,
                }
            )
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+", type=Path, help="built .osim models")
    ap.add_argument("--out", type=Path, help="also write the tables to this Markdown file")
    args = ap.parse_args(argv)

    def table(path: Path) -> list[str]:
        return [
            f"{path}",
            "",
            "| coordinate | mass carried, kg | held out horizontally, N m | muscles +, N m | muscles −, N m "
            "| weaker / held out |",
            "|---|---|---|---|---|---|",
            *(
                f"| {r['coordinate']} | {r['mass']:.2f} | {r['load']:.1f} | {r['positive']:.1f} | "
                f"{r['negative']:.1f} | {r['ratio']:.2f} |"
                for r in holding_rows(path)
            ),
        ]

    return model_tables("holding_moments.py", args.models, table, args.out)


if __name__ == "__main__":
    sys.exit(main())
