# Config checks and the helpers of all rule files. The config is validated against
# workflow/schemas/config.schema.yaml and cross-checked before any job is planned; every
# problem is one line naming the config file(s) and the key.
import json
import os
import re
import shlex
from pathlib import Path

import jsonschema
import yaml
from snakemake.utils import validate

# the software environment of every step (with --sdm conda): the project's environment.yml
CONDA_ENV = "../../environment.yml"

# the parts of a run name <creature>-<task>-<speed>[-<variant>] (the variant: an experiment
# file's, to tell runs of the same creature, task and speed apart); the Snakefile's wildcard
# constraints
from musclewalk.optimize.experiment import (CREATURE_PATTERN as NAME, RUN_NAME_PATTERN,
                                            SPEED_PATTERN as SPEED, TASK_PATTERN as TASK,
                                            VARIANT_PATTERN as VARIANT)
from musclewalk.optimize.space import ParameterSpace, without_starts
RUN = rf"{NAME}-{TASK}-{SPEED}(?:-{VARIANT})?"


def _tasks():
    """The task names `musclewalk optimize --task` knows: the files in models/tasks/."""
    from musclewalk.model.template import models_dir
    return tuple(sorted(p.stem for p in (models_dir() / "tasks").glob("*.yaml")))


TASKS = _tasks()


def _config_sources():
    """Where the config came from: the config files (--configfile extends config/config.yaml)
    and --config."""
    files = [str(f) for f in reversed(workflow.configfiles)]
    if workflow.config_settings.config:
        files.append("--config")
    return " + ".join(dict.fromkeys(files)) or "config"


def _config_error(key, message):
    raise ValueError(f"{_config_sources()}: {key}: {message}")


def _first_schema_error(schema_path):
    """The first schema violation as one line naming the key (snakemake's own validate prints
    the whole schema)."""
    schema = yaml.safe_load(open(schema_path))
    error = jsonschema.exceptions.best_match(
        jsonschema.validators.validator_for(schema)(schema).iter_errors(config))
    while error is not None and error.validator == "oneOf" and error.context:
        # a run is one of two forms: report the problem of the form it was meant to be
        form = 0 if isinstance(error.instance, dict) and "experiment" in error.instance else 1
        branch = [e for e in error.context if e.relative_schema_path[0] == form]
        if not branch:
            break
        error = jsonschema.exceptions.best_match(branch)
    if error is not None:
        key = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        _config_error(key.lstrip(".") or "(top level)", error.message)


def _creature(key, value):
    """(name in the run names, creature file) of a config creature: a preset name or the path
    of a creature YAML file (relative to the working directory), named by its file name."""
    from musclewalk.model.template import list_creatures
    if value.endswith((".yaml", ".yml")):
        if not os.path.isfile(value):
            _config_error(key, f"creature file {value!r} not found")
        name = os.path.splitext(os.path.basename(value))[0]
        if not re.fullmatch(NAME, name):
            _config_error(key, f"the file name of {value!r} names its runs and results: it may "
                          f"only have letters, digits and _")
        return name, value
    presets = list_creatures()
    if value not in presets:
        _config_error(key, f"unknown creature {value!r} (presets: {', '.join(presets)}; or the "
                      f"path of a creature .yaml file)")
    return value, str(presets[value])


def _experiments():
    """runs[i] -> its experiment (musclewalk.optimize.experiment.Experiment) for the runs given
    as experiment files."""
    from musclewalk.optimize.experiment import Experiment, ExperimentError
    out = {}
    for i, run in enumerate(config["runs"]):
        if "experiment" in run:
            path = run["experiment"]
            # relative to the working directory, else to the Snakefile's folder (--directory)
            if not os.path.isabs(path) and not os.path.exists(path):
                beside = os.path.join(workflow.basedir, path)
                path = beside if os.path.exists(beside) else path
            try:
                out[i] = Experiment.load(path)
            except ExperimentError as exc:
                _config_error(f"runs[{i}].experiment", str(exc))
    return out


def _run_fields(i):
    """(creature, task, speed, variant) of runs[i], from its experiment file when it has one."""
    run = config["runs"][i]
    if i in EXPERIMENTS:
        exp = EXPERIMENTS[i]
        task = exp.task if exp.task in TASKS else os.path.splitext(os.path.basename(exp.task))[0]
        return exp.creature, task, exp.speed, exp.variant
    if run["task"] not in TASKS:
        _config_error(f"runs[{i}].task", f"unknown task {run['task']!r} (models/tasks/: "
                      f"{', '.join(TASKS)})")
    return run["creature"], run["task"], run["speed"], ""


def _creatures():
    """(run-name creature -> creature file, config value -> run-name creature) for every
    creature of the config."""
    files, names, keys = {}, {}, {}
    entries = [(f"creatures[{i}]", c) for i, c in enumerate(config["creatures"])]
    entries += [(f"runs[{i}]." + ("experiment" if i in EXPERIMENTS else "creature"),
                 _run_fields(i)[0]) for i in range(len(config["runs"]))]
    for key, value in entries:
        name, path = _creature(key, value)
        if files.setdefault(name, path) != path:
            _config_error(key, f"{value!r} and {keys[name]} would both be named {name!r} in "
                          f"the results")
        keys.setdefault(name, key)
        names[value] = name
    return files, names


