"""Simulation speed of the committed walkers: wall seconds per simulated second of the closed loop
(controller in Python every 5 ms) against a replay of the same excitations by the engine alone.

    python3.11 benchmarks/simulation_speed.py [--runs DIR [DIR ...]] [--duration 10] [--rounds 3]

Each DIR is an optimization run with optimized.osim (+ optimized.meta.json) and best.json;
default: models/optimized/HumanLegs-walk-1.3 and models/optimized/Human-walk-1.3, simulated as
`musclewalk simulate` and the optimizer do (target speed of the run, termination rules on).

closed loop  Simulator.run with an observer that records the excitations u of every control
             step; minimum of wall / simulated time over --rounds interleaved rounds. "python" is
             the share of sensors + controller + observers + actuate in result.timing (sensors
             include the OpenSim reads of the state: body poses, contact and tendon forces).
replay       the recorded excitations as one PiecewiseConstantFunction per muscle (the value of
             control step k holds over [t_k, t_k+1)) in place of the PrescribedController's
             Constants, on a second engine of the same model, from the same initial state, in ONE
             Manager.integrate call. "ratio" = closed loop / replay.
steps/s, realizations/s
             integrator statistics from the OpenSim Manager's info log (cumulative since
             Manager.initialize, the last report of the run), taken in one extra round after the
             timed ones, so that logging does not slow the timed rounds.

The replay is not the same trajectory: one long integrate call does not stop at the control
switches (the closed loop stops at every 5 ms boundary), so the error control meets the steps in
the excitations inside a step, and an open-loop replay of a walker drifts away from the closed
loop ("replay dCOM": distance between the two final centres of mass).
"""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# musclewalk first: importing it pins numpy's CPU dispatch before numpy loads (musclewalk.cpu_dispatch)
import musclewalk  # noqa: E402, F401, I001
import numpy as np  # noqa: E402

from musclewalk.model.meta import load_meta, meta_path  # noqa: E402
from musclewalk.model.metadata import ModelMeta  # noqa: E402
from musclewalk.model.osim import CONTROLLER_NAME, write_atomic, xml_bytes  # noqa: E402
from musclewalk.model.vectors import parse_osim  # noqa: E402
from musclewalk.opensim_env import import_opensim  # noqa: E402
from musclewalk.sim.bridge import control_model_from_meta  # noqa: E402
from musclewalk.sim.engine import OpenSimEngine  # noqa: E402
from musclewalk.sim.parameters import ParameterError, check_parameter_file  # noqa: E402
from musclewalk.sim.runner import Simulator  # noqa: E402
from musclewalk.sim.scenario import Scenario, initial_coordinates  # noqa: E402

DEFAULT_RUNS = [REPO / "models/optimized/HumanLegs-walk-1.3", REPO / "models/optimized/Human-walk-1.3"]
PYTHON_PARTS = ("sensors", "controller", "observers", "actuate")


def machine() -> str:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = " ".join(f"{v:.2f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return (
        f"machine: {platform.node()}, {cpu}, {os.cpu_count()} CPUs, load average {load}\n"
        "note: the single-core speed of this VM drifts by up to 2x (and other processes "
        "share its cores); compare ratios within one run, not absolute times across runs"
    )


# ---------------------------------------------------------------------- integrator statistics
class IntegratorLog:
    """Capture the OpenSim Manager's info log during a block: the console copy of it goes to
    /dev/null (file descriptor 1 redirected), the statistics of the last integrate() call are
    parsed afterwards (steps, attempts, realizations; None when absent)."""

    def __enter__(self):
        self.osim = import_opensim()
        sys.stdout.flush()
        _c_flush()
        self.saved = os.dup(1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
        self.sink = self.osim.StringLogSink()
        self.osim.Logger.addSink(self.sink)
        self.osim.Logger.setLevelString("info")
        return self

    def __exit__(self, *exc):
        self.osim.Logger.setLevelString("warn")
        text = self.sink.getString()
        self.osim.Logger.removeSink(self.sink)
        _c_flush()
        os.dup2(self.saved, 1)
        os.close(self.saved)
        real = re.findall(r"number of realizations: (\d+)", text)
        steps = re.findall(r"number of steps taken / attempted: (\d+) / (\d+)", text)
        self.realizations = int(real[-1]) if real else None
        self.steps, self.attempts = (int(steps[-1][0]), int(steps[-1][1])) if steps else (None, None)
        return False


def _c_flush() -> None:
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):
        pass


