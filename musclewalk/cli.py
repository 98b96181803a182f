"""Command line interface: ``musclewalk <command> ...``."""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from pathlib import Path

from . import __version__
from .constants import CONTROL_INTERVAL


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def _cmd_creatures(args):
    from . import yaml_io
    from .model.template import list_creatures

    for name, path in list_creatures().items():
        data = yaml_io.safe_load(path.read_text()) or {}
        parts = ", ".join(f"{p}={v.get('template')}" for p, v in (data.get("parts") or {}).items())
        print(f"{name:10s} {parts}   ({path})")


def _cmd_build(args):
    from .model.build import build_creature
    from .model.template import parse_overrides

    spec, meta, report = build_creature(
        args.creature, parse_overrides(args.set), args.out, validate=not args.no_validate
    )
    counts = {"routing": len(meta.routing), "properties": len(meta.properties), "passive": len(meta.passive)}
    print(
        f"{spec.name}: {len(spec.bodies)} bodies, {spec.dof_count + 6} DOFs "
        f"({spec.dof_count} joint + 6 root), {len(spec.muscles)} muscles, "
        f"{spec.total_mass:.1f} kg; free parameters: routing {counts['routing']}, "
        f"muscle properties {counts['properties']}, passive gains {counts['passive']}"
    )
    print(f"wrote {args.out} and its metadata")
    if args.picture:
        from .analysis.render import render_model

        render_model(args.out, args.picture)
        print(f"wrote {args.picture}")


def _cmd_render(args):
    from .analysis.render import render_model
    from .io_checks import check_model, check_output_file, parse_model_file
    from .model.meta import meta_path

    check_output_file(args.out, "-o")
    if meta_path(args.model).exists():
        meta = check_model(args.model)  # a musclewalk model: it and its metadata must match
    else:
        parse_model_file(args.model)  # any OpenSim model: readable XML at least
        meta = None
    render_model(args.model, args.out, meta=meta)
    print(f"wrote {args.out}")


def _cmd_info(args):
    from .io_checks import check_model
    from .model.vectors import ModelVectors

    meta = check_model(args.model)  # the .osim too: readable and matching its metadata
    mv = ModelVectors(meta)
    print(
        f"{meta.creature}: {len(meta.bodies)} bodies, {len(meta.muscles)} muscles, "
        f"{meta.total_mass:.1f} kg, leg length {meta.leg_length:.3f} m"
    )
    for kind, n in mv.counts().items():
        print(f"  {kind:10s} {n:4d} free parameters")
    if args.verbose:
        for m in meta.muscles:
            print(f"  {m.name:28s} delay {m.delay * 1000:4.0f} ms  roles {','.join(m.roles)}")


def _number(option: str, value: float, expected: str, ok=lambda v: True) -> float:
    """A finite float option that satisfies ``ok``; otherwise one line naming the option."""
    if not (math.isfinite(value) and ok(value)):
        raise UsageError(f"{option}: expected {expected}, got {value!r}")
    return value


def _cmd_simulate(args):
    """One recorded run (sim.runner.simulate) of the scenario and terrain the options describe
    (sim.scenario.Scenario.for_run, sim.terrain.RampTerrain.for_run), written to --out
    (sim.outputs)."""
    from .io_checks import check_model, check_output_folder
    from .sim.outputs import FILES, run_settings, summary_line, write_outputs
    from .sim.parameters import load_run_parameters
    from .sim.runner import simulate
    from .sim.scenario import Assist, Scenario

    # every option first, then the output folder and the model: nothing fails after simulating
    scored = _scored_conditions(args) if args.as_scored else None
    if args.duration is None:
        raise UsageError("--duration: required (without --as-scored)")
    if args.speed is None:
        args.speed = _speed_of_params(args.params)
    pushes = _simulate_options(args)
    speed_change = _speed_change(args)
    if scored is None and speed_change is None:
        _note_scored_speed_change(args.params)
    assist = Assist(args.assist_upright, args.assist_support, hold_heading=not args.assist_free_heading)
    check_output_folder(args.out, "--out", FILES, keep=(args.model, args.params))
    meta = check_model(args.model)
    params = load_run_parameters(
        args.params, meta, args.model, args.control_interval, fill_defaults=args.fill_defaults
    )
    if scored is not None:
        scenario, terrain = scored.task.scenario(
            args.speed, args.duration, scored.perturbation_seed, control_interval=args.control_interval
        )
        scenario = dataclasses.replace(scenario, terminate=not args.no_terminate)
    else:
        scenario = Scenario.for_run(
            args.speed,
            args.duration,
            heading_deg=args.heading,
            turn_rate_deg=args.turn_rate,
            pushes=pushes,
            n_random_pushes=args.random_pushes,
            push_magnitude=args.push_magnitude,
            seed=args.seed,
            control_interval=args.control_interval,
            terminate=not args.no_terminate,
            assist=assist if assist else None,
            max_heading_error_deg=args.max_heading_error,
            speed_change=speed_change,
        )
        terrain = _terrain(args, scenario.top_speed)
    sim, result = simulate(
        args.model,
        scenario,
        params,
        meta=meta,
        terrain=terrain,
        source=str(args.params),
        accuracy=args.accuracy,
        fixed_step=args.fixed_step,
    )
    settings = run_settings(
        scenario,
        args.params,
        heading_deg=args.heading,
        turn_rate_deg=args.turn_rate if scored is None else scored.task.heading.turn_rate,
        seed=args.seed if scored is None else None,
        terrain_slope_deg=args.terrain_slope
        if scored is None
        else (scored.task.terrain.max_slope if scored.task.terrain else None),
        integrator_accuracy=sim.engine.accuracy,
        integrator_fixed_step=sim.engine.fixed_step,
    )
    if scored is not None:
        settings["as_scored"] = {
            "task": scored.task.name,  # the file it was read from; task_definition is what ran
            "task_definition": scored.task.as_dict(),
            "perturbation_seed": scored.perturbation_seed,
        }
    write_outputs(args.out, sim, result, scenario, settings)
    print(summary_line(meta.creature, result.summary(scenario), args.out))


