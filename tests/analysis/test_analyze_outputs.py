"""`musclewalk analyze RUN -o X.json --picture X.png`: bad outputs and windows are one error line
before any work, and the summary and the picture are written together or not at all."""

import json

import pytest

from musclewalk.analysis import filmstrip
from musclewalk.cli import main


@pytest.fixture(scope="module")
def run_dir(built_models, tmp_path_factory):
    out = tmp_path_factory.mktemp("analyze") / "run"
    assert (
        main(
            [
                "simulate",
                str(built_models["HumanLegs"]),
                "--speed",
                "1.3",
                "--duration",
                "0.1",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    return out


def _analyze(run_dir, *args):
    return main(["analyze", str(run_dir), *map(str, args)])


def _listing(folder):
    return sorted(p.name for p in folder.iterdir())


def test_out_is_a_directory(run_dir, tmp_path, capfd, one_error):
    target = tmp_path / "existing"
    target.mkdir()
    line = one_error(_analyze(run_dir, "-o", target, "--picture", tmp_path / "s.png"))
    assert str(target) in line and "-o" in line and "directory" in line
    assert _listing(tmp_path) == ["existing"] and _listing(target) == []


def test_picture_is_a_directory(run_dir, tmp_path, capfd, one_error):
    target = tmp_path / "pictures"
    target.mkdir()
    line = one_error(_analyze(run_dir, "-o", tmp_path / "a.json", "--picture", target))
    assert str(target) in line and "--picture" in line and "directory" in line
    assert _listing(tmp_path) == ["pictures"] and _listing(target) == []


def test_read_only_output_folder(run_dir, tmp_path, capfd, make_read_only, one_error):
    locked = tmp_path / "locked"
    locked.mkdir()
    make_read_only(locked)
    line = one_error(_analyze(run_dir, "-o", locked / "a.json"))
    assert str(locked) in line and "-o" in line and "read-only" in line
    line = one_error(_analyze(run_dir, "-o", tmp_path / "a.json", "--picture", locked / "s.png"))
    assert str(locked) in line and "--picture" in line and "read-only" in line
    assert _listing(tmp_path) == ["locked"] and _listing(locked) == []


@pytest.mark.parametrize("window", ["5,6", "0.2,0.3"])
def test_window_after_the_end_of_the_run(run_dir, tmp_path, capfd, window, one_error):
    old = tmp_path / "a.json"
    old.write_text('{"old": true}\n')
    line = one_error(_analyze(run_dir, "-o", old, "--picture", tmp_path / "s.png", "--window", window))
    assert "--window" in line and "0.10 s" in line and str(run_dir) in line
    assert old.read_text() == '{"old": true}\n' and _listing(tmp_path) == ["a.json"]


def test_window_running_past_the_end_is_clipped(run_dir, tmp_path, capfd):
    code = _analyze(run_dir, "-o", tmp_path / "a.json", "--picture", tmp_path / "s.png", "--window", "0.05,5")
    assert code == 0, capfd.readouterr().err
    assert json.loads((tmp_path / "a.json").read_text())["creature"] == "HumanLegs"
    assert (tmp_path / "s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_summary_and_picture_are_written_together(run_dir, tmp_path, capfd, monkeypatch, one_error):
    def broken(*args, **kwargs):
        raise ValueError("picture failed")

    monkeypatch.setattr(filmstrip, "filmstrip_png", broken)
    line = one_error(_analyze(run_dir, "-o", tmp_path / "a.json", "--picture", tmp_path / "s.png"))
    assert "picture failed" in line
    assert _listing(tmp_path) == []  # no summary without its picture


def test_same_file_for_summary_and_picture(run_dir, tmp_path, capfd, one_error):
    line = one_error(_analyze(run_dir, "-o", tmp_path / "a", "--picture", tmp_path / "a"))
    assert "--picture" in line and "-o" in line
    assert _listing(tmp_path) == []


@pytest.mark.parametrize("every", ["nan", "0", "-0.1"])
def test_bad_frame_interval(run_dir, tmp_path, capfd, every, one_error):
    line = one_error(
        _analyze(run_dir, "-o", tmp_path / "a.json", "--picture", tmp_path / "s.png", f"--every={every}")
    )
    assert "--every" in line
    assert _listing(tmp_path) == []


def test_summary_without_a_key(run_dir, tmp_path, capfd, one_error):
    import shutil

    broken = tmp_path / "run"
    shutil.copytree(run_dir, broken)
    summary = json.loads((broken / "summary.json").read_text())
    del summary["model"]
    (broken / "summary.json").write_text(json.dumps(summary))
    line = one_error(_analyze(broken, "-o", tmp_path / "a.json"))
    assert str(broken / "summary.json") in line and "model" in line
    assert not (tmp_path / "a.json").exists()


def test_summary_says_where_the_energy_goes_and_which_joint_limits_carry_load(run_dir, tmp_path):
    """metabolic_by_muscle: the heat terms per muscle add up (with the basal rate) to the mean
    metabolic rate; joint_limit_torques: one entry per joint limit of joint_limits.csv."""
    import pandas as pd

    from musclewalk.analysis.summary import BASAL_RATE, HEAT_TERMS

    assert _analyze(run_dir, "-o", tmp_path / "a.json") == 0
    summary = json.loads((tmp_path / "a.json").read_text())
    muscles = summary["metabolic_by_muscle"]
    assert len(muscles) == 20
    total = sum(m[f"{t}_W"] for m in muscles.values() for t in HEAT_TERMS)
    basal = BASAL_RATE * summary["body_mass_kg"]
    assert total + basal == pytest.approx(summary["mean_metabolic_rate_W"], rel=1e-9)
    costs = [sum(m[f"{t}_W"] for t in HEAT_TERMS) for m in muscles.values()]
    assert costs == sorted(costs, reverse=True)
    assert all(0.0 <= m["mean_activation"] <= 1.0 for m in muscles.values())
    limits = pd.read_csv(run_dir / "joint_limits.csv")
    assert set(summary["joint_limit_torques"]) == set(limits.columns) - {"time"}
    assert "limit_knee_angle_r" in summary["joint_limit_torques"]
    for row in summary["joint_limit_torques"].values():
        assert 0.0 <= row["mean_abs_Nm"] <= row["max_abs_Nm"] and 0.0 <= row["engaged_fraction"] <= 1.0


def test_excitation_variation_counts_the_switching_of_each_muscle():
    """Total variation per second: a muscle switching 0 <-> 1 every sample of a 1 s record at
    5 ms has 200 per s, a constant one 0; the most switching first."""
    import numpy as np

    from musclewalk.analysis.summary import _excitation_variation

    time = np.arange(201) * 0.005
    chatter = np.arange(201) % 2.0
    excitation = np.column_stack([np.full(201, 0.3), chatter])
    rows = _excitation_variation(["steady", "switching"], excitation, time)
    assert list(rows) == ["switching", "steady"]
    assert rows["switching"]["variation_per_s"] == pytest.approx(200.0)
    assert rows["steady"] == {"mean_excitation": pytest.approx(0.3), "variation_per_s": 0.0}


def test_excitation_sources_split_each_muscle_by_the_controller_rules(run_dir, tmp_path):
    """excitation_sources: per leg phase, the constant of the leg's state (eq 30-31), the
    muscle's own delayed force feedback (eq 23: the template's F+ gain x F / F_max, Δ_M later,
    only in stance) and the remainder; the three add up to the recorded excitation."""
    import numpy as np
    import pandas as pd

    from musclewalk.control.params import controller_parameter_specs
    from musclewalk.model.meta import load_meta
    from musclewalk.sim.bridge import control_model_from_meta

    assert _analyze(run_dir, "-o", tmp_path / "a.json") == 0
    sources = json.loads((tmp_path / "a.json").read_text())["excitation_sources"]
    muscles = pd.read_csv(run_dir / "muscles.csv")
    states = pd.read_csv(run_dir / "controller.csv")
    # the 0.1 s run: the right leg stands, the left swings (and prepares its stance)
    assert set(states.state_r) == {"stance"} and set(states.state_l) <= {"swing", "stance_preparation"}
    meta = load_meta(json.loads((run_dir / "summary.json").read_text())["model"])
    control_model = control_model_from_meta(meta, 0.005)
    defaults = {s.name: s.default for s in controller_parameter_specs(control_model)}
    vasti_r, vasti_l = sources["vasti_r"], sources["vasti_l"]
    assert set(vasti_r) == {"stance"} and set(vasti_l) == {"swing"}
    assert vasti_r["stance"]["constant"] == pytest.approx(defaults["const.stance.vasti"])
    assert vasti_l["swing"]["constant"] == pytest.approx(defaults["const.swing.vasti"])
    # F+ of the stance vasti from muscles.csv: force Δ steps earlier, zeros before
    i = [m.name for m in control_model.muscles].index("vasti_r")
    delay = int(control_model.delay_steps[i])
    force = muscles["vasti_r.force"].to_numpy() / control_model.muscles[i].fmax
    delayed = np.concatenate([np.zeros(delay), force[: len(force) - delay]])
    assert delay > 0
    assert vasti_r["stance"]["force_feedback"] == pytest.approx(defaults["fplus.vasti"] * delayed.mean())
    assert vasti_l["swing"]["force_feedback"] == 0.0  # no F+ in swing
    assert sources["hip_flexor_medial_r"]["stance"]["force_feedback"] == 0.0  # no F+ gain
    for phases in sources.values():
        for parts in phases.values():
            assert parts["constant"] + parts["force_feedback"] + parts["remainder"] == pytest.approx(
                parts["excitation"]
            )