# ---------------------------------------------------------------------- one walker
@dataclass
class Walker:
    name: str
    model: Path
    meta: ModelMeta
    params: dict
    speed: float
    sim: Simulator | None = None
    scenario: Scenario | None = None
    excitations: np.ndarray | None = None  # (K + 1, nm), metadata muscle order
    times: np.ndarray | None = None
    replay_engine: OpenSimEngine | None = None
    closed: list = field(default_factory=list)  # (wall / sim, result)
    replay: list = field(default_factory=list)  # (wall / sim, ok, final COM)
    same_excitations: bool = True

    def check_excitations(self, us: np.ndarray) -> None:
        """Every round must repeat the recorded closed loop bit for bit (the replay uses the
        first round's excitations)."""
        if not (us.shape == self.excitations.shape and np.array_equal(us, self.excitations)):
            self.same_excitations = False


def load_walker(run: Path) -> Walker:
    import json

    model, best = run / "optimized.osim", run / "best.json"
    for p in (model, meta_path(model), best):
        if not p.is_file():
            raise SystemExit(
                f"{p}: not found (--runs expects optimization run folders with "
                "optimized.osim, optimized.meta.json and best.json)"
            )
    meta = load_meta(model)
    try:
        params = check_parameter_file(
            best, meta, parse_osim(model), control_model_from_meta(meta, 0.005), model_source=str(model)
        )
    except ParameterError as exc:
        raise SystemExit(str(exc)) from None
    speed = float(json.loads(best.read_text()).get("speed", 1.3))
    # a unique label: the run folder's name, with the creature where the name lacks it
    label = run.name if run.name.startswith(meta.creature) else f"{meta.creature}/{run.name}"
    return Walker(label, model, meta, params, speed)


def load_walkers(runs) -> list[Walker]:
    """The walkers of ``runs``; where two names collide (e.g. the stage folders of the same name
    in two runs) those walkers are named by their path below the runs' common folder."""
    walkers = [load_walker(r) for r in runs]
    names = [w.name for w in walkers]
    if len(set(names)) == len(names):
        return walkers
    paths = [Path(r).resolve() for r in runs]
    if len(set(paths)) < len(paths):
        raise SystemExit("--runs: a run folder given twice")
    common = Path(os.path.commonpath(paths))
    return [
        dataclasses.replace(w, name=str(path.relative_to(common))) if names.count(w.name) > 1 else w
        for w, path in zip(walkers, paths)
    ]


def closed_loop(w: Walker):
    times, us = [], []

    def record(sensors, u, engine, raw):
        times.append(raw.t)
        us.append(np.array(u, float))

    result = w.sim.run(w.scenario, w.params, observers=[record])
    return result, np.array(times), np.array(us)


def initial_state(w: Walker, engine: OpenSimEngine):
    _, init = w.sim.split(w.params)
    coords, speeds = initial_coordinates(init, w.scenario.speed, w.meta.leg_length)
    return engine.initial_state(coords, speeds)


def replay_model(w: Walker, folder: Path) -> Path:
    """The model with the PrescribedController's Constants replaced by the recorded excitations
    (PiecewiseConstantFunction: value k over [t_k, t_k+1), the last value after the end)."""
    tree = parse_osim(w.model)
    pcs = tree.getroot().findall(f".//PrescribedController[@name='{CONTROLLER_NAME}']")
    if len(pcs) != 1:
        raise SystemExit(f"{w.model}: expected one PrescribedController '{CONTROLLER_NAME}'")
    pc = pcs[0]
    actuators = pc.findtext("socket_actuators").split()
    column = {m.name: i for i, m in enumerate(w.meta.muscles)}
    objects = pc.find("FunctionSet/objects")
    for child in list(objects):
        objects.remove(child)
    from lxml import etree

    x = " ".join(f"{t:.17g}" for t in w.times)
    for path in actuators:
        f = etree.SubElement(objects, "PiecewiseConstantFunction")
        etree.SubElement(f, "x").text = x
        etree.SubElement(f, "y").text = " ".join(
            f"{v:.17g}" for v in w.excitations[:, column[path.rsplit("/", 1)[-1]]]
        )
    path = folder / f"{w.name.replace('/', '-')}-replay.osim"
    write_atomic(path, xml_bytes(tree))
    return path


def replay(w: Walker, t_end: float):
    """(wall s, integrated to t_end, final COM) of the engine alone from the closed loop's initial
    state in one integrate call."""
    eng = w.replay_engine
    state = initial_state(w, eng)
    t0 = time.perf_counter()
    eng.start(state)
    ok = eng.advance(t_end)
    wall = time.perf_counter() - t0
    com = eng.model.calcMassCenterPosition(eng.state).to_numpy() if ok else None
    return wall, ok, com