# simulate's scenario options, with their defaults: --as-scored takes all of them from the task
_SCENARIO_OPTIONS = {
    "heading": 0.0,
    "turn_rate": 0.0,
    "push": [],
    "random_pushes": 0,
    "push_magnitude": 100.0,
    "seed": 0,
    "terrain_slope": None,
    "assist_upright": 0.0,
    "assist_support": 0.0,
    "assist_free_heading": False,
    "max_heading_error": 45.0,
    "control_interval": CONTROL_INTERVAL,
    "speed_change": None,
}


def _scored_conditions(args):
    """--as-scored: the task, perturbation seed, speed and duration the --params best.json was
    scored under (optimize.task.scored_conditions); --speed and --duration default to the
    best's, and no other scenario option may be given."""
    from .optimize.task import TaskError, scored_conditions

    if not args.params:
        raise UsageError("--as-scored: needs --params, an optimizer's best.json")
    for name, default in _SCENARIO_OPTIONS.items():
        if getattr(args, name) != default:
            raise UsageError(
                f"--{name.replace('_', '-')}: not with --as-scored, which simulates the task the "
                f"best was scored under ({args.params})"
            )
    try:
        scored = scored_conditions(args.params)
    except TaskError as exc:
        raise UsageError(f"--as-scored: {exc}") from None
    if args.speed is None:
        args.speed = scored.speed
    if args.duration is None:
        args.duration = scored.duration
    return scored


def _speed_of_params(params) -> float:
    """simulate without --speed: the target speed the --params file was optimized for."""
    from .sim.parameters import parameter_file_speed

    if not params:
        raise UsageError("--speed: required without --params (the template defaults have no target speed)")
    speed = parameter_file_speed(params)
    if speed is None:
        raise UsageError(f"--speed: required ({params} has no target speed, key 'speed')")
    return speed


def _simulate_options(args) -> list:
    """simulate's options checked, one line naming the first bad one; the pushes of --push."""
    from .sim.engine import FIXED_STEP_OVERRIDE, is_fixed_step_override
    from .sim.scenario import MAX_DURATION

    _number("--speed", args.speed, "a positive speed (m/s)", lambda v: v > 0)
    _number(
        "--duration",
        args.duration,
        f"a positive duration of at most {MAX_DURATION:g} s",
        lambda v: 0 < v <= MAX_DURATION,
    )
    _number("--heading", args.heading, "a finite angle (deg)")
    _number("--turn-rate", args.turn_rate, "a turning velocity >= 0 (deg/s; 0: straight)", lambda v: v >= 0)
    _number("--push-magnitude", args.push_magnitude, "a force >= 0 (N)", lambda v: v >= 0)
    _number(
        "--control-interval",
        args.control_interval,
        f"a value in (0, {CONTROL_INTERVAL:g}] (s)",
        lambda v: 0 < v <= CONTROL_INTERVAL + 1e-12,
    )
    if args.terrain_slope is not None:
        _number("--terrain-slope", args.terrain_slope, "a finite slope (deg)")
    if args.accuracy is not None:
        _number("--accuracy", args.accuracy, "an integrator accuracy in (0, 0.1]", lambda v: 0 < v <= 0.1)
    if args.fixed_step is not None:
        _number(
            "--fixed-step",
            args.fixed_step,
            FIXED_STEP_OVERRIDE,
            is_fixed_step_override,
        )
    _number("--assist-upright", args.assist_upright, "a stiffness >= 0 (M g L per rad)", lambda v: v >= 0)
    _number(
        "--assist-support",
        args.assist_support,
        "a fraction of body weight in [0, 0.9]",
        lambda v: 0 <= v <= 0.9,
    )
    if args.assist_free_heading and not args.assist_upright > 0:
        raise UsageError("--assist-free-heading: only with an upright torque (--assist-upright K > 0)")
    _number(
        "--max-heading-error", args.max_heading_error, "an angle in (0, 180] (deg)", lambda v: 0 < v <= 180
    )
    if args.random_pushes < 0:
        raise UsageError(f"--random-pushes: expected a count >= 0, got {args.random_pushes}")
    if args.seed < 0:
        raise UsageError(f"--seed: expected an integer >= 0, got {args.seed}")
    return [_push(spec) for spec in args.push]


def _push(spec: str):
    """--push START,FX,FZ: a push on the trunk (sim.scenario.Push.parse)."""
    from .sim.scenario import Push

    try:
        return Push.parse(spec)
    except ValueError as exc:
        raise UsageError(f"--push: {exc}") from None


def _note_scored_speed_change(params) -> None:
    """A line on stderr when --params is a best.json scored with the target speed changing within
    the run (its task's speed_change), which a plain simulate at --speed does not reproduce."""
    import json

    try:
        data = json.loads(Path(params).read_text()) if params else None
        change = (data.get("task_definition") or {}).get("speed_change") if isinstance(data, dict) else None
    except (OSError, ValueError, AttributeError):
        return
    if change:
        print(
            f"note: {params} was scored with the target speed changing within the run "
            f"({change}); --as-scored or --speed-change re-simulates that",
            file=sys.stderr,
        )


