"""Evaluation throughput of the optimizer with 1 and 2 worker processes, and where the time of
one generation goes.

    python3.11 benchmarks/optimization_throughput.py [--creature HumanLegs] [--duration 2]
                                                     [--params best.json]

One generation of 20 candidates drawn around the start point (sigma 1 in the normalized space,
fixed seed) is evaluated serially and with a 2-process pool; per evaluation the time is split
into writing + loading the candidate model, simulation and objective bookkeeping.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from musclewalk.model.build import build_creature  # noqa: E402
from musclewalk.model.meta import load_meta  # noqa: E402
from musclewalk.optimize.evaluate import EvaluationTask, Evaluator  # noqa: E402
from musclewalk.optimize.evaluators import make_evaluator  # noqa: E402
from musclewalk.optimize.space import ParameterSpace  # noqa: E402
from musclewalk.sim.bridge import control_model_from_meta  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--creature", default="HumanLegs")
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--speed", type=float, default=1.3)
    ap.add_argument("--params", type=Path, help="start point (best.json); default: template defaults")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="musclewalk-bench-"))
    model = tmp / f"{args.creature}.osim"
    build_creature(args.creature, None, model)
    meta = load_meta(model)
    space = ParameterSpace(meta, control_model_from_meta(meta, 0.005))
    x0 = np.zeros(len(space))
    if args.params:
        data = json.loads(args.params.read_text())
        x0 = space.x_from_values(space.flatten(data.get("parameters", data)))
    rng = np.random.default_rng(0)
    X = [np.clip(x0 + rng.normal(size=len(space)), space.lower_x, space.upper_x) for _ in range(20)]
    values = [space.values(x) for x in X]
    task = EvaluationTask(str(model), args.speed, args.duration)

    ev = Evaluator(str(model))
    parts = {"write candidate .osim": 0.0, "load model + simulate + objective": 0.0}
    sim_time = 0.0
    t0 = time.perf_counter()
    for v in values:
        a = time.perf_counter()
        sim_values, model_values = ParameterSpace.split(v)
        ev.candidate_model(model_values)
        b = time.perf_counter()
        r = ev.evaluate(task, v)
        parts["write candidate .osim"] += b - a
        parts["load model + simulate + objective"] += r.wall_time
        sim_time += r.simulated_time
    serial = time.perf_counter() - t0
    pool = make_evaluator("process", 2)
    pool.map(task, values[:2])             # warm the workers (import + model load)
    t0 = time.perf_counter()
    pool.map(task, values)
    parallel = time.perf_counter() - t0
    pool.close()
    print(f"{args.creature}: 20 evaluations, t_max {args.duration} s, {sim_time:.1f} s simulated "
          f"in total")
    print(f"  1 worker : {serial:6.1f} s  ({20 / serial * 60:6.1f} evaluations/min)")
    print(f"  2 workers: {parallel:6.1f} s  ({20 / parallel * 60:6.1f} evaluations/min)  "
          f"speed-up {serial / parallel:.2f}x")
    print("  serial generation, where the time goes: " + ", ".join(
        f"{k} {v:.1f} s" for k, v in parts.items()))


if __name__ == "__main__":
    main()
