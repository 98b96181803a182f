"""Optimizer throughput: evaluations per minute and wall time per generation of a real run, by
default one generation of the committed Human warm start with 2 worker processes.

    python3.11 benchmarks/optimization_throughput.py [--creature Human]
        [--init models/optimized/Human-walk-1.3/best.json] [--generations 1] [--popsize 20]
        [--duration 10] [--sigma 0.3] [--workers 2] [--seed 1] [--serial] [--model X.osim]

The run is what `musclewalk optimize Human --init ... --sigma 0.3 --workers 2 --generations 1`
does (musclewalk.optimize.driver.Optimization in a new, empty run folder under /tmp; the template
model built fresh into its model/ folder unless --model names a built .osim), with the speed of
the --init file. The first generation includes starting the worker processes (spawn, imports,
parsing the model): about 1 CPU s per worker, in parallel.

Per generation it prints the wall time, evaluations/min, the simulated time of its evaluations
(fallers are cheap, walkers cost the full t_max) and the workers' utilization (sum of the
evaluations' wall times over workers x generation wall time: the tail of a generation, when fewer
candidates than workers are left, idles a worker). --serial repeats the same generations (same
seed, same candidates) with one worker for the speed-up. Finally the per-evaluation overhead in
this process: writing the candidate .osim and loading it in OpenSim.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# musclewalk first: importing it pins numpy's CPU dispatch before numpy loads (musclewalk.cpu_dispatch)
import musclewalk  # noqa: E402, F401, I001
import numpy as np  # noqa: E402

from musclewalk.model.build import build_creature  # noqa: E402
from musclewalk.optimize import driver  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simulation_speed import machine  # noqa: E402

from musclewalk.optimize.driver import MODEL_DIR, Optimization, OptimizationError, Settings  # noqa: E402

DEFAULT_INIT = REPO / "models/optimized/Human-walk-1.3/best.json"


class RecordingEvaluator:
    """The optimizer's evaluator, keeping every generation's results for the report."""

    def __init__(self, inner, generations: list):
        self.inner, self.generations = inner, generations

    def map(self, task, values):
        results = self.inner.map(task, values)
        self.generations.append(results)
        return results

    def close(self):
        self.inner.close()


def run_generations(settings: Settings, out: Path) -> tuple:
    """(optimizer state, per generation the list of evaluation results)."""
    recorded: list = []
    make = driver.make_evaluator
    driver.make_evaluator = lambda *a, **k: RecordingEvaluator(make(*a, **k), recorded)
    try:
        opt = Optimization(settings, out, progress=False)
        state = opt.run()
    except OptimizationError as exc:
        raise SystemExit(str(exc)) from None
    finally:
        driver.make_evaluator = make
    return opt, state, recorded


def report(label: str, state, recorded: list, workers: int) -> list[float]:
    walls = []
    for row, results in zip(state.history, recorded):
        wall = row["generation_wall"]
        walls.append(wall)
        n = len(results)
        simulated = sum(r.simulated_time for r in results)
        full = sum(not r.terminated for r in results)
        failed = sum(r.error is not None for r in results)
        busy = sum(r.wall_time for r in results) / (workers * wall)
        reasons: dict = {}
        for r in results:
            if r.terminated:
                reasons[r.reason] = reasons.get(r.reason, 0) + 1
        ended = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())) or "none"
        print(
            f"  {label} generation {row['generation']}: {wall:7.1f} s, "
            f"{n / wall * 60:6.1f} evaluations/min; {n} evaluations simulated {simulated:.1f} s "
            f"({full} ran the full t_max; terminated: {ended}; failed {failed}); "
            f"worker utilization {busy:.0%}; best objective {row['generation_best']:.3f}"
        )
    total = sum(walls)
    n = sum(len(r) for r in recorded)
    print(
        f"  {label}: {n} evaluations in {total:.1f} s = {n / total * 60:.1f} evaluations/min, "
        f"{total / len(walls):.1f} s wall per generation"
    )
    return walls


def overhead(model: str, values, repeats: int = 3) -> tuple[float, float]:
    """Median s of writing one candidate .osim and of loading it (Simulator), in this process."""
    from musclewalk.optimize.evaluate import Evaluator
    from musclewalk.optimize.space import ParameterSpace
    from musclewalk.sim.runner import Simulator

    ev = Evaluator(model)
    try:
        _, model_values = ParameterSpace.split(values)
        write, load = [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            path, meta = ev.candidate_model(model_values)
            t1 = time.perf_counter()
            Simulator(path, meta=meta)
            t2 = time.perf_counter()
            write.append(t1 - t0)
            load.append(t2 - t1)
        return float(np.median(write)), float(np.median(load))
    finally:
        shutil.rmtree(ev.tmpdir, ignore_errors=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--creature", default="Human", help="preset built fresh (default Human)")
    ap.add_argument("--model", type=Path, help="a built .osim instead of building --creature")
    ap.add_argument(
        "--init",
        type=Path,
        default=DEFAULT_INIT,
        help="warm start best.json (default: the committed Human-walk-1.3); 'none' for the template defaults",
    )
    ap.add_argument("--speed", type=float, help="target speed (default: the --init file's, or 1.3)")
    ap.add_argument("--generations", type=int, default=1)
    ap.add_argument("--popsize", type=int, default=20)
    ap.add_argument("--duration", type=float, default=10.0, help="t_max of an evaluation, s")
    ap.add_argument("--sigma", type=float, default=0.3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--serial", action="store_true", help="also run the same generations with one worker (speed-up)"
    )
    args = ap.parse_args(argv)
    init = None if str(args.init).lower() == "none" else args.init
    if init is not None and not init.is_file():
        raise SystemExit(f"{init}: --init file not found")
    speed = args.speed
    if speed is None:
        speed = float(json.loads(init.read_text()).get("speed", 1.3)) if init else 1.3
    print(machine(), flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="musclewalk-bench-"))
    try:
        modes = [("process", args.workers)] + ([("serial", 1)] if args.serial else [])
        walls = {}
        for evaluator, workers in modes:
            out = tmp / f"run-{evaluator}"
            if args.model:
                model = args.model
            else:
                model = out / MODEL_DIR / f"{args.creature}.osim"
                t0 = time.perf_counter()
                build_creature(args.creature, None, model)
                built = time.perf_counter() - t0
            settings = Settings(
                model=str(model),
                speed=speed,
                duration=args.duration,
                generations=args.generations,
                seed=args.seed,
                workers=workers,
                evaluator=evaluator,
                popsize=args.popsize,
                sigma=args.sigma,
                init=str(init) if init else None,
                command="benchmarks/optimization_throughput.py "
                + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:])),
            )
            try:
                settings.validate()
            except OptimizationError as exc:
                raise SystemExit(str(exc)) from None
            if evaluator == modes[0][0]:
                print(
                    f"{Path(model).stem}: population {args.popsize}, t_max {args.duration:g} s, "
                    f"speed {speed:g} m/s, sigma {args.sigma:g}, seed {args.seed}, warm start "
                    f"{init or 'none'}; model "
                    + (str(model) if args.model else f"built fresh ({built:.1f} s)"),
                    flush=True,
                )
            opt, state, recorded = run_generations(settings, out)
            label = f"{workers} worker{'s' if workers > 1 else ''}"
            walls[evaluator] = report(label, state, recorded, workers)
        if args.serial:
            speedup = sum(walls["serial"]) / sum(walls["process"])
            print(f"  speed-up {args.workers} workers over 1: {speedup:.2f}x")
        write, load = overhead(settings.model, opt.space.values(state.best_x))
        print(
            f"  per-evaluation overhead (this process, median of 3): write candidate .osim "
            f"{write:.2f} s, load it (Simulator) {load:.2f} s"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
