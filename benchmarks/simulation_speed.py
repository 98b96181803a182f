"""Simulation speed: wall seconds per simulated second with the full controller in the loop
versus the engine alone, per creature, on one core.

    python3.11 benchmarks/simulation_speed.py [--creatures HumanLegs Human] [--duration 0.6]
                                              [--rounds 3] [--params best.json]

"full": the closed loop (controller step every 5 ms, sensors read in bulk, excitations written).
"engine": same model, integrator, initial state and duration, one long Manager.integrate with
constant controls (each muscle's mean excitation of the closed-loop run). The ratio full/engine
is the cost of controlling from Python (integrator work also differs a little between a
time-varying and a constant excitation pattern).
Minimum over interleaved rounds (this VM's single-core speed drifts by up to 2x).
Without --params the default (unoptimized) controller is used; it falls after about 0.8 s, so
the default duration (0.4 s) stays below that.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from musclewalk.model.build import build_creature  # noqa: E402
from musclewalk.opensim_env import import_opensim  # noqa: E402
from musclewalk.sim.parameters import load_parameter_file  # noqa: E402
from musclewalk.sim.runner import Simulator  # noqa: E402
from musclewalk.sim.scenario import Scenario, initial_coordinates  # noqa: E402


def closed_loop(sim, scenario, params):
    total = []

    def accumulate(sensors, u, engine, raw):
        total.append(u)

    result = sim.run(scenario, params, observers=[accumulate])
    return result, np.mean(total, axis=0)


def engine_alone(sim, scenario, params, controls, duration):
    osim = import_opensim()
    eng = sim.engine
    _, init = sim.split(params)
    coords, speeds = initial_coordinates(init, scenario.speed, sim.meta["leg_length"])
    state = eng.initial_state(coords, speeds)
    eng.start(state, controls)
    t0 = time.perf_counter()
    ok = eng.advance(duration)
    wall = time.perf_counter() - t0
    return wall, ok


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--creatures", nargs="+", default=["HumanLegs", "Human"])
    ap.add_argument("--duration", type=float, default=0.4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--params", type=Path)
    ap.add_argument("--speed", type=float, default=1.3)
    args = ap.parse_args(argv)
    osim = import_opensim()
    params = load_parameter_file(args.params) if args.params else {}
    tmp = Path(tempfile.mkdtemp(prefix="musclewalk-bench-"))
    rows = []
    for name in args.creatures:
        path = tmp / f"{name}.osim"
        build_creature(name, None, path)
        sim = Simulator(path)
        scenario = Scenario(speed=args.speed, duration=args.duration, terminate=False)
        full, engine, breakdown = [], [], None
        for _ in range(args.rounds):
            result, controls = closed_loop(sim, scenario, params)
            full.append(result.wall_time / result.simulated_time)
            if breakdown is None or result.wall_time / result.simulated_time <= min(full):
                breakdown = {k: v / result.steps * 1e6 for k, v in result.timing.items()}
                sim_time = result.simulated_time
            wall, ok = engine_alone(sim, scenario, params, controls, sim_time)
            engine.append(wall / sim_time)
        rows.append((name, len(sim.meta["muscles"]), min(full), min(engine), breakdown))
    print(f"{'creature':10s} {'muscles':>7s} {'full s/s':>9s} {'engine s/s':>10s} {'ratio':>6s}   "
          "per control step (us): integrate / sensors / controller / actuate")
    for name, nm, f, e, b in rows:
        print(f"{name:10s} {nm:7d} {f:9.2f} {e:10.2f} {f / e:6.2f}   "
              f"{b['integrate']:.0f} / {b['sensors']:.0f} / {b['controller']:.0f} / {b['actuate']:.0f}")


if __name__ == "__main__":
    main()