def _speed_change(args):
    """--speed-change START,DURATION,FACTOR: the target speed changing within the run
    (sim.scenario.SpeedChange.parse; None without it)."""
    if args.speed_change is None:
        return None
    from .sim.scenario import SpeedChange

    try:
        return SpeedChange.parse(args.speed_change)
    except ValueError as exc:
        raise UsageError(f"--speed-change: {exc}") from None


def _terrain(args, top_speed: float):
    """--terrain-slope: ramps long enough for the run up to its highest target speed (None:
    flat ground)."""
    if args.terrain_slope is None:
        return None
    from .sim.terrain import RampTerrain

    try:
        return RampTerrain.for_run(args.terrain_slope, top_speed, args.duration, seed=args.seed)
    except ValueError as exc:
        reason = str(exc).removeprefix("terrain slope: ")
        raise UsageError(f"--terrain-slope: {reason}") from None


def _cmd_optimize(args):
    from .optimize.experiment import is_experiment_file

    if is_experiment_file(args.creature):
        return _optimize_experiment(args)
    return _optimize_run(args)


# the options an experiment file sets itself (it leaves runs.EXPERIMENT_OPTIONS to the caller)
_EXPERIMENT_SETS = (
    "speed",
    "duration",
    "seed",
    "sigma",
    "trials",
    "trial_jitter",
    "trial_groups",
    "trial_directions",
    "trial_speeds",
    "elitist",
    "init",
    "generations",
    "objective",
    "task",
    "extra_generations",
    "stagnation",
    "parameters",
)


def _optimize_experiment(args):
    """Every stage of an experiment file in order (optimize.runs.run_experiment); only the
    options the file leaves open may be given."""
    from .optimize.experiment import Experiment
    from .optimize.runs import EXPERIMENT_OPTIONS, run_experiment

    exp = Experiment.load(args.creature)
    for name in _EXPERIMENT_SETS:
        if getattr(args, name) is not None:
            raise UsageError(
                f"--{name.replace('_', '-')}: an experiment file sets it "
                f"({exp.path}); edit the file or run the creature without it"
            )
    if args.scale_passive or args.resume:
        raise UsageError(
            "--scale-passive / --resume: an experiment file has its stages and "
            "resumes them by itself; run it again to continue"
        )
    given = _given_settings(args)
    run_experiment(
        exp, args.out, {k: v for k, v in given.items() if k in EXPERIMENT_OPTIONS}, progress=not args.quiet
    )


def _given_settings(args) -> dict:
    """The optimizer settings given on the command line (Settings field names; not given: left
    out, so a new run takes the default and a resumed run its own value)."""
    given = {
        "speed": args.speed,
        "duration": args.duration,
        "seed": args.seed,
        "sigma": args.sigma,
        "trials": args.trials,
        "trial_jitter": args.trial_jitter,
        "trial_groups": None if args.trial_groups is None else tuple(args.trial_groups),
        "trial_directions": args.trial_directions,
        "trial_speeds": None if args.trial_speeds is None else tuple(args.trial_speeds),
        "elitist": args.elitist or None,
        "init": args.init,
        "extra_generations": args.extra_generations,
        "stagnation": args.stagnation,
        "cpu_limit": args.cpu_limit,
        "objective": args.objective,
        "task": args.task,
        "init_other_creature": args.init_from_other_creature or None,
        "clip_init": args.clip_init or None,
        "workers": args.workers,
        "evaluator": args.evaluator,
        "scheduler": args.scheduler,
        "wall_backstop": args.wall_backstop,
        "keep_generation_bests": args.keep_generation_bests or None,
        "parameters": _parameter_overrides(args.parameters),
    }
    return {k: v for k, v in given.items() if v is not None}


def _parameter_overrides(text: str | None):
    """--parameters: a YAML / JSON mapping (the experiment file's parameters:), None if not given."""
    if text is None:
        return None
    import yaml

    from . import yaml_io

    try:
        value = yaml_io.safe_load(text)
    except yaml.YAMLError as exc:
        raise UsageError(f"--parameters: not a YAML mapping: {' '.join(str(exc).split())}") from None
    if not isinstance(value, dict):
        raise UsageError(
            f"--parameters: expected a mapping such as '{{knee.theta: {{lower: 0}}}}', got {text!r}"
        )
    from .optimize.space import OverrideError, parse_overrides

    try:
        return parse_overrides(value)
    except OverrideError as exc:
        raise UsageError(f"--parameters: {exc}") from None


def _optimize_run(args):
    """One optimization: a new run (optimize.runs.start_run) or a resumed one (resume_run)."""
    from .optimize.driver import check_out_dir
    from .optimize.runs import complete_run, resume_run, start_run

    given = _given_settings(args)
    if args.generations is not None and args.generations < 1:
        raise UsageError(f"--generations: expected an integer >= 1, got {args.generations}")
    check_out_dir(args.out)
    if args.resume:
        if args.scale_passive:
            raise UsageError("--scale-passive: a resumed run keeps the model copy it started with")
        opt = resume_run(
            args.creature, args.out, generations=args.generations, requested=given, progress=not args.quiet
        )
    else:
        opt = start_run(
            args.creature,
            args.out,
            _new_run_settings(args, given),
            scale_passive=_passive_factors(args.scale_passive),
            progress=not args.quiet,
        )
    complete_run(opt)


