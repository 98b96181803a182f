"""Issue 10 item 5: a bad config/config.yaml fails before any job, naming the key."""

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
GOOD = yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def dry_run(tmp_path, config, *extra):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "all", "-n", "--cores", "1", "--configfile", str(path), *extra],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


def with_run(**changes):
    """GOOD with runs[0] given as creature, task and speed (not an experiment file), changed."""
    config = yaml.safe_load(yaml.safe_dump(GOOD))
    config["runs"][0] = {"creature": "HumanLegs", "task": "walk", "speed": 1.3, **changes}
    return config


@pytest.mark.parametrize(
    "config, words",
    [
        (with_run(speed=-1), ["speed", "-1"]),
        (with_run(speed="fast"), ["speed", "fast"]),
        (with_run(task="fly"), ["runs[0].task", "fly"]),
        (with_run(task="Run"), ["task", "Run"]),
        (with_run(creature="NoSuchBeast"), ["runs[0].creature", "NoSuchBeast"]),
        (with_run(budgets=["fast"]), ["runs[0].budgets", "fast", "quick"]),
        (with_run(budgets=[]), ["budgets"]),
        ({**GOOD, "budget": "nonsense"}, ["budget", "nonsense", "quick"]),
        ({**GOOD, "workers": 0}, ["workers"]),
        ({**GOOD, "creatures": ["HumanLegs", "Dragon"]}, ["creatures[1]", "Dragon"]),
    ],
)
def test_a_bad_config_fails_before_any_job(tmp_path, config, words):
    result = dry_run(tmp_path, config)
    assert result.returncode != 0
    out = result.stdout + result.stderr
    for word in words:
        assert word in out, out[-2000:]
    assert "Job stats" not in out and "rule optimize" not in out


def test_the_run_name_cannot_split_wrongly(tmp_path):
    """speed -1 used to plan HumanLegs-walk--1 and run --speed 1; now refused (above), and the
    wildcards only match a positive decimal speed."""
    result = dry_run(tmp_path, GOOD)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "HumanLegs-walk-1.3" in result.stdout + result.stderr


def _message(result):
    """The one line of ours in snakemake's error report."""
    lines = [
        line
        for line in (result.stdout + result.stderr).splitlines()
        if "config.yaml" in line and ": " in line and not line.startswith((" ", "Config"))
    ]
    assert len(lines) == 1, result.stdout + result.stderr
    return lines[0]


@pytest.mark.parametrize(
    "change, words",
    [
        # a speed the schema accepts but a run name cannot carry (str() writes 1e-05)
        (
            lambda c: c["runs"].__setitem__(0, {"creature": "HumanLegs", "task": "walk", "speed": 1e-05}),
            ["runs[0].speed", "1e-05", "plain decimal"],
        ),
        (
            lambda c: c["runs"].append(dict(c["runs"][0])),
            [f"runs[{len(GOOD['runs'])}]", "same run as runs[0]"],
        ),
        (
            lambda c: c.update(creatures=["HumanLegs", "nowhere/bird.yaml"]),
            ["creatures[1]", "'nowhere/bird.yaml' not found"],
        ),
    ],
)
def test_bad_config_is_one_line_naming_the_file_and_key(tmp_path, change, words):
    config = yaml.safe_load(yaml.safe_dump(GOOD))
    change(config)
    result = dry_run(tmp_path, config)
    assert result.returncode != 0
    line = _message(result)
    assert str(tmp_path / "config.yaml") in line, line
    for word in words:
        assert word in line, line


