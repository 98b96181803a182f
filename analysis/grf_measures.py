"""The objective's measures that read the vertical GRF, replayed on recorded simulations: for each
`musclewalk simulate` folder (e.g. the `*-sim` folder that `analysis/human_targets.py --work DIR`
keeps), the time averages over t_max of `first_grf_peak_excess` (each landing's raw peak above
1.3 BW), `cycle_first_grf_peak_excess` (the first peak of each foot's mean cycle at its 2 % points,
as `musclewalk compare` reads it), `cycle_second_grf_peak_outside` (the mean cycle's second peak,
35-62 %, outside 0.95-1.3 BW), `vertical_grf_excess` (above 1.4 BW) and `cycle_cadence_excess`
(the cadence of the cycles after 2 s outside 100-130 steps per minute), beside the first and
second peaks of the mean cycle per side and the cadence (from the folder's
`*-compare/comparison.json` next to it, when there is one). Each measure runs as in an
optimization, one control step per recorded GRF sample.

    python3.11 analysis/grf_measures.py SIM_DIR [SIM_DIR ...] [--t-max 10]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from musclewalk.analysis.gait import from_simulation
from musclewalk.measures.gait import (
    CycleCadenceExcess,
    CycleFirstGrfPeakExcess,
    CycleSecondGrfPeakOutside,
    FirstGrfPeakExcess,
    VerticalGrfExcess,
)
from musclewalk.model.metadata import MILLARD_MUSCLES

MEASURES = (
    FirstGrfPeakExcess,
    CycleFirstGrfPeakExcess,
    CycleSecondGrfPeakOutside,
    VerticalGrfExcess,
    CycleCadenceExcess,
)


def replay(sim_dir: Path, t_max: float) -> dict:
    trial = from_simulation(sim_dir, kinetics=False)
    t = np.asarray(trial.grf_time, float)
    dt = float(np.median(np.diff(t)))
    context = SimpleNamespace(body_mass=trial.body_mass, dt=dt, muscle_model=MILLARD_MUSCLES, shared={})
    measures = [cls(context) for cls in MEASURES]
    totals = np.zeros(len(measures))
    grf = np.zeros((2, 3))
    for k, tk in enumerate(t):
        grf[0, 1], grf[1, 1] = trial.vgrf["r"][k], trial.vgrf["l"][k]
        sample = SimpleNamespace(t=float(tk), sensors=SimpleNamespace(foot_grf=grf))
        totals += [m.value(sample) * dt for m in measures]
    return {m.name: float(total / t_max) for m, total in zip(measures, totals)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sims", nargs="+", type=Path, help="musclewalk simulate output folders")
    parser.add_argument("--t-max", type=float, default=10.0, help="the objective's t_max, s (default 10)")
    args = parser.parse_args(argv)
    names = [m.name for m in MEASURES]
    compared = " | vGRF peaks of the mean cycle, first; second, BW (r / l) | cadence, steps/min |"
    print("| simulation | " + " | ".join(names) + compared)
    print("|---" * (len(names) + 3) + "|")
    for sim in args.sims:
        values = replay(sim, args.t_max)
        peaks = cadence = "–"
        for path in sorted(sim.parent.glob("*-compare/comparison.json")):
            comparison = json.loads(path.read_text())
            vgrf = comparison["vgrf"]
            peaks = (
                f"{vgrf['r']['peak1_bw']:.2f} / {vgrf['l']['peak1_bw']:.2f}; "
                f"{vgrf['r']['peak2_bw']:.2f} / {vgrf['l']['peak2_bw']:.2f}"
            )
            cadence = f"{comparison['spatiotemporal']['cadence_steps_per_min']:.1f}"
        print(f"| {sim} | " + " | ".join(f"{values[n]:.3f}" for n in names) + f" | {peaks} | {cadence} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
