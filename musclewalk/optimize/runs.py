"""Runs of the optimize stage from typed settings: a new optimization (``start_run``), a resumed
one (``resume_run``), either run to its end with its result reported (``complete_run``), and the
stages of an experiment file (``run_experiment``). `musclewalk optimize` parses its arguments
into these; scripts can call them directly.

Every function checks its input before it builds or writes anything and holds the run directory's
lock from then on; on a failure before the first generation the lock is released, and a run
directory created by the failed start is removed. Errors are OptimizationError (a ValueError)
with one message naming the file or setting, as `musclewalk optimize` prints them."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Callable, Mapping

from ..model.meta import load_meta
from .driver import (
    CHECKPOINT,
    MODEL_DIR,
    ChangedSettingError,
    Optimization,
    OptimizationError,
    Settings,
    State,
    acquire_run_lock,
    check_new_run_dir,
    check_out_dir,
    load_checkpoint,
    release_run_lock,
    scaled_passive_model,
)
from .experiment import Experiment
from .task import DEFAULT_TASK, Task, TaskError

Report = Callable[[str], None]

# the settings an experiment file leaves to its caller (Settings field names): how evaluations are
# spread over processes, the limit on a grinding evaluation, the clipping of the warm start, and
# whether each new best is also kept in generation-N/
EXPERIMENT_OPTIONS = (
    "workers",
    "evaluator",
    "scheduler",
    "wall_backstop",
    "cpu_limit",
    "clip_init",
    "keep_generation_bests",
)


def report_line(line: str) -> None:
    """The default report: one line on stdout, at once (beside a progress bar on stderr)."""
    print(line, flush=True)


def creature_name(creature: str) -> str:
    """The creature of a preset name, a creature YAML or a built .osim (from its metadata)."""
    if Path(creature).suffix == ".osim":
        return load_meta(Path(creature)).creature
    from ..model.template import load_creature

    return load_creature(creature).name


def with_task_defaults(given: Mapping[str, object]) -> dict:
    """The settings of a new run (Settings field names) from those ``given`` explicitly and the
    task they name (``given["task"]``, default walk): the task's speed, duration and objective
    where ``given`` has none (a given value wins; what neither gives takes the optimizer's
    default). The result has no speed when neither gives one (the walk task leaves it to the
    run). OptimizationError naming the file and key for a bad task."""
    values = dict(given)
    try:
        task = Task.load(values.get("task", DEFAULT_TASK))
    except TaskError as exc:
        raise OptimizationError(str(exc)) from None
    for name, value in (("speed", task.speed), ("duration", task.duration), ("objective", task.objective)):
        if value is not None:
            values.setdefault(name, value)
    return values


def start_run(
    creature: str,
    out: Path,
    settings: Settings,
    *,
    scale_passive: Mapping[str, float] | None = None,
    progress: bool = True,
) -> Optimization:
    """A new run of ``creature`` (a preset name or creature YAML, built into OUT/model/, or a
    built .osim) in ``out``, which must be missing or empty. ``settings.model`` is ignored: the
    run's Settings are a copy with the model it optimizes. ``scale_passive``: passive gain name ->
    factor for a continuation stage, applied to the run's own model copy (OUT/model/). The
    settings are validated before anything is built or written."""
    out = Path(out)
    check_out_dir(out)
    settings.validate()
    created = not out.exists()
    acquire_run_lock(out)
    try:
        check_new_run_dir(out)
        model = _run_model(creature, out)
        if scale_passive:
            try:
                model = scaled_passive_model(model, out, scale_passive)
            except ValueError as exc:
                raise OptimizationError(f"--scale-passive: {exc}") from None
        return Optimization(dataclasses.replace(settings, model=str(model)), out, progress=progress)
    except BaseException:
        release_run_lock(out)
        if created:  # nothing of a run that never started stays behind
            shutil.rmtree(out, ignore_errors=True)
        raise


def _run_model(creature: str, out: Path) -> Path:
    model = Path(creature)
    if model.suffix != ".osim":
        from ..model.build import build_creature

        # built anew: a copy left by an earlier start may be of older templates
        model = out / MODEL_DIR / f"{creature_name(creature)}.osim"
        build_creature(creature, None, model)
    elif not model.exists():
        raise OptimizationError(f"{model}: model file not found")
    return model


def resume_run(
    creature: str,
    out: Path,
    *,
    generations: int | None = None,
    requested: Mapping[str, object] | None = None,
    progress: bool = True,
) -> Optimization:
    """The run in ``out`` continued from its checkpoint, with its own settings and model copy.
    ``generations``: a larger generation limit (None: the run's own). ``requested``: the settings
    given explicitly (Settings field names): each that decides the result must equal the run's
    own; workers, evaluator, scheduler and wall_backstop replace the run's. ``creature`` must be
    the one the run optimizes."""
    out = Path(out)
    check_out_dir(out)
    if not out.is_dir():
        raise OptimizationError(f"{out / CHECKPOINT}: no checkpoint to resume from")
    acquire_run_lock(out)
    try:
        opt = Optimization(
            Settings(model="", speed=1.0, generations=generations or 0),
            out,
            resume=True,
            progress=progress,
            requested=requested,
        )
        wanted = creature_name(creature)
        if wanted != opt.meta.creature:
            raise OptimizationError(f"{out}: the run optimizes '{opt.meta.creature}', not '{wanted}'")
    except BaseException:
        release_run_lock(out)
        raise
    return opt


def complete_run(opt: Optimization, report: Report = report_line) -> State:
    """Run ``opt`` to its end: its search space reported first, its best result last."""
    space = opt.space
    report(
        f"{opt.meta.creature}: {len(space)} parameters "
        + ", ".join(f"{k} {v}" for k, v in space.group_counts().items())
        + (
            f" ({len(space.fixed)} fixed"
            + (f" ({len(space.hold_names)} held at the warm start's values)" if space.hold_names else "")
            + f", {len(space.narrowed)} narrowed by the run's parameters)"
            if space.overrides
            else ""
        )
    )
    state = opt.run()
    r = state.best_result
    end = f"terminated: {r.reason}" if r is not None and r.terminated else "no termination"
    report(
        f"best objective {state.best_score:.3f} at generation {state.best_generation} "
        f"(simulated {r.simulated_time if r is not None else 0:.2f} s, {end}); wrote {opt.out}"
    )
    return state


def checkout_relative(path) -> str:
    """``path`` as typed from the root of the git checkout that holds it (a folder with .git, a
    worktree's .git file too), so that a run's recorded command reads the same from any clone;
    the absolute path outside a checkout."""
    path = Path(path).absolute()
    for folder in path.parents:
        if (folder / ".git").exists():
            return str(path.relative_to(folder))
    return str(path)


def stage_settings(
    exp: Experiment,
    index: int,
    init: str | None = None,
    options: Mapping[str, object] | None = None,
    command: str = "",
) -> Settings:
    """The Settings of stage ``index`` of ``exp`` as a new run: the stage's speed or the file's,
    the stage's objective or the file's, the stage's task or the file's (Experiment.load filled in the task's
    values where the file gives none), the stage's own values, ``init`` as its warm start, its search space
    (Stage.parameters), and the ``options`` (EXPERIMENT_OPTIONS) the caller gave."""
    options = _experiment_options(exp, options)
    stage = exp.stages[index]
    return Settings(
        model="",
        speed=exp.speed if stage.speed is None else stage.speed,
        duration=stage.duration,
        generations=stage.generations,
        seed=stage.seed,
        sigma=stage.sigma,
        popsize=stage.popsize,
        stop_when_walking=stage.stop_when_walking,
        stop_when_met=stage.stop_when_met,
        trials=stage.trials,
        trial_jitter=stage.trial_jitter,
        trial_groups=stage.trial_groups,
        trial_directions=stage.trial_directions,
        trial_speeds=stage.trial_speeds,
        elitist=stage.elitist,
        extra_generations=stage.extra_generations,
        objective=exp.objective if stage.objective is None else stage.objective,
        task=exp.task if stage.task is None else stage.task,
        task_definition=_aid_task_definition(stage),
        parameters=dict(stage.parameters),
        parameters_source=str(exp.path) if stage.parameters else "",
        init=init,
        init_other_creature=exp.init_from_other_creature if index == 0 else _creature_changes(exp, index),
        command=command,
        **options,
    )


def _aid_task_definition(stage) -> dict | None:
    """A stage's task with its aid scaled (Stage.aid_level) as the run stores it; None for a stage
    that runs its task file as it is."""
    if stage.aid_level is None:
        return None
    try:
        return Task.load(stage.task).at_aid_level(stage.aid_level).as_dict()
    except TaskError as exc:
        raise OptimizationError(str(exc)) from None


# a stage's values that decide its result, compared with its checkpoint's on resume (the warm
# start, objective and task are paths that differ between checkouts; the run keeps the objective
# and task definitions it started with)
STAGE_RESULT_SETTINGS = (
    "speed",
    "duration",
    "seed",
    "sigma",
    "popsize",
    "stop_when_walking",
    "stop_when_met",
    "trials",
    "trial_jitter",
    "trial_groups",
    "trial_directions",
    "trial_speeds",
    "elitist",
)


def stage_result_settings(exp: Experiment, index: int) -> dict:
    """The STAGE_RESULT_SETTINGS of stage ``index`` of ``exp`` as its file says them now."""
    settings = stage_settings(exp, index)
    return {name: getattr(settings, name) for name in STAGE_RESULT_SETTINGS}


def _check_stage_physics(exp: Experiment, index: int, opt: Optimization) -> None:
    """A resumed stage with its own creature still has that creature's physics in its model copy
    (a creature file edited since would otherwise mix two physics in one continuation)."""
    from ..model.meta import build_meta
    from ..model.template import load_creature

    creature = exp.stages[index].creature
    started = load_meta(Path(opt.settings.model)).physics
    now = build_meta(load_creature(creature)).physics
    if started != now:
        release_run_lock(opt.out)
        raise OptimizationError(
            f"{exp.path}: {exp.stage_key(index)}.creature: the stage's checkpoint "
            f"({opt.out / CHECKPOINT}) was started on a model with physics {started.to_dict()}, "
            f"{creature} now gives {now.to_dict()}; restore it or start the experiment in a new folder"
        )


def _creature_changes(exp: Experiment, index: int) -> bool:
    """Whether stage ``index`` runs another creature than the stage before (a physics variant with
    the same parameters, Experiment._check_stage_creatures): its warm start carries over."""
    before, stage = exp.stages[index - 1], exp.stages[index]
    return (stage.creature or exp.creature) != (before.creature or exp.creature)


def _experiment_options(exp: Experiment, options: Mapping[str, object] | None) -> dict:
    options = dict(options or {})
    unknown = sorted(set(options) - set(EXPERIMENT_OPTIONS))
    if unknown:
        raise OptimizationError(f"{unknown[0]}: an experiment file sets it ({exp.path})")
    return options


def _stage_space_to_resume(exp: Experiment, index: int, stage_out: Path) -> dict:
    """The search space a stage's checkpoint must have to be resumed: Stage.parameters; or, for a
    later stage checkpointed before stages had their own spaces, the file's parameters as it kept
    them, start values included (which did not apply there: it continued the stage before)."""
    space = dict(exp.stages[index].parameters)
    if index > 0 and space != exp.parameters:
        saved, _ = load_checkpoint(stage_out / CHECKPOINT)
        if saved.parameters == exp.parameters:
            return dict(exp.parameters)
    return space


def run_experiment(
    exp: Experiment,
    out: Path,
    options: Mapping[str, object] | None = None,
    *,
    progress: bool = True,
    report: Report = report_line,
) -> State:
    """Every stage of ``exp`` in order (earlier stages in OUT/stages/<name>, the last in ``out``),
    each warm-started from the best of the one before and the first from the experiment's warm
    start. A stage with a checkpoint is resumed with its own settings and model copy (and returns
    at once when it had finished), so running an experiment again continues it; it is refused when
    the stage's search space in the file (Stage.parameters) or one of its STAGE_RESULT_SETTINGS is
    no longer its checkpoint's (its generation limit may grow, and its extra generations after the
    thresholds may change: neither changes a generation already run).
    ``options``: the EXPERIMENT_OPTIONS given explicitly (Settings field names). The state of the
    last stage."""
    out = Path(out)
    options = _experiment_options(exp, options)
    init = str(exp.warm_start) if exp.warm_start else None
    state = None
    for i, stage in enumerate(exp.stages):
        stage_out = exp.stage_dir(out, i)
        report(f"{exp.name}: stage {i + 1}/{len(exp.stages)} '{stage.name}' -> {stage_out}")
        if (stage_out / CHECKPOINT).exists():
            # the stage's search space and result settings in the file must still be the run's
            own = stage_result_settings(exp, i)
            try:
                opt = resume_run(
                    stage.creature or exp.creature,
                    stage_out,
                    generations=stage.generations,
                    requested={
                        **options,
                        **own,
                        "extra_generations": stage.extra_generations,
                        "parameters": _stage_space_to_resume(exp, i, stage_out),
                    },
                    progress=progress,
                )
            except ChangedSettingError as exc:
                raise OptimizationError(
                    f"{exp.path}: {exp.stage_key(i)}.{exc.name}: the stage's checkpoint "
                    f"({exc.checkpoint}) was started with {exc.started!r}, the file now says "
                    f"{exc.given!r}; restore it in the file or start the experiment in a new folder"
                ) from None
            if stage.creature is not None:
                _check_stage_physics(exp, i, opt)
        else:
            settings = stage_settings(
                exp,
                i,
                init,
                options,
                command=f"musclewalk optimize {checkout_relative(exp.path)} --out {checkout_relative(out)} "
                f"(stage {stage.name})",
            )
            opt = start_run(
                stage.creature or exp.creature,
                stage_out,
                settings,
                scale_passive=stage.scale_passive,
                progress=progress,
            )
        state = complete_run(opt, report)
        init = str(stage_out / "best.json")
    return state
