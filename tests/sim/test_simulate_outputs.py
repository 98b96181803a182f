"""`musclewalk simulate --out DIR`: the folder is replaced as a whole when the simulation has
finished (no stale files of an earlier run, an interrupted or failed run leaves the old folder
intact), and bad options or output folders are one error line before anything is simulated."""

import json
import shutil
from pathlib import Path

import pytest

from musclewalk.cli import main
from musclewalk.io_checks import RUN_MARKER
from musclewalk.sim import outputs
from musclewalk.sim.outputs import FILES
from musclewalk.sim.runner import Simulator

DURATION = "0.02"


def _simulate(built_models, out, *extra):
    return main(
        [
            "simulate",
            str(built_models["HumanLegs"]),
            "--speed",
            "1.3",
            "--duration",
            DURATION,
            "--out",
            str(out),
            *map(str, extra),
        ]
    )


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _no_temporaries(parent):
    assert [p.name for p in parent.iterdir() if p.name.startswith(".")] == []


@pytest.fixture
def no_simulation(monkeypatch):
    """Fail the test if anything gets as far as simulating."""

    def run(*args, **kwargs):
        raise AssertionError("simulated despite bad input")

    monkeypatch.setattr(Simulator, "run", run)


@pytest.fixture
def old_run(built_models, tmp_path, capfd):
    """A finished run folder, plus the files an analysis wrote into it."""
    out = tmp_path / "run"
    assert _simulate(built_models, out) == 0, capfd.readouterr().err
    (out / "analysis.json").write_text('{"old": true}\n')
    (out / "strip.png").write_bytes(b"old picture")
    capfd.readouterr()
    return out


def test_a_new_run_replaces_the_whole_folder(built_models, old_run, capfd):
    summary = json.loads((old_run / "summary.json").read_text())
    assert _simulate(built_models, old_run, "--push", "0.01,20,0") == 0, capfd.readouterr().err
    assert sorted(p.name for p in old_run.iterdir()) == sorted(FILES + (RUN_MARKER,))  # nothing stale
    new = json.loads((old_run / "summary.json").read_text())
    assert new["pushes"] and not summary["pushes"]
    _no_temporaries(old_run.parent)


def test_an_empty_folder_is_used(built_models, tmp_path, capfd):
    out = tmp_path / "empty"
    out.mkdir()
    assert _simulate(built_models, out) == 0, capfd.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES + (RUN_MARKER,))


def test_interrupted_simulation_keeps_the_old_folder(built_models, old_run, capfd, monkeypatch, one_error):
    before = _snapshot(old_run)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Simulator, "run", interrupted)
    line = one_error(_simulate(built_models, old_run), expected=130)
    assert line == "musclewalk simulate: interrupted"
    assert _snapshot(old_run) == before
    _no_temporaries(old_run.parent)


def test_interrupt_while_writing_keeps_the_old_folder(built_models, old_run, capfd, monkeypatch, one_error):
    before = _snapshot(old_run)
    write_all = outputs._write_all

    def half_written(folder, *args):
        write_all(folder, *args)
        (folder / "summary.json").write_text('{"half": ')
        raise KeyboardInterrupt

    monkeypatch.setattr(outputs, "_write_all", half_written)
    line = one_error(_simulate(built_models, old_run), expected=130)
    assert "interrupted" in line
    assert _snapshot(old_run) == before
    _no_temporaries(old_run.parent)


def test_out_that_is_a_file(built_models, tmp_path, capfd, no_simulation, one_error):
    out = tmp_path / "results.txt"
    out.write_text("keep me\n")
    line = one_error(_simulate(built_models, out))
    assert str(out) in line and "--out" in line and "not a directory" in line
    assert out.read_text() == "keep me\n"


def test_out_in_a_read_only_folder(built_models, tmp_path, capfd, no_simulation, make_read_only, one_error):
    parent = tmp_path / "locked"
    parent.mkdir()
    make_read_only(parent)
    line = one_error(_simulate(built_models, parent / "run"))
    assert str(parent) in line and "--out" in line and "read-only" in line
    assert list(parent.iterdir()) == []
    # a missing folder below a read-only one
    line = one_error(_simulate(built_models, parent / "a" / "run"))
    assert str(parent) in line and "read-only" in line


def test_read_only_run_folder(built_models, old_run, capfd, no_simulation, make_read_only, one_error):
    before = _snapshot(old_run)
    make_read_only(old_run)
    line = one_error(_simulate(built_models, old_run))
    assert str(old_run) in line and "read-only" in line
    assert _snapshot(old_run) == before