def _new_run_settings(args, given: dict):
    """The Settings of a new run: what was given, then the task's speed, duration and objective
    (optimize.runs.with_task_defaults), the optimizer's defaults for the rest."""
    import shlex

    from .optimize.driver import Settings
    from .optimize.runs import with_task_defaults

    values = with_task_defaults(given)
    if "speed" not in values:
        raise UsageError(f"--speed: required for a new run (the task '{args.task or 'walk'}' gives none)")
    limit = {} if args.generations is None else {"generations": args.generations}
    source = {"parameters_source": "--parameters"} if "parameters" in values else {}
    return Settings(
        model="",
        **values,
        **limit,
        **source,
        command="musclewalk " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
    )


def _passive_factors(specs: list[str]) -> dict[str, float]:
    """--scale-passive NAME=FACTOR ...: passive gain name -> factor."""
    factors = {}
    for spec in specs:
        name, _, value = spec.partition("=")
        try:
            factors[name.strip()] = float(value)
        except ValueError:
            raise UsageError(f"--scale-passive: expected NAME=FACTOR, got {spec!r}") from None
    return factors


def _time_window(text: str) -> tuple:
    try:
        start, end = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected START,END in s, got {text!r}") from None
    if not 0 <= start < end:
        raise argparse.ArgumentTypeError(f"expected 0 <= START < END, got {text!r}")
    return start, end


COMPARISON_FILES = (
    "comparison.json",
    "summary.md",
    "kinematics.png",
    "kinematics.svg",
    "grf.png",
    "grf.svg",
    "kinetics.png",
    "kinetics.svg",
    "muscles.png",
    "muscles.svg",
)


def _cmd_compare(args):
    import json

    from .analysis import compare, gait, reference
    from .io_checks import check_output_folder, replace_folder

    if args.skip is not None:
        _number("--skip", args.skip, "a time >= 0 (s)", lambda v: v >= 0)
    inputs = [args.run] + list(args.trial or []) + [f for t in args.reference_trial or [] for f in t]
    check_output_folder(args.out, "-o", COMPARISON_FILES, keep=inputs)
    if args.trial:
        if args.run is not None:
            raise UsageError("give a simulation folder or --trial, not both")
        trial = gait.from_opensim_trial(*args.trial, body_mass=args.body_mass)
        skip = args.skip if args.skip is not None else 0.0
    else:
        if args.run is None:
            raise UsageError(
                "give a simulation folder (musclewalk simulate --out) or --trial MODEL IK GRF LOADS"
            )
        trial = gait.from_simulation(args.run)
        skip = args.skip if args.skip is not None else 2.0
    refs = [reference.load(r) for r in (args.reference or ["normative"])]
    refs += [
        compare.trial_reference(gait.from_opensim_trial(*files)) for files in (args.reference_trial or [])
    ]
    ref, others = refs[0], refs[1:]
    sides = ("r", "l") if args.side == "both" else (args.side,)
    holder = {}

    def fill(folder):
        holder["result"] = compare.write_comparison(trial, ref, folder, skip, sides, others)

    try:
        replace_folder(args.out, fill)
    except gait.GaitError as exc:
        if not args.record_failure:
            raise
        # the workflow goes on with a run that fell early: comparison.json says why
        message = str(exc)

        def record(folder):
            (folder / "comparison.json").write_text(
                json.dumps(
                    {"trial": trial.name, "error": message, "gps_deg": None, "spatiotemporal": {}}, indent=1
                )
                + "\n"
            )
            for sheet in ("kinematics", "grf", "kinetics"):
                compare.failure_sheet(message, folder / sheet)

        replace_folder(args.out, record)
        print(f"{trial.name}: {message}; wrote {args.out}/comparison.json")
        return
    r = holder["result"]
    st = r["spatiotemporal"]
    gps = r["gps_deg"]
    print(
        f"{trial.name}: {sum(st['cycles'].values())} cycles after {skip:g} s; GPS "
        f"{'n/a' if gps is None else format(gps, '.1f')} deg against {ref.name}; cadence "
        f"{st['cadence_steps_per_min']:.0f} steps/min, stance {st['stance_percent']:.0f} %; "
        f"wrote {args.out}"
    )


def _cmd_table4(args):
    from .analysis.table4 import table4
    from .io_checks import check_output_file, write_files_together
    from .model.template import models_dir

    optimized = args.optimized if args.optimized is not None else models_dir() / "optimized"
    if not optimized.is_dir():
        raise UsageError(f"{optimized}: --optimized: not a folder")
    if args.analysis is not None and not args.analysis.is_dir():
        raise UsageError(f"{args.analysis}: --analysis: not a folder")
    text = table4(optimized, args.analysis)
    if str(args.out) == "-":
        print(text, end="")
        return
    check_output_file(args.out, "-o")
    write_files_together({args.out: text.encode()})
    print(f"wrote {args.out}")


