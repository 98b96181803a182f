"""How far the ankle plantarflexes at push-off, stride by stride, from the controller's leg states:
its peak dorsiflexion in stance, its angle when lift-off begins and when the foot leaves the
ground (lift-off to swing), and the least angle in the 0.1 s after that and in the whole swing.

    musclewalk simulate RUN/optimized.osim --params RUN/best.json --duration 10 --out s/
    python3.11 analysis/ankle_push_off.py s/ [s2/ ...] [--after 2] [--out FILE.md]

A person's ankle goes from about +10 deg of dorsiflexion late in stance to about -15 to -20 deg
when the foot leaves the ground (the normative curve's toe-off at about 62 % of the cycle); an
ankle that leaves the ground near neutral has too little push-off to show in early swing,
whatever the swing foot's control does (issue 14, docs/human-like-gait.md). Strides are counted
from each touch-down (the leg entering stance) after --after seconds to the next. Reads files
only (kinematics.mot and controller.csv).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from run_folders import emit

import musclewalk  # noqa: F401  (pins numpy's CPU dispatch before numpy loads)
from musclewalk.sim.outputs import read_storage

EARLY_SWING = 0.1  # s after the foot leaves the ground
MEASURES = (
    ("stance_peak", "peak dorsiflexion in stance"),
    ("lift_off_start", "at the start of lift-off"),
    ("ground_left", "when the foot leaves the ground"),
    ("early_swing_least", f"least within {EARLY_SWING:g} s after"),
    ("swing_least", "least in swing"),
)


def push_off_strides(
    time: np.ndarray, states: np.ndarray, ankle: np.ndarray, after: float = 2.0
) -> list[dict]:
    """One dict per complete stride of one leg (touch-down to touch-down, both after ``after``) with
    its MEASURES in the units of ``ankle``; ``states`` are the controller's leg-state names."""
    entered = {
        name: [i for i in range(1, len(states)) if states[i] == name != states[i - 1] and time[i] >= after]
        for name in ("stance", "lift_off", "swing")
    }
    strikes = entered["stance"]
    rows = []
    for start, end in zip(strikes, strikes[1:]):
        lift = [i for i in entered["lift_off"] if start < i < end]
        swing = [i for i in entered["swing"] if start < i < end]
        if not lift or not swing:
            continue
        early_end = np.searchsorted(time, time[swing[0]] + EARLY_SWING, side="right")
        rows.append(
            {
                "stance_peak": float(ankle[start : lift[0]].max()),
                "lift_off_start": float(ankle[lift[0]]),
                "ground_left": float(ankle[swing[0]]),
                "early_swing_least": float(ankle[swing[0] : max(early_end, swing[0] + 1)].min()),
                "swing_least": float(ankle[swing[0] : end].min()),
            }
        )
    return rows


def sides(sim_dir: Path, after: float) -> dict[str, list[dict]]:
    """Per leg ("r", "l"): push_off_strides of the folder's ankle angle (deg) on the controller's
    time base."""
    kinematics = read_storage(sim_dir / "kinematics.mot")
    if not kinematics.attrs.get("degrees"):
        raise ValueError(f"{sim_dir / 'kinematics.mot'}: expected angles in degrees (inDegrees=yes)")
    controller = pd.read_csv(sim_dir / "controller.csv")
    time = controller["t"].to_numpy()
    out = {}
    for side in "rl":
        column = f"ankle_angle_{side}"
        if column not in kinematics.columns:
            raise KeyError(f"{sim_dir / 'kinematics.mot'}: no column {column}")
        ankle = np.interp(time, kinematics["time"].to_numpy(), kinematics[column].to_numpy())
        out[side] = push_off_strides(time, controller[f"state_{side}"].to_numpy(), ankle, after)
    return out


def table(sim_dir: Path, by_side: dict[str, list[dict]], after: float) -> str:
    counts = " / ".join(str(len(by_side[s])) for s in "rl")
    lines = [
        f"{sim_dir}: strides after {after:g} s (right / left): {counts}",
        "",
        "| ankle dorsiflexion, deg, mean over strides | right | left |",
        "|---|---|---|",
    ]
    for key, label in MEASURES:
        cells = [f"{np.mean([r[key] for r in by_side[s]]):+.1f}" if by_side[s] else "—" for s in "rl"]
        lines.append(f"| {label} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("simulations", type=Path, nargs="+", help="musclewalk simulate folders")
    ap.add_argument("--after", type=float, default=2.0, help="ignore strides before this time, s (default 2)")
    ap.add_argument("--out", type=Path, help="also write the tables to this Markdown file")
    args = ap.parse_args(argv)
    texts = []
    for sim_dir in args.simulations:
        try:
            texts.append(table(sim_dir, sides(sim_dir, args.after), args.after))
        except (OSError, ValueError, KeyError) as e:
            print(f"ankle_push_off.py: error: {e}", file=sys.stderr)
            return 1
    emit("\n".join(texts), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