# ---------------------------------------------------------------------- main
def walker_arguments(description: str, rounds: int) -> argparse.ArgumentParser:
    """The options of the benchmarks that simulate committed walkers: --runs, --duration, --rounds."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument(
        "--runs",
        nargs="+",
        type=Path,
        default=DEFAULT_RUNS,
        metavar="DIR",
        help="optimization run folders (optimized.osim + best.json); default: the "
        "committed HumanLegs and Human walkers",
    )
    ap.add_argument("--duration", type=float, default=10.0, help="simulated s per run (default 10)")
    ap.add_argument(
        "--rounds", type=int, default=rounds, help=f"timed rounds, interleaved (default {rounds})"
    )
    return ap


def parse_walker_arguments(ap: argparse.ArgumentParser, argv) -> argparse.Namespace:
    args = ap.parse_args(argv)
    if not (args.duration > 0) or args.rounds < 1:
        ap.error("--duration must be > 0 and --rounds >= 1")
    return args


def main(argv=None):
    ap = walker_arguments(__doc__.split("\n")[0], rounds=3)
    args = parse_walker_arguments(ap, argv)
    import_opensim()
    walkers = load_walkers(args.runs)
    print(machine(), flush=True)
    print(
        f"{args.duration:g} s per run; wall times: minimum of {args.rounds} interleaved "
        "round(s); integrator statistics: 1 more round with the OpenSim log on",
        flush=True,
    )
    tmp = Path(tempfile.mkdtemp(prefix="musclewalk-bench-"))
    try:
        run_rounds(walkers, args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_rounds(walkers, args, tmp: Path) -> None:
    for w in walkers:
        w.sim = Simulator(w.model, meta=w.meta)
        w.scenario = Scenario(speed=w.speed, duration=args.duration)

    for k in range(args.rounds):
        for w in walkers:
            result, times, us = closed_loop(w)
            if result.simulated_time <= 0:
                raise SystemExit(f"{w.name}: the closed loop ended at once ({result.reason})")
            w.closed.append((result.wall_time / result.simulated_time, result))
            if w.excitations is None:
                w.times, w.excitations = times, us
                w.replay_engine = OpenSimEngine(replay_model(w, tmp), w.meta)
            else:
                w.check_excitations(us)
            wall, ok, com = replay(w, result.simulated_time)
            w.replay.append((wall / result.simulated_time, ok, com))
            print(
                f"  round {k + 1}/{args.rounds} {w.name}: closed loop "
                f"{w.closed[-1][0]:.2f} s/s, replay {w.replay[-1][0]:.2f} s/s",
                file=sys.stderr,
                flush=True,
            )

    stats = {}
    for w in walkers:
        with IntegratorLog() as log_closed:
            result, _, us = closed_loop(w)
        w.check_excitations(us)
        with IntegratorLog() as log_replay:
            replay(w, result.simulated_time)
        stats[w.name] = (log_closed, log_replay)

    def per_s(n, t):
        return f"{n / t:.0f}" if n is not None and t > 0 else "n/a"

    head = (
        f"{'run':26s} {'musc':>4s} {'termination':>12s} {'sim s':>6s} | "
        f"{'closed s/s':>10s} {'steps/s':>7s} {'real./s':>7s} {'python':>6s} | "
        f"{'replay s/s':>10s} {'steps/s':>7s} {'real./s':>7s} | {'ratio':>5s} {'dCOM m':>7s}"
    )
    print(head)
    print("-" * len(head))
    details = []
    for w in walkers:
        best_closed, result = min(w.closed, key=lambda c: c[0])
        best_replay = min(r[0] for r in w.replay)
        ok, com = w.replay[0][1], w.replay[0][2]
        t = result.simulated_time
        timing = result.timing
        python = sum(timing[p] for p in PYTHON_PARTS) / sum(timing.values())
        lc, lr = stats[w.name]
        dcom = f"{np.linalg.norm(com - result.final_com):.1e}" if ok else "failed"
        print(
            f"{w.name:26s} {len(w.meta.muscles):4d} {result.reason or 'none':>12s} {t:6.2f} | "
            f"{best_closed:10.2f} {per_s(lc.steps, t):>7s} {per_s(lc.realizations, t):>7s} "
            f"{python:6.0%} | {best_replay:10.2f} {per_s(lr.steps, t):>7s} "
            f"{per_s(lr.realizations, t):>7s} | {best_closed / best_replay:5.2f} {dcom:>7s}"
        )
        per_step = " / ".join(
            f"{timing[p] / max(result.steps, 1) * 1e6:.0f}" for p in ("integrate",) + PYTHON_PARTS
        )
        details.append(
            f"{w.name}: per control step (us) integrate / sensors / controller / observers / "
            f"actuate {per_step}; steps taken / attempted: closed loop {lc.steps} / "
            f"{lc.attempts}, replay {lr.steps} / {lr.attempts}"
            + (
                ""
                if w.same_excitations
                else "; WARNING: the closed loop's excitations differed between rounds"
            )
        )
    print()
    for line in details:
        print(line)


if __name__ == "__main__":
    main()