def test_a_command_line_override_is_named(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "all",
            "-n",
            "--cores",
            "1",
            "--directory",
            str(tmp_path),
            "--configfile",
            str(REPO / "config" / "config.yaml"),
            "--config",
            "budget=nonsense",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0
    line = _message(result)
    assert "config.yaml + --config: budget: 'nonsense' is not a budget (known: quick, paper)" in line, line


def test_a_creature_file_is_built_from_that_file(tmp_path):
    creature = tmp_path / "big_bird.yaml"
    creature.write_text((REPO / "models" / "creatures" / "ostrich.yaml").read_text())
    config = yaml.safe_load(yaml.safe_dump(GOOD))
    config["creatures"] = ["HumanLegs", str(creature)]
    config["runs"].append({"creature": str(creature), "task": "walk", "speed": 1.0})
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "all",
            "-n",
            "-p",
            "--cores",
            "1",
            "--directory",
            str(tmp_path / "work"),
            "--configfile",
            str(path),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout + result.stderr
    assert f"musclewalk build {creature} -o results/models/big_bird.osim" in out
    assert "--out results/optimize/big_bird-walk-1.0" in out


def test_an_unknown_task_asked_for_by_path_is_refused_and_a_known_one_is_passed_on(tmp_path):
    """Not only the config: results/optimize/<creature>-fly-1.3 names no task file and is refused;
    results/optimize/<creature>-run-1.3 optimizes with --task run (it used to walk silently)."""

    def dry(target):
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "snakemake",
                target,
                "-n",
                "-p",
                "--cores",
                "1",
                "--directory",
                str(tmp_path),
                "--configfile",
                str(REPO / "config" / "config.yaml"),
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )

    result = dry("results/optimize/HumanLegs-fly-1.3")
    assert result.returncode != 0
    out = result.stdout + result.stderr
    assert "task 'fly'" in out and "push" in out and "models/tasks/" in out, out[-2000:]
    assert "rule optimize:" not in out.replace("in rule optimize", "")
    result = dry("results/optimize/HumanLegs-run-1.3")
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-2000:]
    assert "--task run --speed 1.3" in out, out[-2000:]


def test_a_config_run_with_an_unknown_task_is_one_line(tmp_path):
    config = yaml.safe_load(yaml.safe_dump(GOOD))
    config["runs"][0] = {"creature": "HumanLegs", "task": "fly", "speed": 1.3}
    result = dry_run(tmp_path, config)
    assert result.returncode != 0
    line = _message(result)
    assert "runs[0].task" in line and "unknown task 'fly'" in line


def test_a_bad_experiment_file_is_named_with_its_key(tmp_path):
    bad = tmp_path / "fast.yaml"
    bad.write_text(yaml.safe_dump({"creature": "HumanLegs", "speed": -2}))
    config = yaml.safe_load(yaml.safe_dump(GOOD))
    config["runs"][0] = {"experiment": str(bad)}
    result = dry_run(tmp_path, config)
    out = result.stdout + result.stderr
    assert result.returncode != 0 and "runs[0].experiment" in out and f"{bad}: speed" in out
    assert "Job stats" not in out


def test_runs_from_experiment_files_take_their_objective_or_their_stages(tmp_path):
    """quick: one generation of the experiment's creature, speed and objective around the
    committed result; paper: the experiment file's own stages."""

    def planned(budget):
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "snakemake",
                "all",
                "-n",
                "-p",
                "--forceall",  # the plan, whatever a developer's results/ already holds
                "--cores",
                "1",
                "--config",
                f"budget={budget}",
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr[-2000:]
        return [line for line in result.stdout.splitlines() if "musclewalk optimize" in line]

    quick = planned("quick")
    assert any(
        "--objective geijtenbeek2013 --init models/optimized/Human-walk-1.3/best.json" in line
        for line in quick
    )
    paper = planned("paper")
    assert any("config/experiments/human-walk-1.3.yaml --workers" in line for line in paper)