def _cmd_analyze(args):
    import json

    from .analysis.summary import read_run_summary, summarize
    from .io_checks import check_model, check_output_file, write_files_together

    _number("--every", args.every, "a positive frame interval (s)", lambda v: v > 0)
    check_output_file(args.out, "-o")
    if args.picture:
        check_output_file(args.picture, "--picture")
        if args.picture.absolute() == args.out.absolute():
            raise UsageError(f"{args.picture}: --picture is the same file as -o")
    run = read_run_summary(args.simulation)
    check_model(run["model"])
    if args.window:
        start, end = args.window
        lasts = float(run["simulated_time"])
        if start > lasts + 1e-9:
            raise UsageError(
                f"--window {start:g},{end:g}: starts after the end of the run "
                f"({args.simulation} lasts {lasts:.2f} s)"
            )
    result = summarize(args.simulation)
    files = {args.out: (json.dumps(result, indent=1) + "\n").encode()}
    if args.picture:
        from .analysis.filmstrip import filmstrip_png

        files[args.picture] = filmstrip_png(args.simulation, every=args.every, window=args.window)
    write_files_together(files)  # the summary and the picture, or neither
    cot = result["cost_of_transport_J_per_kg_m"]
    freq = result["stride_frequency_Hz"]
    force = result["mean_muscle_force_per_body_weight"]
    no_metabolics = result["metabolic_energy_J"] is None
    print(
        f"{result['creature']}: {result['simulated_time']:.2f} s, distance "
        f"{result['distance']:.2f} m, speed {result['mean_forward_speed']:.2f} m/s, "
        f"termination {result['termination_reason'] or 'none'}, cost of transport "
        f"{'n/a' if cot is None else f'{cot:.2f} J/(kg m)'}"
        f"{' (ideal muscles: no metabolic model)' if no_metabolics else ''}, summed muscle force "
        f"{'n/a' if force is None else f'{force:.2f} M g'}, stride frequency "
        f"{'n/a' if freq is None else f'{freq:.2f} Hz'}; wrote {args.out}"
        + (f" and {args.picture}" if args.picture else "")
    )


def _cmd_robustness(args):
    """The robustness protocol (analysis.robustness) on an optimization run folder: every option
    checked and the run folder read before the first trial; the JSON written atomically."""
    import json

    from .analysis.robustness import (
        Protocol,
        TrialLog,
        Walker,
        measure,
        partial_path,
        summary_line,
        walker_identity,
    )
    from .io_checks import check_output_file, write_files_together

    def protocol(speed):
        return Protocol(
            args.test,
            speed,
            duration=args.duration,
            seeds=args.seeds,
            first_seed=args.first_seed,
            start=args.start,
            step=args.step,
            maximum=args.max,
        )

    if args.speed is not None:
        protocol(args.speed)  # a bad option before any file is read
    check_output_file(args.out, "-o")
    walker = Walker.load(args.run)
    for name in (walker.model, walker.best, walker.model.with_suffix(".meta.json")):
        if args.out.absolute() == name.absolute():
            raise UsageError(f"{args.out}: -o is an input of the run folder ({name})")
    speed = args.speed if args.speed is not None else walker.speed
    if speed is None:
        raise UsageError(f"--speed: required ({walker.best} has no target speed)")
    proto = protocol(speed)
    log = TrialLog(partial_path(args.out), proto, walker_identity(walker))
    if len(log):
        print(f"resuming: {len(log)} finished trial(s) kept in {log.path}", file=sys.stderr, flush=True)
    progress = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    result = measure(walker, proto, progress, log)
    write_files_together({args.out: (json.dumps(result, indent=1) + "\n").encode()})
    log.remove()
    print(summary_line(result, args.out))


def _add_creatures_command(sub) -> None:
    s = sub.add_parser("creatures", help="list the creature presets")
    s.set_defaults(func=_cmd_creatures)


def _add_build_command(sub) -> None:
    s = sub.add_parser("build", help="build a creature preset (or YAML file) as an .osim model")
    s.add_argument("creature", help="preset name (see 'musclewalk creatures') or a YAML file")
    s.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PART.KEY=VALUE",
        help="override a template parameter, e.g. --set legs.upper=0.45",
    )
    s.add_argument("-o", "--out", required=True, type=Path, help="output .osim")
    s.add_argument("--picture", type=Path, help="also render a picture (PNG)")
    s.add_argument("--no-validate", action="store_true", help="skip the OpenSim validation")
    s.set_defaults(func=_cmd_build)


def _add_render_command(sub) -> None:
    s = sub.add_parser("render", help="picture of a model from the side and the front")
    s.add_argument("model", type=Path)
    s.add_argument("-o", "--out", required=True, type=Path)
    s.set_defaults(func=_cmd_render)


