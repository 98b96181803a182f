"""How smooth a run is in its parameters under each integrator setting: a walker's controller and
initial-state values moved all at once by epsilon (1e-9) times each parameter's range, random
signs, and how far the nudged run strays from the unnudged one (centre of mass, m; the largest
state difference) and when each falls, with the model's error-controlled steps and with fixed steps.

    python3.11 benchmarks/integrator_smoothness.py RUN_DIR [RUN_DIR ...] [--duration 3]
        [--steps adaptive 0.0005 0.001] [--epsilon 1e-9] [--seeds 2]

RUN_DIR holds optimized.osim (with its .meta.json) and best.json, as every optimizer stage does.
``adaptive`` is the model's own physics (models/physics.yaml: error-controlled steps at its
accuracy, or its fixed step); a number is a fixed step in seconds. A search sees a run as a
function of its parameters: where a 1e-9 nudge moves the gait by millimetres within a second, the
objective is noise at the scale of any CMA-ES step and the best of a generation is an outlier.
Prints one block per run and setting; the wall time per simulated second is the unnudged run's
(it drifts with the machine's load, the distances do not).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from musclewalk.constants import FIXED_STEP_RANGE  # noqa: E402
from musclewalk.optimize.space import ParameterSpace  # noqa: E402  (pins numpy's CPU dispatch)
from musclewalk.sim.runner import Simulator  # noqa: E402
from musclewalk.sim.scenario import Scenario  # noqa: E402

sys.path.insert(0, str(REPO / "analysis"))
import numpy as np  # noqa: E402
from parameter_sensitivity import perturbed  # noqa: E402
from run_folders import require_run_folder  # noqa: E402

MARKS = (0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0)  # s at which the differences are printed


def trajectory(run: Path, values: dict, duration: float, speed: float, step):
    """(time, centre of mass, states, simulated time, wall s per simulated s) of one run."""
    sim = Simulator(run / "optimized.osim", fixed_step=None if step == "adaptive" else float(step))
    result = sim.run(Scenario(speed=speed, duration=duration), values, record=True)
    rec = result.recording
    wall = result.wall_time / result.simulated_time if result.simulated_time > 0 else float("nan")
    return np.array(rec.time), np.array(rec.com), np.array(rec.states), result.simulated_time, wall


def compare(run: Path, duration: float, steps, epsilon: float, seeds: int) -> None:
    best = json.loads((run / "best.json").read_text())
    params = best["parameters"]
    values = {**params["controller"], **params["initial_state"]}
    space = ParameterSpace.of_creature(str(run / "optimized.osim"))
    bounds = {e.name: (e.lower, e.upper) for e in space.entries if e.name in values}
    for step in steps:
        t0, com0, states0, falls0, wall0 = trajectory(run, values, duration, best["speed"], step)
        nudged = [
            trajectory(run, perturbed(values, bounds, epsilon, seed), duration, best["speed"], step)
            for seed in range(1, seeds + 1)
        ]
        label = "the model's steps" if step == "adaptive" else f"fixed {float(step) * 1e3:g} ms"
        print(
            f"{run} ({label}): walks {falls0:.2f} s of {duration:g} ({wall0:.2f} wall s per simulated s); "
            f"nudged by {epsilon:g}: " + ", ".join(f"{n[3]:.2f} s" for n in nudged),
            flush=True,
        )
        for _, com, states, _, _ in nudged:
            n = min(len(com0), len(com))
            d_com = np.linalg.norm(com[:n] - com0[:n], axis=1)
            d_state = np.max(np.abs(states[:n] - states0[:n]), axis=1)
            cells = []
            for mark in MARKS:
                i = int(np.searchsorted(t0[:n], mark))
                if i < n:
                    cells.append(f"{mark:g} s: {d_com[i]:.1e} m ({d_state[i]:.1e})")
            print("    centre of mass off (largest state difference) at " + ", ".join(cells), flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--steps", nargs="+", default=["adaptive", "0.0005", "0.001"])
    ap.add_argument("--epsilon", type=float, default=1e-9)
    ap.add_argument("--seeds", type=int, default=2)
    a = ap.parse_args(argv)
    for step in a.steps:
        if step == "adaptive":
            continue
        lo, hi = FIXED_STEP_RANGE
        try:
            in_range = lo <= float(step) <= hi
        except ValueError:
            in_range = False
        if not in_range:
            ap.error(f"--steps: {step!r} is neither 'adaptive' nor a fixed step in [{lo:g}, {hi:g}] s")
    for run in a.runs:
        require_run_folder(ap, run)
    for run in a.runs:
        compare(run, a.duration, a.steps, a.epsilon, a.seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
