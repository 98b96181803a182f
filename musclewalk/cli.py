"""Command line interface: ``musclewalk <command> ...``."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import __version__


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def _cmd_creatures(args):
    from .model.template import list_creatures
    import yaml
    for name, path in list_creatures().items():
        data = yaml.safe_load(path.read_text()) or {}
        parts = ", ".join(f"{p}={v.get('template')}" for p, v in (data.get("parts") or {}).items())
        print(f"{name:10s} {parts}   ({path})")


def _cmd_build(args):
    from .model.build import build_creature
    from .model.template import parse_overrides
    spec, meta, report = build_creature(args.creature, parse_overrides(args.set), args.out,
                                        validate=not args.no_validate)
    counts = {k: len(meta[k]) for k in ("routing", "properties", "passive")}
    print(f"{spec.name}: {len(spec.bodies)} bodies, {spec.dof_count + 6} DOFs "
          f"({spec.dof_count} joint + 6 root), {len(spec.muscles)} muscles, "
          f"{spec.total_mass:.1f} kg; free parameters: routing {counts['routing']}, "
          f"muscle properties {counts['properties']}, passive gains {counts['passive']}")
    print(f"wrote {args.out} and its metadata")
    if args.picture:
        from .model.render import render_model
        render_model(args.out, args.picture)
        print(f"wrote {args.picture}")


def _cmd_render(args):
    from .model.render import render_model
    render_model(args.model, args.out)
    print(f"wrote {args.out}")


def _cmd_info(args):
    from .model.meta import load_meta
    from .model.vectors import ModelVectors
    meta = load_meta(args.model)
    mv = ModelVectors(meta)
    print(f"{meta['creature']}: {len(meta['bodies'])} bodies, {len(meta['muscles'])} muscles, "
          f"{meta['total_mass']:.1f} kg, leg length {meta['leg_length']:.3f} m")
    for kind, n in mv.counts().items():
        print(f"  {kind:10s} {n:4d} free parameters")
    if args.verbose:
        for m in meta["muscles"]:
            print(f"  {m['name']:28s} delay {m['delay'] * 1000:4.0f} ms  roles {','.join(m['roles'])}")


def _cmd_simulate(args):
    import json
    import math
    from .sim.outputs import write_outputs
    from .sim.parameters import load_parameter_file
    from .sim.runner import Simulator
    from .sim.scenario import HeadingPath, Push, Scenario, random_pushes
    if args.duration <= 0:
        raise UsageError(f"--duration: must be positive, got {args.duration}")
    if args.speed <= 0:
        raise UsageError(f"--speed: must be positive, got {args.speed}")
    params = load_parameter_file(args.params) if args.params else {}
    pushes = []
    for spec in args.push:
        try:
            start, fx, fz = (float(v) for v in spec.split(","))
        except ValueError:
            raise UsageError(f"--push: expected START,FX,FZ (s, N, N), got {spec!r}") from None
        pushes.append(Push(start, (fx, 0.0, fz)))
    if args.random_pushes:
        pushes += random_pushes(args.random_pushes, args.push_magnitude, args.seed)
    heading = HeadingPath(initial=math.radians(args.heading), turn_rate=math.radians(args.turn_rate),
                          seed=args.seed, duration=args.duration)
    scenario = Scenario(speed=args.speed, duration=args.duration, heading=heading, pushes=pushes,
                        control_interval=args.control_interval, terminate=not args.no_terminate)
    scenario.validate()
    terrain = None
    if args.terrain_slope is not None:
        from .sim.terrain import RampTerrain
        terrain = RampTerrain(args.terrain_slope, seed=args.seed,
                              length=args.speed * args.duration * 1.5 + 2.0)
    sim = Simulator(args.model, control_interval=args.control_interval, terrain=terrain)
    sim.split(params, source=str(args.params))       # bad parameters fail before simulating
    result = sim.run(scenario, params, record=True)
    write_outputs(args.out, sim, result, scenario,
                  {"parameters": str(args.params) if args.params else "defaults",
                   "pushes": [p.__dict__ for p in pushes], "heading_deg": args.heading,
                   "turn_rate_deg_s": args.turn_rate, "seed": args.seed,
                   "terrain_max_slope_deg": args.terrain_slope})
    s = result.summary(scenario)
    end = (f"terminated by {s['termination_reason']} at {s['simulated_time']:.2f} s"
           if s["terminated"] else f"ran the full {s['simulated_time']:.2f} s")
    print(f"{sim.meta['creature']}: {end}; distance {s['distance']:.2f} m, mean forward speed "
          f"{s['mean_forward_speed']:.2f} m/s; wall {s['wall_time']:.1f} s; wrote {args.out}")


def _cmd_optimize(args):
    import shlex
    from .model.build import build_creature
    from .optimize.driver import Optimization, Settings
    if args.speed <= 0:
        raise UsageError(f"--speed: must be positive, got {args.speed}")
    if args.duration <= 0:
        raise UsageError(f"--duration: must be positive, got {args.duration}")
    out = args.out
    model = Path(args.creature)
    if args.resume:
        settings = Settings(model="", speed=args.speed, generations=args.generations or 0)
    else:
        if model.suffix != ".osim":
            model = out / "model" / f"{args.creature}.osim"
            if not model.exists():
                build_creature(args.creature, None, model)
        elif not model.exists():
            raise UsageError(f"{model}: model file not found")
        if args.scale_passive:
            model = _scaled_passive_model(model, out, args.scale_passive)
        settings = Settings(
            model=str(model), speed=args.speed, duration=args.duration,
            generations=args.generations or 100, seed=args.seed, workers=args.workers,
            evaluator=args.evaluator, scheduler=args.scheduler, init=args.init,
            init_other_creature=args.init_from_other_creature, sigma=args.sigma,
            extra_generations=args.extra_generations, stagnation=args.stagnation,
            timeout=args.eval_timeout or max(30.0, 6.0 * args.duration),
            command="musclewalk " + " ".join(shlex.quote(a) for a in sys.argv[1:]))
    opt = Optimization(settings, out, resume=args.resume, progress=not args.quiet)
    print(f"{opt.meta['creature']}: {len(opt.space)} parameters "
          + ", ".join(f"{k} {v}" for k, v in opt.space.group_counts().items()), flush=True)
    state = opt.run()
    r = state.best_result or {}
    print(f"best objective {state.best_score:.3f} at generation {state.best_generation} "
          f"(simulated {r.get('simulated_time', 0):.2f} s, "
          f"{'terminated: ' + str(r.get('reason')) if r.get('terminated') else 'no termination'}); "
          f"wrote {out}")


def _scaled_passive_model(model: Path, out: Path, specs: list[str]) -> Path:
    """OUT/model/<model> with passive-gain bounds scaled (--scale-passive): the run's own copy, so
    the source model is untouched and --resume finds the scaled metadata."""
    from .model.meta import load_meta, meta_path, scale_passive_bounds, write_meta
    from .model.osim import write_atomic
    from .optimize.driver import CHECKPOINT
    factors = {}
    for spec in specs:
        name, _, value = spec.partition("=")
        try:
            factors[name.strip()] = float(value)
        except ValueError:
            raise UsageError(f"--scale-passive: expected NAME=FACTOR, got {spec!r}") from None
    if (out / CHECKPOINT).exists():
        return model        # the optimizer refuses to overwrite the run; leave it untouched
    try:
        meta = load_meta(model)
        if meta.get("passive_scale") == factors and model.parent.resolve() == (out / "model").resolve():
            return model    # scaled by an earlier start of this run that stopped before generation 1
        scaled = scale_passive_bounds(meta, factors)
    except ValueError as exc:
        raise UsageError(f"--scale-passive: {meta_path(model)}: {exc}") from None
    target = out / "model" / model.name
    if target.resolve() != model.resolve():
        write_atomic(target, model.read_bytes())
    write_meta(meta_path(target), scaled)
    return target


def _time_window(text: str) -> tuple:
    try:
        start, end = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected START,END in s, got {text!r}") from None
    if not 0 <= start < end:
        raise argparse.ArgumentTypeError(f"expected 0 <= START < END, got {text!r}")
    return start, end


def _cmd_analyze(args):
    from .analysis.summary import write_summary
    result = write_summary(args.simulation, args.out)
    if args.picture:
        from .analysis.filmstrip import render_filmstrip
        render_filmstrip(args.simulation, args.picture, every=args.every, window=args.window)
    cot = result["cost_of_transport_J_per_kg_m"]
    freq = result["stride_frequency_Hz"]
    print(f"{result['creature']}: {result['simulated_time']:.2f} s, distance "
          f"{result['distance']:.2f} m, speed {result['mean_forward_speed']:.2f} m/s, "
          f"termination {result['termination_reason'] or 'none'}, cost of transport "
          f"{'n/a' if cot is None else f'{cot:.2f} J/(kg m)'}, stride frequency "
          f"{'n/a' if freq is None else f'{freq:.2f} Hz'}; wrote {args.out}"
          + (f" and {args.picture}" if args.picture else ""))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="musclewalk", description=__doc__)
    p.add_argument("--version", action="version", version=f"musclewalk {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("creatures", help="list the creature presets")
    s.set_defaults(func=_cmd_creatures)

    s = sub.add_parser("build", help="build a creature preset (or YAML file) as an .osim model")
    s.add_argument("creature", help="preset name (see 'musclewalk creatures') or a YAML file")
    s.add_argument("--set", action="append", default=[], metavar="PART.KEY=VALUE",
                   help="override a template parameter, e.g. --set legs.upper=0.45")
    s.add_argument("-o", "--out", required=True, type=Path, help="output .osim")
    s.add_argument("--picture", type=Path, help="also render a picture (PNG)")
    s.add_argument("--no-validate", action="store_true", help="skip the OpenSim validation")
    s.set_defaults(func=_cmd_build)

    s = sub.add_parser("render", help="picture of a model from the side and the front")
    s.add_argument("model", type=Path)
    s.add_argument("-o", "--out", required=True, type=Path)
    s.set_defaults(func=_cmd_render)

    s = sub.add_parser("simulate", help="simulate a model with the controller; writes outputs")
    s.add_argument("model", type=Path, help="model .osim (its .meta.json must lie beside it)")
    s.add_argument("--params", type=Path, help="parameter JSON (controller and initial state)")
    s.add_argument("--speed", type=float, required=True, help="target forward speed, m/s")
    s.add_argument("--duration", type=float, required=True, help="simulated time, s")
    s.add_argument("--out", type=Path, required=True, help="output folder")
    s.add_argument("--heading", type=float, default=0.0, help="initial target heading, deg")
    s.add_argument("--turn-rate", type=float, default=0.0,
                   help="random turns at this turning velocity, deg/s (0: straight)")
    s.add_argument("--push", action="append", default=[], metavar="START,FX,FZ",
                   help="push the trunk for 0.2 s with this horizontal force (N), repeatable")
    s.add_argument("--random-pushes", type=int, default=0, help="number of random pushes")
    s.add_argument("--push-magnitude", type=float, default=100.0, help="random push force, N")
    s.add_argument("--seed", type=int, default=0, help="seed of random pushes and turns")
    s.add_argument("--terrain-slope", type=float, metavar="DEG",
                   help="ramps whose slope changes randomly every metre within +-DEG (flat if absent)")
    s.add_argument("--control-interval", type=float, default=0.005, help="s (<= 0.005)")
    s.add_argument("--no-terminate", action="store_true",
                   help="do not stop at the paper's termination rules")
    s.set_defaults(func=_cmd_simulate)

    s = sub.add_parser("optimize", help="CMA-ES over control, routing, muscles, initial state")
    s.add_argument("creature", help="preset name, creature YAML, or a built .osim")
    s.add_argument("--speed", type=float, required=True, help="target forward speed, m/s")
    s.add_argument("--duration", type=float, default=10.0, help="t_max of an evaluation, s")
    s.add_argument("--generations", type=int, default=None,
                   help="generation limit (default 100; on --resume: the run's own limit)")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--init", help="warm start from an earlier run's best.json")
    s.add_argument("--init-from-other-creature", action="store_true",
                   help="allow --init from another creature (parameters both share carry over)")
    s.add_argument("--sigma", type=float, default=1.0, help="initial CMA-ES step size")
    s.add_argument("--workers", type=int, default=0, help="worker processes (0: all cores)")
    s.add_argument("--evaluator", choices=["process", "serial", "dask"], default="process")
    s.add_argument("--scheduler", help="dask scheduler address (with --evaluator dask)")
    s.add_argument("--extra-generations", type=int, default=20,
                   help="generations to keep improving once all thresholds are met")
    s.add_argument("--stagnation", type=int, default=200,
                   help="stop after this many generations without improvement")
    s.add_argument("--eval-timeout", type=float, default=None,
                   help="wall s per evaluation before it is penalized (default: 6 x --duration, "
                        "at least 30 s)")
    s.add_argument("--scale-passive", action="append", default=[], metavar="NAME=FACTOR",
                   help="continuation stage: multiply a passive gain's initial value and bounds "
                        "(e.g. spine_flexion=1.5; repeatable); the run's model copy in OUT/model "
                        "carries the scaled metadata")
    s.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.pkl")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.add_argument("--out", type=Path, required=True, help="run directory")
    s.set_defaults(func=_cmd_optimize)

    s = sub.add_parser("analyze", help="gait summary of a simulation folder")
    s.add_argument("simulation", type=Path, help="folder written by 'musclewalk simulate'")
    s.add_argument("-o", "--out", type=Path, required=True, help="summary JSON")
    s.add_argument("--picture", type=Path, help="side-view filmstrip PNG of the gait")
    s.add_argument("--every", type=float, default=0.1, help="filmstrip frame interval, s")
    s.add_argument("--window", type=_time_window, metavar="START,END",
                   help="draw only this time window, s (default: the whole run)")
    s.set_defaults(func=_cmd_analyze)

    s = sub.add_parser("info", help="structure and free-parameter counts of a built model")
    s.add_argument("model", type=Path)
    s.add_argument("-v", "--verbose", action="store_true")
    s.set_defaults(func=_cmd_info)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except (UsageError, ValueError, KeyError, FileNotFoundError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"musclewalk {args.command}: error: {msg}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