def _add_simulate_command(sub) -> None:
    s = sub.add_parser("simulate", help="simulate a model with the controller; writes outputs")
    s.add_argument("model", type=Path, help="model .osim (its .meta.json must lie beside it)")
    s.add_argument("--params", type=Path, help="parameter JSON (controller and initial state)")
    s.add_argument(
        "--fill-defaults",
        action="store_true",
        help="parameters missing from --params take their defaults (default: refuse)",
    )
    s.add_argument(
        "--speed",
        type=float,
        help="target forward speed, m/s (default: the --params file's, as an optimizer's best.json has it)",
    )
    s.add_argument(
        "--duration", type=float, help="simulated time, s (required unless --as-scored gives the best's)"
    )
    s.add_argument(
        "--out",
        type=Path,
        required=True,
        help="output folder (an earlier run's folder is replaced as a whole once the "
        "simulation has finished)",
    )
    s.add_argument(
        "--heading", type=float, default=_SCENARIO_OPTIONS["heading"], help="initial target heading, deg"
    )
    s.add_argument(
        "--turn-rate",
        type=float,
        default=_SCENARIO_OPTIONS["turn_rate"],
        help="random turns at this turning velocity, deg/s (0: straight)",
    )
    s.add_argument(
        "--push",
        action="append",
        default=list(_SCENARIO_OPTIONS["push"]),
        metavar="START,FX,FZ",
        help="push the trunk for 0.2 s with this horizontal force (N), repeatable",
    )
    s.add_argument(
        "--random-pushes",
        type=int,
        default=_SCENARIO_OPTIONS["random_pushes"],
        help="number of random pushes",
    )
    s.add_argument(
        "--push-magnitude",
        type=float,
        default=_SCENARIO_OPTIONS["push_magnitude"],
        help="random push force, N",
    )
    s.add_argument(
        "--seed", type=int, default=_SCENARIO_OPTIONS["seed"], help="seed of random pushes and turns"
    )
    s.add_argument(
        "--terrain-slope",
        type=float,
        metavar="DEG",
        help="ramps whose slope changes randomly every metre within +-DEG (flat if absent)",
    )
    s.add_argument(
        "--control-interval",
        type=float,
        default=_SCENARIO_OPTIONS["control_interval"],
        help=f"s (<= {CONTROL_INTERVAL:g})",
    )
    s.add_argument(
        "--assist-upright",
        type=float,
        default=_SCENARIO_OPTIONS["assist_upright"],
        metavar="K",
        help="a balance aid, as a bootstrap task's assist.upright: a torque holding the trunk at "
        "its base-pose orientation at the target heading, K M g L per rad (default 0: none)",
    )
    s.add_argument(
        "--assist-support",
        type=float,
        default=_SCENARIO_OPTIONS["assist_support"],
        metavar="F",
        help="a balance aid, as a bootstrap task's assist.support: an upward force on the trunk, "
        "F x body weight (default 0: none)",
    )
    s.add_argument(
        "--assist-free-heading",
        action="store_true",
        help="the upright torque leaves the trunk's yaw free, as a bootstrap task's "
        "assist.hold_heading: false",
    )
    s.add_argument(
        "--speed-change",
        metavar="START,DURATION,FACTOR",
        help="the target speed changes within the run, beyond the paper (a task's speed_change): "
        "it holds --speed until START s, then moves linearly to FACTOR x --speed over DURATION s "
        "(0: a step) and holds there",
    )
    s.add_argument(
        "--as-scored",
        action="store_true",
        help="simulate what the --params best.json was scored under: its task (balance aid, pushes, "
        "turns, terrain, heading rule, speed change; the task_definition in it or in the "
        "settings.json beside it) "
        "with its generation's perturbations (perturbation_seed); --speed and --duration default "
        "to the best's; no other scenario option",
    )
    s.add_argument("--no-terminate", action="store_true", help="do not stop at the paper's termination rules")
    s.add_argument(
        "--max-heading-error",
        type=float,
        default=_SCENARIO_OPTIONS["max_heading_error"],
        metavar="DEG",
        help="the heading rule's limit (default 45, the paper's), as a task's termination.max_heading_error",
    )
    s.add_argument(
        "--accuracy",
        type=float,
        help="integrator accuracy (default: the model's, models/physics.yaml): how much a result "
        "depends on the integration error (error-controlled steps only: a fixed step has none)",
    )
    s.add_argument(
        "--fixed-step",
        type=float,
        metavar="S",
        help="fixed integrator step, s (default: the model's physics.integrator.fixed_step; 0: "
        "error-controlled steps at the accuracy)",
    )
    s.set_defaults(func=_cmd_simulate)


