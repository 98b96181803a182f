"""A truncated or corrupt .osim, an OpenSim model musclewalk did not build, or a model beside
another model's metadata: `simulate`, `render`, `info` and `analyze` say so in one line naming the
file, exit 2 and write nothing."""

import json
import shutil
from pathlib import Path

import pytest

from musclewalk.cli import main

REFERENCE = (
    Path(__file__).resolve().parents[3]
    / "shared"
    / "reference"
    / "opensim-gait10dof18musc"
    / "gait10dof18musc.osim"
)


def _copy_model(built_models, name, folder, as_name=None, meta_of=None):
    """Copy of a built model (and the metadata of ``meta_of``, default its own) in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = as_name or name
    osim = folder / f"{stem}.osim"
    shutil.copy(built_models[name], osim)
    src = built_models[meta_of or name]
    shutil.copy(src.with_name(src.stem + ".meta.json"), folder / f"{stem}.meta.json")
    return osim


def _truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _commands(model, out):
    return {
        "simulate": [
            "simulate",
            str(model),
            "--speed",
            "1.3",
            "--duration",
            "0.02",
            "--out",
            str(out / "run"),
        ],
        "render": ["render", str(model), "-o", str(out / "model.png")],
        "info": ["info", str(model)],
    }


@pytest.mark.parametrize("command", ["simulate", "render", "info"])
def test_truncated_model(built_models, tmp_path, capfd, command, one_error):
    model = _copy_model(built_models, "HumanLegs", tmp_path / "m")
    _truncate(model)
    out = tmp_path / "out"
    line = one_error(main(_commands(model, out)[command]))
    assert line.startswith(f"musclewalk {command}: error: {model}:")
    assert "truncated or corrupt" in line
    assert not out.exists()


def test_analyze_a_run_whose_model_was_truncated(built_models, tmp_path, capfd, one_error):
    model = _copy_model(built_models, "HumanLegs", tmp_path / "m")
    run = tmp_path / "run"
    assert main(["simulate", str(model), "--speed", "1.3", "--duration", "0.02", "--out", str(run)]) == 0, (
        capfd.readouterr().err
    )
    capfd.readouterr()
    _truncate(model)
    out = tmp_path / "analysis"
    line = one_error(main(["analyze", str(run), "-o", str(out / "a.json"), "--picture", str(out / "a.png")]))
    assert str(model) in line and "truncated or corrupt" in line
    assert not out.exists()


@pytest.mark.parametrize("command", ["simulate", "render", "info"])
def test_model_beside_the_metadata_of_another_model(built_models, tmp_path, capfd, command, one_error):
    model = _copy_model(built_models, "HumanLegs", tmp_path / "m", meta_of="Human")
    out = tmp_path / "out"
    line = one_error(main(_commands(model, out)[command]))
    assert str(model) in line and "does not match its metadata" in line
    assert "no body lumbar" in line  # names what is missing
    assert not out.exists()


def test_more_muscles_than_the_metadata(built_models, tmp_path, capfd, one_error):
    model = _copy_model(built_models, "Human", tmp_path / "m", meta_of="HumanLegs")
    line = one_error(main(["info", str(model)]))
    assert str(model) in line and "does not match" in line and "40 muscles" in line


@pytest.mark.skipif(not REFERENCE.is_file(), reason="shared reference model not available")
@pytest.mark.parametrize("command", ["simulate", "render", "info"])
def test_foreign_model_with_copied_metadata(built_models, tmp_path, capfd, command, one_error):
    model = tmp_path / "m" / "gait10dof18musc.osim"
    model.parent.mkdir()
    shutil.copy(REFERENCE, model)
    src = built_models["HumanLegs"]
    shutil.copy(src.with_name("HumanLegs.meta.json"), model.with_name("gait10dof18musc.meta.json"))
    out = tmp_path / "out"
    line = one_error(main(_commands(model, out)[command]))
    assert str(model) in line and "does not match its metadata" in line
    assert "no body upper_leg_r" in line and "no controller excitation_controller" in line
    assert not out.exists()


@pytest.mark.skipif(not REFERENCE.is_file(), reason="shared reference model not available")
@pytest.mark.parametrize("command", ["simulate", "info"])
def test_foreign_model_without_metadata(tmp_path, capfd, command, one_error):
    model = tmp_path / "m" / "gait10dof18musc.osim"
    model.parent.mkdir()
    shutil.copy(REFERENCE, model)
    out = tmp_path / "out"
    line = one_error(main(_commands(model, out)[command]))
    assert "gait10dof18musc.meta.json" in line and "metadata not found" in line
    assert not out.exists()


def test_intact_model_passes_info(built_models, capfd):
    assert main(["info", str(built_models["HumanLegs"])]) == 0
    assert "HumanLegs: 9 bodies" in capfd.readouterr().out


def test_render_output_checks(built_models, tmp_path, capfd, make_read_only, one_error):
    target = tmp_path / "picture.png"
    target.mkdir()
    line = one_error(main(["render", str(built_models["HumanLegs"]), "-o", str(target)]))
    assert str(target) in line and "-o" in line and "directory" in line
    locked = tmp_path / "locked"
    locked.mkdir()
    make_read_only(locked)
    line = one_error(main(["render", str(built_models["HumanLegs"]), "-o", str(locked / "m.png")]))
    assert str(locked) in line and "read-only" in line
    assert list(locked.iterdir()) == [] and list(target.iterdir()) == []


def test_metadata_that_is_not_json(built_models, tmp_path, capfd, one_error):
    model = _copy_model(built_models, "HumanLegs", tmp_path / "m")
    model.with_name("HumanLegs.meta.json").write_text('{"musclewalk_meta": 1, "bodies": [')
    line = one_error(main(["info", str(model)]))
    assert "HumanLegs.meta.json" in line and "not valid JSON" in line
    json.loads(built_models["HumanLegs"].with_name("HumanLegs.meta.json").read_text())