def test_an_experiment_variant_is_a_run_beside_its_paper_run(tmp_path):
    """Two runs of the same creature, task and speed (the paper's and the human-objective Human)
    are told apart by the experiment's variant; the quick budget passes the experiment's search
    space (--parameters) and warm-starts from the committed human-objective result."""
    config = yaml.safe_load(yaml.safe_dump(GOOD))
    assert {"experiment": "config/experiments/human-walk-1.3-human-committed.yaml"} in config["runs"]
    result = dry_run(tmp_path, config, "-p", "--forceall")  # planned whatever results/ holds
    assert result.returncode == 0, result.stderr[-2000:]
    commands = [line for line in result.stdout.splitlines() if "musclewalk " in line]
    variant = [c for c in commands if "results/optimize/Human-walk-1.3-human " in c]
    assert len(variant) == 1, commands
    assert "--objective human-firstpeak-cycle-cadence-secondpeak --parameters " in variant[0]
    assert '"fplus.gastrocnemius": {"upper": 0.5}' in variant[0]
    assert '"ankle_fplus.onset": {"upper": -0.2}' in variant[0]  # the committed run's last stage
    assert '"passive.hip_axial.stiffness": {"lower": 0.6}' in variant[0]  # no start value
    assert '"swing_foot.release_time": {"lower": 0.2}' in variant[0]
    assert '"lift.ankle": {"lower": 0.2}' in variant[0]
    assert "--task walk " in variant[0]  # straight, as the committed result was trained
    assert "--init models/optimized/Human-walk-1.3-human/best.json" in variant[0]
    # a second experiment of the same run name is refused
    config["runs"].append({"experiment": "config/experiments/human-walk-1.3-human-knee.yaml"})
    twice = dry_run(tmp_path, config, "-p")
    assert twice.returncode != 0 and "the same run as runs[" in twice.stderr + twice.stdout
    assert any(
        "results/optimize/Human-walk-1.3 " in c and "--objective geijtenbeek2013" in c for c in commands
    )
    assert any("--out results/simulate/Human-walk-1.3-human" in c and "--speed 1.3 " in c for c in commands)
    assert any("compare $(dirname results/simulate/Human-walk-1.3-human/summary.json)" in c for c in commands)


def test_the_quick_budget_continues_a_committed_result_without_start_values(tmp_path):
    """Around a committed result the quick budget's one generation starts from its values: the
    experiment's start values (for its own first stage) are left out of --parameters, the
    features they name stay on."""
    experiment = yaml.safe_load((REPO / "config/experiments/human-walk-1.3-human-ankle.yaml").read_text())
    del experiment["variant"]  # the run Human-walk-1.3, which has a committed result
    experiment["warm_start"] = str(REPO / "models/optimized/Human-walk-1.3/best.json")
    (tmp_path / "e.yaml").write_text(yaml.safe_dump(experiment))
    config = yaml.safe_load(yaml.safe_dump(GOOD))
    config["runs"] = [{"experiment": str(tmp_path / "e.yaml")}]
    result = dry_run(tmp_path, config, "-p")
    assert result.returncode == 0, result.stderr[-2000:]
    [command] = [line for line in result.stdout.splitlines() if "musclewalk optimize" in line]
    assert "--init models/optimized/Human-walk-1.3/best.json" in command
    parameters = json.loads(shlex.split(command.partition("--parameters ")[2])[0])
    assert parameters == {
        "knee_overextension.*": {"free": True},
        "stance_tibialis.stretch_gain": {"free": True},
        "stance_tibialis.theta_off": {"free": True},
    }


def test_a_bad_variant_names_the_file_and_key(tmp_path):
    experiment = yaml.safe_load((REPO / "config/experiments/human-walk-1.3-human-knee.yaml").read_text())
    experiment["variant"] = "Human Knee"
    experiment["warm_start"] = str(REPO / "models/optimized/Human-walk-1.3/best.json")
    (tmp_path / "e.yaml").write_text(yaml.safe_dump(experiment))
    config = yaml.safe_load(yaml.safe_dump(GOOD))
    config["runs"] = [{"experiment": str(tmp_path / "e.yaml")}]
    result = dry_run(tmp_path, config)
    assert result.returncode != 0
    assert f"{tmp_path / 'e.yaml'}: variant: expected a name" in result.stdout + result.stderr


def test_a_run_for_the_paper_budget_only_is_not_planned_by_the_quick_one(tmp_path):
    config = yaml.safe_load(yaml.safe_dump(GOOD))
    config["runs"] = [
        {"creature": "HumanLegs", "task": "walk", "speed": 1.3},
        {"creature": "LongLegs", "task": "walk", "speed": 2.0, "budgets": ["paper"]},
    ]
    quick = dry_run(tmp_path, config)
    assert quick.returncode == 0, quick.stderr[-2000:]
    # (models/optimized/LongLegs-walk-2.0, committed, is an input of the table4 step either way)
    assert "results/optimize/HumanLegs-walk-1.3" in quick.stdout
    assert "results/optimize/LongLegs-walk-2.0" not in quick.stdout
    paper = dry_run(tmp_path, {**config, "budget": "paper"})
    assert paper.returncode == 0, paper.stderr[-2000:]
    assert "results/optimize/LongLegs-walk-2.0" in paper.stdout