def _add_optimize_command(sub) -> None:
    from .optimize.driver import Settings
    from .optimize.task import TRIAL_DIRECTIONS

    default = Settings(model="", speed=1.0)  # the help shows the optimizer's own defaults
    s = sub.add_parser("optimize", help="CMA-ES over control, routing, muscles, initial state")
    s.add_argument(
        "creature",
        help="preset name, creature YAML, a built .osim, or an experiment "
        "file (config/experiments/*.yaml: creature, objective, "
        "stages; the file sets speed, duration, seed, ...)",
    )
    s.add_argument(
        "--speed",
        type=float,
        help="target forward speed, m/s (overrides the task's; required for a new run unless "
        "the task has one)",
    )
    s.add_argument(
        "--duration",
        type=float,
        help=f"t_max of an evaluation, s (default: the task's, {default.duration:g} for walk)",
    )
    s.add_argument(
        "--task",
        help="what an evaluation simulates: walk, run, steer, push, slope (models/tasks/) or a .yaml "
        "file: perturbations (random turns, pushes, ramps; the same for every candidate of a "
        "generation) and the speed, duration and objective a new run takes unless given "
        f"(default {default.task})",
    )
    s.add_argument(
        "--generations",
        type=int,
        default=None,
        help=f"generation limit (default {default.generations}; on --resume: the run's own limit)",
    )
    s.add_argument("--seed", type=int, help=f"CMA-ES seed, >= 1 (default {default.seed})")
    s.add_argument("--init", help="warm start from an earlier run's best.json")
    s.add_argument(
        "--init-from-other-creature",
        action="store_true",
        help="allow --init from another creature, or a file with parameters missing "
        "(parameters both share carry over, the rest start at their defaults)",
    )
    s.add_argument(
        "--clip-init",
        action="store_true",
        help="start from the nearest bound where an --init value is outside the bounds (default: refuse)",
    )
    s.add_argument("--sigma", type=float, help=f"initial CMA-ES step size (default {default.sigma:g})")
    s.add_argument(
        "--trials",
        type=int,
        help="simulations per candidate, CMA-ES ranking their mean objective: the candidate, then "
        "copies moved by +-TRIAL_JITTER of each range, each under perturbations of its own "
        f"(default {default.trials})",
    )
    s.add_argument(
        "--trial-jitter",
        type=float,
        help=f"the further trials' move, a fraction of each range (default {default.trial_jitter:g})",
    )
    s.add_argument(
        "--trial-groups",
        nargs="+",
        metavar="GROUP",
        help="the parameter groups the further trials move, e.g. initial_state (default: all)",
    )
    s.add_argument(
        "--trial-directions",
        choices=TRIAL_DIRECTIONS,
        help="the further trials' directions: drawn anew each generation, or once for the run "
        "(fixed: a deterministic objective, which --elitist needs, as does --trial-jitter 0; default "
        f"{default.trial_directions})",
    )
    s.add_argument(
        "--trial-speeds",
        nargs="+",
        type=float,
        metavar="FACTOR",
        help="the further trials' target speeds as factors of --speed, one per further trial "
        "(e.g. --trials 3 --trial-speeds 1.05 1.1 --trial-jitter 0: the candidate must also walk "
        "5 and 10 %% faster; default: every trial at --speed)",
    )
    s.add_argument(
        "--elitist",
        action="store_true",
        default=None,  # not given: a resumed run keeps its own
        help="CMA-ES recombines the best candidate so far into every generation that found none "
        "better (pycma's CMA_elitist; for a warm start whose neighbours mostly fail)",
    )
    s.add_argument(
        "--objective",
        help="objective: a name in models/objectives/ or a .yaml file "
        f"(default: the task's; {default.objective}, the paper's eq. 32-37, for every task file here)",
    )
    s.add_argument(
        "--parameters",
        metavar="MAPPING",
        help="the search space, as an experiment file's parameters: (YAML), e.g. "
        "'{\"knee_overextension.*\": {free: true}, knee.theta: {lower: 0}}'",
    )
    s.add_argument("--workers", type=int, help=f"worker processes (default {default.workers}: all cores)")
    s.add_argument("--evaluator", choices=["process", "serial", "dask"])
    s.add_argument(
        "--keep-generation-bests",
        action="store_true",
        default=None,  # not given: a resumed run keeps its own
        help="also write each new best's best.json, optimized.osim and settings.json to "
        "<out>/generation-N/ (N: the generation that found it), to re-simulate the run's earlier bests",
    )
    s.add_argument("--scheduler", help="dask scheduler address (with --evaluator dask)")
    s.add_argument(
        "--extra-generations",
        type=int,
        help="generations to keep improving once all thresholds are met "
        f"(default {default.extra_generations}; a resumed run may be given another)",
    )
    s.add_argument(
        "--stagnation",
        type=int,
        help=f"stop after this many generations without improvement (default {default.stagnation})",
    )
    s.add_argument(
        "--cpu-limit",
        type=float,
        help="CPU s per simulated s before an evaluation is penalized as grinding "
        f"(default {default.cpu_limit:g}; CPU time of the evaluation, so machine "
        "load does not change results)",
    )
    s.add_argument(
        "--wall-backstop",
        type=float,
        help="wall s without any finished evaluation before the workers are killed "
        "as stuck (default 3 x cpu-limit x duration + 600)",
    )
    s.add_argument(
        "--scale-passive",
        action="append",
        default=[],
        metavar="NAME=FACTOR",
        help="continuation stage: multiply a passive gain's initial value and bounds "
        "(e.g. spine_flexion=1.5; repeatable); the run's model copy in OUT/model "
        "carries the scaled metadata",
    )
    s.add_argument(
        "--resume",
        action="store_true",
        help="continue from OUT/checkpoint.pkl (settings given must equal the run's)",
    )
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.add_argument("--out", type=Path, required=True, help="run directory")
    s.set_defaults(func=_cmd_optimize)


def _add_analyze_command(sub) -> None:
    s = sub.add_parser("analyze", help="gait summary of a simulation folder")
    s.add_argument("simulation", type=Path, help="folder written by 'musclewalk simulate'")
    s.add_argument("-o", "--out", type=Path, required=True, help="summary JSON")
    s.add_argument("--picture", type=Path, help="side-view filmstrip PNG of the gait")
    s.add_argument("--every", type=float, default=0.1, help="filmstrip frame interval, s")
    s.add_argument(
        "--window",
        type=_time_window,
        metavar="START,END",
        help="draw only this time window, s (default: the whole run; START must lie "
        "within the run, END is clipped to its end)",
    )
    s.set_defaults(func=_cmd_analyze)


