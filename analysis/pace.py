"""A walker's pace against the dynamically similar one: for `musclewalk simulate` folders, the
mean centre-of-mass speed after --after s, the steps a minute (touch-downs as either leg's FSM
state entering stance in controller.csv), the step length in hip heights (the model's leg_length),
and what Alexander's (1976) dynamic similarity gives a walker of that hip height at the target
speed (musclewalk.measures.gait.dynamically_similar_step_frequency, the step-frequency measure's).

    musclewalk simulate RUN/optimized.osim --params RUN/best.json --speed 1.5 --duration 10 --out s/
    python3.11 analysis/pace.py s/ [s2/ ...] [--after 2] [--out FILE.md]

A walker below its target speed either takes short steps or steps too slowly; the similar pace
says which (docs/getting-creatures-to-walk.md, *The bird-like walkers' pace*).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from run_folders import emit

import musclewalk  # noqa: F401  (pins numpy's CPU dispatch before numpy loads)
from musclewalk.measures.gait import dynamically_similar_step_frequency
from musclewalk.model.meta import load_meta

STANCE = "stance"


def touchdowns(controller: pd.DataFrame, after: float) -> np.ndarray:
    """Sorted times after ``after`` at which either leg's FSM state turns to stance."""
    times = []
    for side in ("r", "l"):
        stance = (controller[f"state_{side}"].astype(str) == STANCE).to_numpy()
        starts = np.flatnonzero(stance[1:] & ~stance[:-1]) + 1
        times.extend(controller["t"].to_numpy()[starts])
    times = np.sort(np.asarray(times, dtype=float))
    return times[times > after]


def pace(sim: Path, after: float) -> dict:
    """The pace of one simulation folder (module doc); steps and step length NaN with fewer than
    two touch-downs after ``after``."""
    summary = json.loads((sim / "summary.json").read_text())
    controller = pd.read_csv(sim / "controller.csv")
    hip_height = load_meta(Path(summary["model"])).leg_length
    target = float(controller["target_speed"].iloc[0])
    speed = float(controller.loc[controller["t"] > after, "com_forward_speed"].mean())
    steps = touchdowns(controller, after)
    per_minute = (len(steps) - 1) / (steps[-1] - steps[0]) * 60.0 if len(steps) > 1 else float("nan")
    similar = dynamically_similar_step_frequency(target, hip_height) * 60.0
    return {
        "sim": str(sim),
        "simulated_time": float(controller["t"].iloc[-1]),
        "target_speed": target,
        "speed": speed,
        "hip_height": hip_height,
        "steps_per_minute": per_minute,
        "step_hip_heights": speed * 60.0 / per_minute / hip_height,
        "similar_steps_per_minute": similar,
        "similar_step_hip_heights": target * 60.0 / similar / hip_height,
    }


def markdown(rows: list[dict], after: float) -> str:
    lines = [
        f"After {after:g} s of each simulation; similar: Alexander's dynamic similarity at the target speed",
        "",
        "| simulation | simulated, s | speed (target), m/s | steps / min | step, hip heights | "
        "similar: steps / min | similar: step, hip heights |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['sim']} | {r['simulated_time']:.2f} | {r['speed']:.2f} ({r['target_speed']:g}) | "
            f"{r['steps_per_minute']:.0f} | {r['step_hip_heights']:.2f} | "
            f"{r['similar_steps_per_minute']:.0f} | {r['similar_step_hip_heights']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sims", nargs="+", type=Path, help="`musclewalk simulate` folders")
    ap.add_argument("--after", type=float, default=2.0, help="s of start-up left out (default 2)")
    ap.add_argument("--out", type=Path, help="also write the table to this file")
    args = ap.parse_args(argv)
    for sim in args.sims:
        for name in ("summary.json", "controller.csv"):
            if not (sim / name).is_file():
                ap.error(f"{sim / name}: not found (a `musclewalk simulate` folder)")
    emit(markdown([pace(sim, args.after) for sim in args.sims], args.after), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