def _run_names():
    """Run name -> index in runs, for the runs of this budget (a run's budgets: default all)."""
    names = {}
    for i, run in enumerate(config["runs"]):
        for budget in run.get("budgets", []):
            if budget not in config["budgets"]:
                _config_error(f"runs[{i}].budgets", f"{budget!r} is not a budget (known: "
                              f"{', '.join(config['budgets'])})")
        if config["budget"] not in run.get("budgets", [config["budget"]]):
            continue
        creature, task, speed, variant = _run_fields(i)
        speed = str(float(speed)) if isinstance(speed, (int, float)) else str(speed)
        if not re.fullmatch(SPEED, speed):
            _config_error(f"runs[{i}].speed", f"{speed} cannot name a run: write it as a plain "
                          f"decimal such as 0.5")
        name = f"{CREATURE_NAMES[creature]}-{task}-{speed}" + (f"-{variant}" if variant else "")
        if name in names:
            _config_error(f"runs[{i}]", f"the same run as runs[{names[name]}] ({name})")
        names[name] = i
    return names


_first_schema_error(workflow.source_path("../schemas/config.schema.yaml"))
validate(config, "../schemas/config.schema.yaml")
if config["budget"] not in config["budgets"]:
    _config_error("budget", f"{config['budget']!r} is not a budget "
                  f"(known: {', '.join(config['budgets'])})")
EXPERIMENTS = _experiments()
CREATURE_FILES, CREATURE_NAMES = _creatures()
CREATURES = [CREATURE_NAMES[c] for c in config["creatures"]]
BUDGET = config["budgets"][config["budget"]]
RUN_INDEX = _run_names()
RUNS = list(RUN_INDEX)


# ------------------------------------------------------------------------ input functions
def creature_file(name):
    """The creature file of a run-name creature (a preset also when the config does not list
    it, e.g. for a target given on the command line)."""
    if name in CREATURE_FILES:
        return CREATURE_FILES[name]
    from musclewalk.model.template import resolve_creature
    return str(resolve_creature(name))


def model_data_files():
    """Everything else a build reads: the templates and the physics defaults."""
    from musclewalk.model.template import models_dir
    folder = models_dir()
    files = sorted(str(p) for p in (folder / "templates").glob("*.yaml"))
    return files + [str(p) for p in [folder / "physics.yaml"] if p.is_file()]


def run_parts(run):
    """{creature, task, speed, variant} of a run name (variant "" when it has none). Refuses a
    task that has no file in models/tasks/ (a run asked for by its output path)."""
    match = re.fullmatch(RUN_NAME_PATTERN, run)
    if match is None:
        raise ValueError(f"run '{run}': expected <creature>-<task>-<speed>[-<variant>]")
    parts = {k: v or "" for k, v in match.groupdict().items()}
    if parts["task"] not in TASKS:
        raise ValueError(f"task '{parts['task']}' of {run}: the tasks are {', '.join(TASKS)} "
                         f"(models/tasks/)")
    return parts


def run_model(wc):
    return f"results/models/{run_parts(wc.run)['creature']}.osim"


def warm_start(wc):
    """The committed result of a run as its warm start (budget warm_start)."""
    run_parts(wc.run)
    path = f"models/optimized/{wc.run}/best.json"
    return path if BUDGET["warm_start"] and os.path.exists(path) else []


def run_experiment(wc):
    """The experiment of a run, or None (a run asked for by its path, or given without one)."""
    i = RUN_INDEX.get(wc.run)
    return EXPERIMENTS.get(i) if i is not None else None


def experiment_file(wc):
    exp = run_experiment(wc)
    return [str(f) for f in exp.files] if exp is not None else []


def optimize_arguments(wc, input, threads):
    """What `musclewalk optimize` gets for a run: the experiment file itself with a budget that
    runs experiment stages, else one optimization of the run's creature, speed and objective
    with the budget's generations, seed and warm start."""
    exp = run_experiment(wc)
    if exp is not None and BUDGET.get("experiment_stages", False):
        return f"{exp.path} --workers {threads}"
    parts = run_parts(wc.run)
    args = (f"{input.osim} --task {parts['task']} --speed {parts['speed']} "
            f"--duration {BUDGET['duration']} "
            f"--generations {BUDGET['generations']} --seed {BUDGET['seed']} --workers {threads}")
    if exp is not None:
        args += f" --objective {exp.objective}"
        space = exp.stages[-1].parameters  # the search space of the experiment's result
        if space and input.init:  # around the committed result: its values, not the start values
            space = without_starts(space, ParameterSpace.of_creature(exp.creature).entries)
        if space:  # e.g. a controller feature beyond the paper
            args += f" --parameters {shlex.quote(json.dumps(space))}"
    if input.init:
        args += f" --init {input.init} --sigma {BUDGET['sigma']}"
    return args


def committed_inputs(*names):
    """Inputs (for `unpack`) of a step that reads these committed runs. ``runs`` are the run
    folders that exist (best.json present), what the script is given; ``files`` their parameter
    and model files, listed too so that replacing a committed result (its files overwritten, the
    folder's own time unchanged) makes the step run again."""
    return lambda wildcards: committed_run_inputs(names)


def committed_run_inputs(names):
    """`committed_inputs` of these run names, now."""
    runs = [f"models/optimized/{n}" for n in names if Path(f"models/optimized/{n}/best.json").exists()]
    return {"runs": runs, "files": [f"{run}/{name}" for run in runs for name in ("best.json", "optimized.osim")]}