def _add_robustness_command(sub) -> None:
    s = sub.add_parser(
        "robustness",
        help="largest push, slope or turning rate an optimized controller survives (Table 4), or "
        "target speed change",
        description="The robustness protocol (README, 'Robustness protocol'). A trial simulates the run's "
        "controller (optimized.osim + best.json) at its speed for --duration s with the paper's "
        "termination rules; per seed the level goes --start, --start + --step, ... until the "
        "first failed trial, the seed's result is the last level survived (null: --start failed),"
        " and the result is the median over the seeds. push: F newtons on the trunk for 0.2 s "
        "every 1 s from 1 s on, each in a random horizontal direction; fails when a termination "
        "rule fires. slope: after 1 m flat, 1 m ramps each with a random slope within +-level "
        "deg; fails as push. turn: the target heading turns at level deg/s toward random goals (a"
        " new one every 3 s within 60 deg); fails when a termination rule fires or when the "
        "heading error (target heading minus trunk heading, its trailing 1 s moving average, "
        "absolute, averaged over the steps after 2 s) reaches 10 deg. faster / slower (beyond the "
        "paper): the target speed held to 2 s, then changed linearly by level percent by 8 s and "
        "held; fails as push; nothing random (one seed by default). Seed k seeds the push "
        "directions, ramps or heading path, the same at every level.",
    )
    s.add_argument(
        "run", type=Path, help="optimization run folder (optimized.osim, optimized.meta.json, best.json)"
    )
    s.add_argument("--test", required=True, choices=["push", "slope", "turn", "faster", "slower"])
    s.add_argument(
        "-o",
        "--out",
        type=Path,
        required=True,
        help="result JSON (written when all trials are done; until then the finished trials are kept "
        "in OUT.partial.json, and the same command run again resumes from them)",
    )
    s.add_argument("--seeds", type=int, help="number of seeds (default 10; faster, slower 1)")
    s.add_argument("--first-seed", type=int, default=1, help="the first seed (default 1): seeds S, S+1, ...")
    s.add_argument("--speed", type=float, help="target speed, m/s (default: best.json's)")
    s.add_argument("--duration", type=float, help="s per trial (default 10; turn 20)")
    s.add_argument(
        "--start",
        type=float,
        help="first level (default: push 10 N, slope 1 deg, turn 1 deg/s, faster / slower 5 %%)",
    )
    s.add_argument(
        "--step",
        type=float,
        help="level increment (default: push 10 N, slope 1 deg, turn 1 deg/s, faster / slower 5 %%)",
    )
    s.add_argument(
        "--max",
        type=float,
        help="last level tried (default: none; slopes below 45 deg, 200 levels at most); a seed "
        "that survives it is reported as capped",
    )
    s.add_argument("--quiet", action="store_true", help="no line per trial on stderr")
    s.set_defaults(func=_cmd_robustness)


def _add_compare_command(sub) -> None:
    s = sub.add_parser(
        "compare",
        help="a gait against human reference data (gait cycles, clinical angles, GRF, spatiotemporal, GPS)",
    )
    s.add_argument("run", type=Path, nargs="?", help="folder written by 'musclewalk simulate'")
    s.add_argument(
        "--trial",
        nargs=4,
        type=Path,
        metavar=("MODEL", "IK", "GRF", "LOADS"),
        help="a lab trial instead: .osim model, IK .mot, GRF .mot, ExternalLoads .xml",
    )
    s.add_argument("--body-mass", type=float, help="kg, for --trial (default: the model's mass)")
    s.add_argument(
        "--reference",
        action="append",
        help="normative (default: gaitutils' normative data) or a CSV with columns "
        "variable, percent, mean, sd; repeatable: the first is the one scored in "
        "full, the others are drawn and get their own GPS",
    )
    s.add_argument(
        "--reference-trial",
        nargs=4,
        type=Path,
        action="append",
        metavar=("MODEL", "IK", "GRF", "LOADS"),
        help="a measured trial as a further reference (its cycles' mean and SD)",
    )
    s.add_argument("--side", choices=["r", "l", "both"], default="both")
    s.add_argument(
        "--skip", type=float, help="s of start-up left out (default 2 for a simulation, 0 for a trial)"
    )
    s.add_argument(
        "-o",
        "--out",
        type=Path,
        required=True,
        help="folder for comparison.json, summary.md, kinematics.png/svg, grf.png/svg, kinetics.png/svg "
        "(joint moments and powers by inverse dynamics), muscles.png/svg",
    )
    s.add_argument(
        "--record-failure",
        action="store_true",
        help="when the trial has no complete gait cycle, write comparison.json with "
        "the reason and sheets saying so (exit 0) instead of failing (workflows)",
    )
    s.set_defaults(func=_cmd_compare)


def _add_table4_command(sub) -> None:
    s = sub.add_parser(
        "table4", help="this project's Table 4 (committed controllers, robustness) beside the paper's"
    )
    s.add_argument("-o", "--out", type=Path, required=True, help="markdown file ('-': print it)")
    s.add_argument(
        "--optimized",
        type=Path,
        default=None,
        help="the committed runs (default: the package's models/optimized)",
    )
    s.add_argument(
        "--analysis",
        type=Path,
        help="gait summaries of re-simulations, <run>.json each (the workflow's results/analysis)",
    )
    s.set_defaults(func=_cmd_table4)


def _add_info_command(sub) -> None:
    s = sub.add_parser("info", help="structure and free-parameter counts of a built model")
    s.add_argument("model", type=Path)
    s.add_argument("-v", "--verbose", action="store_true")
    s.set_defaults(func=_cmd_info)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="musclewalk", description=__doc__)
    p.add_argument("--version", action="version", version=f"musclewalk {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    _add_creatures_command(sub)
    _add_build_command(sub)
    _add_render_command(sub)
    _add_simulate_command(sub)
    _add_optimize_command(sub)
    _add_analyze_command(sub)
    _add_robustness_command(sub)
    _add_compare_command(sub)
    _add_table4_command(sub)
    _add_info_command(sub)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except KeyboardInterrupt:
        # outputs are written to temporary files and renamed when complete: nothing half-written
        print(f"musclewalk {args.command}: interrupted", file=sys.stderr)
        return 130
    except (UsageError, ValueError, KeyError, OSError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        line = " ".join(str(msg).split()) or type(exc).__name__  # always one line
        print(f"musclewalk {args.command}: error: {line}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