def test_out_that_another_program_wrote(built_models, tmp_path, capfd, no_simulation, one_error):
    out = tmp_path / "documents"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    line = one_error(_simulate(built_models, out))
    assert str(out) in line and "--out" in line and RUN_MARKER in line
    assert _snapshot(out) == {"notes.txt": b"mine\n"}
    # a file named like an output does not make a folder musclewalk's to replace
    (out / "summary.json").write_text("{}")
    assert _simulate(built_models, out) == 2
    assert RUN_MARKER in capfd.readouterr().err
    assert _snapshot(out) == {"notes.txt": b"mine\n", "summary.json": b"{}"}


def test_out_holding_the_model(built_models, old_run, capfd, no_simulation, one_error):
    model = old_run / "HumanLegs.osim"
    shutil.copy(built_models["HumanLegs"], model)
    shutil.copy(built_models["HumanLegs"].with_name("HumanLegs.meta.json"), old_run)
    before = _snapshot(old_run)
    code = main(["simulate", str(model), "--speed", "1.3", "--duration", DURATION, "--out", str(old_run)])
    line = one_error(code)
    assert str(model) in line and "--out" in line
    assert _snapshot(old_run) == before


@pytest.mark.parametrize(
    "option, value",
    [
        ("--push", "0.1,nan,0"),
        ("--push", "nan,10,0"),
        ("--push", "0.1,10,inf"),
        ("--heading", "nan"),
        ("--heading", "inf"),
        ("--turn-rate", "nan"),
        ("--turn-rate", "inf"),
        ("--turn-rate", "-5"),
        ("--push-magnitude", "nan"),
        ("--push-magnitude", "-inf"),
        ("--seed", "-1"),
        ("--control-interval", "nan"),
        ("--control-interval", "0"),
        ("--control-interval", "-0.001"),
        ("--control-interval", "0.01"),
        ("--speed", "nan"),
        ("--speed", "inf"),
        ("--duration", "nan"),
        ("--duration", "inf"),
        ("--terrain-slope", "nan"),
        ("--terrain-slope", "60"),
        ("--random-pushes", "-1"),
        ("--accuracy", "0"),
        ("--accuracy", "nan"),
        ("--accuracy", "0.5"),
        ("--fixed-step", "-0.001"),
        ("--fixed-step", "0.01"),
        ("--fixed-step", "1e-7"),
        ("--fixed-step", "nan"),
    ],
)
def test_bad_number_is_one_line_before_simulating(
    built_models, tmp_path, capfd, no_simulation, option, value, one_error
):
    out = tmp_path / "run"
    line = one_error(_simulate(built_models, out, f"{option}={value}"))
    assert line.startswith(f"musclewalk simulate: error: {option}:"), line
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_accuracy_option_sets_the_integrators_and_is_recorded(built_models, tmp_path):
    """--accuracy replaces the model's integrator accuracy (models/physics.yaml) for one run;
    summary.json records the accuracy used either way."""
    default, tighter = tmp_path / "default", tmp_path / "tighter"
    assert _simulate(built_models, default) == 0
    assert _simulate(built_models, tighter, "--accuracy", "0.003") == 0
    used = [json.loads((d / "summary.json").read_text())["integrator_accuracy"] for d in (default, tighter)]
    assert used == [0.01, 0.003]


def test_fixed_step_option_is_used_and_recorded(built_models, tmp_path):
    """--fixed-step replaces the error-controlled steps for one run; summary.json records it
    (and has no such key for a run with error-controlled steps)."""
    default, fixed = tmp_path / "default", tmp_path / "fixed"
    assert _simulate(built_models, default) == 0
    assert _simulate(built_models, fixed, "--fixed-step", "0.0005") == 0
    summaries = [json.loads((d / "summary.json").read_text()) for d in (default, fixed)]
    assert "integrator_fixed_step" not in summaries[0]
    assert summaries[1]["integrator_fixed_step"] == 0.0005


def test_a_run_folder_is_analyzed_from_any_working_directory(built_models, tmp_path, monkeypatch, capfd):
    """summary.json names the model and the parameter file by their absolute paths: given
    relative to where `simulate` ran, they are still found by `analyze` run from elsewhere (its
    excitation split re-reads the parameters)."""
    model = built_models["HumanLegs"]
    monkeypatch.chdir(model.parent)
    Path("params.json").write_text(json.dumps({"controller": {}}))
    out = tmp_path / "run"
    args = ["simulate", model.name, "--params", "params.json", "--fill-defaults"]
    assert main([*args, "--speed", "1.3", "--duration", "0.05", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["model"], summary["parameters"]) == (str(model), str(model.parent / "params.json"))
    monkeypatch.chdir(tmp_path)
    capfd.readouterr()
    assert main(["analyze", str(out), "-o", str(tmp_path / "a.json")]) == 0, capfd.readouterr().err
    assert json.loads((tmp_path / "a.json").read_text())["excitation_sources"] is not None
