"""`musclewalk analyze RUN -o X.json --picture X.png`: bad outputs and windows are one error line
before any work, and the summary and the picture are written together or not at all."""

import json

import numpy as np
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
    # fibre_work: -F v split into produced (shortening) and absorbed (lengthening) power
    work = summary["fibre_work"]
    csv = pd.read_csv(run_dir / "muscles.csv")
    for name, row in work["by_muscle"].items():
        power = -(csv[f"{name}.fiber_force"] * csv[f"{name}.fiber_velocity"]).to_numpy()
        assert row["produced_W"] == pytest.approx(power.clip(min=0).mean(), rel=1e-9, abs=1e-12)
        assert row["absorbed_W"] == pytest.approx((-power).clip(min=0).mean(), rel=1e-9, abs=1e-12)
    assert set(work["by_muscle"]) == set(muscles)
    assert work["net_W"] == pytest.approx(work["produced_W"] - work["absorbed_W"])
    assert work["produced_W"] > 0 and work["absorbed_W"] > 0
    for name, row in work["by_muscle"].items():
        active = -(csv[f"{name}.active_fiber_force"] * csv[f"{name}.fiber_velocity"]).to_numpy()
        assert row["active_produced_W"] == pytest.approx(active.clip(min=0).mean(), rel=1e-9, abs=1e-12)
        assert row["active_absorbed_W"] == pytest.approx((-active).clip(min=0).mean(), rel=1e-9, abs=1e-12)
    assert work["active_produced_W"] == pytest.approx(
        sum(r["active_produced_W"] for r in work["by_muscle"].values())
    )
    # the passive fibre force's (F - F_active) power taken from the motion, per muscle and summed
    for name, row in work["by_muscle"].items():
        passive = csv[f"{name}.fiber_force"] - csv[f"{name}.active_fiber_force"]
        expected = (passive * csv[f"{name}.fiber_velocity"]).mean()
        assert row["passive_absorbed_W"] == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert work["passive_absorbed_W"] == pytest.approx(
        sum(r["passive_absorbed_W"] for r in work["by_muscle"].values())
    )
    operating = summary["operating_range"]
    assert set(operating["by_muscle"]) == set(muscles)
    for name, row in operating["by_muscle"].items():
        length = csv[f"{name}.norm_fiber_length"]
        assert row["norm_fiber_length"]["max"] == pytest.approx(length.max())
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
    assert rows["steady"]["mean_excitation"] == pytest.approx(0.3)
    assert rows["steady"]["variation_per_s"] == 0.0
    # a 1 s record is shorter than the 2 s spectral segments: no tremor figures
    assert rows["steady"]["variance_share_above_6Hz"] is None and rows["steady"]["tremor_peak_Hz"] is None
    # sampled too coarsely for a bin above 6 Hz (every 0.08 s: bins up to 6.25 Hz at most)
    coarse = np.arange(101) * 0.08
    rows = _excitation_variation(["slow"], np.sin(coarse)[:, None], coarse)
    assert rows["slow"]["rms_above_6Hz"] is None


def test_excitation_variation_finds_a_tremor_above_the_gait_band():
    """An excitation with a 1 Hz gait pattern plus a 9 Hz oscillation of the same amplitude: half
    its variance above 6 Hz, peaking at 9 Hz, with the oscillation's RMS (0.2 / sqrt 2); the
    pattern alone: almost none; a constant: 0 and no peak."""
    import numpy as np

    from musclewalk.analysis.summary import _excitation_variation

    time = np.arange(2001) * 0.005
    gait = 0.3 + 0.2 * np.sin(2 * np.pi * 1.0 * time)
    tremor = gait + 0.2 * np.sin(2 * np.pi * 9.0 * time)
    excitation = np.column_stack([gait, tremor, np.full_like(time, 0.2)])
    rows = _excitation_variation(["gait", "tremor", "steady"], excitation, time)
    assert rows["tremor"]["variance_share_above_6Hz"] == pytest.approx(0.5, abs=0.02)
    assert rows["tremor"]["rms_above_6Hz"] == pytest.approx(0.2 / np.sqrt(2), rel=0.03)
    assert rows["tremor"]["tremor_peak_Hz"] == pytest.approx(9.0)
    assert rows["gait"]["variance_share_above_6Hz"] < 0.01 and rows["gait"]["rms_above_6Hz"] < 0.01
    assert rows["steady"]["variance_share_above_6Hz"] == 0.0 and rows["steady"]["tremor_peak_Hz"] is None


@pytest.mark.parametrize("ankle_onset", [None, 0.0])
def test_excitation_sources_split_each_muscle_by_the_controller_rules(built_models, tmp_path, ankle_onset):
    """excitation_sources: with every target-feature gain and the lift-off terms at 0, the
    excitation is the leg state's constant plus the muscle's own F+ feedback Δ_M later, gated by
    the state when it was sensed: the recomputed constant and force feedback leave no remainder
    (up to muscles.csv's 6 digits) through the legs' changes of state (stance -> lift-off,
    stance preparation -> stance); the constants are the template's. With ankle_fplus.onset on
    the ankle extensors' F+ is recomputed with its gate on the recorded d_S, which acted."""
    import pandas as pd

    from musclewalk.control.params import controller_parameter_specs
    from musclewalk.model.meta import load_meta
    from musclewalk.sim.bridge import control_model_from_meta

    off = {f"gain.{name}": 0.0 for name in ("trunk.kq", "trunk.kw", "swing.kq", "prep.kq", "prep.kw")}
    off.update({"gain.knee.kq": 0.0, "gain.ankle.kq": 0.0, "lift.hip": 0.0, "lift.knee": 0.0})
    if ankle_onset is not None:
        off.update({"ankle_fplus.onset": ankle_onset, "ankle_fplus.ramp": 0.1})
    params = tmp_path / "no_feature_feedback.json"
    params.write_text(json.dumps(off))
    run = tmp_path / "run"
    model = built_models["HumanLegs"]
    args = ["simulate", str(model), "--params", str(params), "--fill-defaults", "--speed", "1.3"]
    assert main([*args, "--duration", "0.5", "--out", str(run)]) == 0
    assert _analyze(run, "-o", tmp_path / "a.json") == 0
    sources = json.loads((tmp_path / "a.json").read_text())["excitation_sources"]
    states = pd.read_csv(run / "controller.csv")
    assert {"stance", "lift_off"} <= set(states.state_r) and {"stance_preparation", "stance"} <= set(
        states.state_l
    )
    for phases in sources.values():
        for parts in phases.values():
            assert parts["remainder"] == pytest.approx(0.0, abs=1e-5)
    defaults = {
        s.name: s.default
        for s in controller_parameter_specs(control_model_from_meta(load_meta(model), 0.005))
    }
    assert sources["vasti_r"]["stance"]["constant"] == pytest.approx(defaults["const.stance.vasti"])
    assert sources["vasti_l"]["swing"]["constant"] == pytest.approx(defaults["const.swing.vasti"])
    assert sources["vasti_l"]["stance"]["force_feedback"] > 0.0  # F+ in stance
    assert sources["vasti_l"]["swing"]["force_feedback"] == 0.0  # none in swing
    assert sources["hip_flexor_medial_r"]["stance"]["force_feedback"] == 0.0  # no F+ gain
    if ankle_onset is not None:  # a stance foot ahead of the onset: its F+ was gated
        leg_length = control_model_from_meta(load_meta(model), 0.005).leg_length
        ahead = states.d_S_l[states.state_l == "stance"] > (ankle_onset + 0.05) * leg_length
        assert ahead.any()


def test_the_recorded_feedback_by_source_agrees_with_the_recomputed_split(built_models, tmp_path):
    """With the paper's default controller (every feature on), feedback_sources.npz's rows,
    delivered after each muscle's delay, agree with what analyze recomputes from muscles.csv: the
    F+ row with ``force_feedback``, the other rows plus the clipping with ``remainder``; the
    swing hip target acts on hip muscles only, F+ on the knee and ankle extensors only."""
    run = tmp_path / "run"
    model = built_models["HumanLegs"]
    assert main(["simulate", str(model), "--speed", "1.3", "--duration", "0.6", "--out", str(run)]) == 0
    assert (run / "feedback_sources.npz").is_file()
    assert _analyze(run, "-o", tmp_path / "a.json") == 0
    sources = json.loads((tmp_path / "a.json").read_text())["excitation_sources"]
    seen = set()
    for muscle, phases in sources.items():
        for parts in phases.values():
            by_source = parts["feedback_by_source"]
            seen |= set(by_source)
            assert by_source.get("force_feedback", 0.0) == pytest.approx(parts["force_feedback"], abs=1e-4)
            others = sum(v for k, v in by_source.items() if k != "force_feedback")
            assert others + parts["clipping"] == pytest.approx(parts["remainder"], abs=1e-4)
            if any(k.startswith("upper_leg_") for k in by_source):
                assert muscle.startswith(("hip_", "hamstrings", "rectus_femoris")), muscle
            if "force_feedback" in by_source:
                assert muscle.startswith(("vasti", "gastrocnemius", "soleus", "rectus_femoris")), muscle
    assert {
        "trunk_sagittal",
        "trunk_coronal",
        "upper_leg_sagittal",
        "foot_sagittal",
        "force_feedback",
    } <= seen
    # a recording one control step off no longer reproduces the excitations: no split reported
    with np.load(run / "feedback_sources.npz") as data:
        arrays = dict(data)
    arrays["feedback"] = np.roll(arrays["feedback"], 1, axis=0)
    np.savez_compressed(run / "feedback_sources.npz", **arrays)
    assert _analyze(run, "-o", tmp_path / "b.json") == 0
    shifted = json.loads((tmp_path / "b.json").read_text())["excitation_sources"]
    assert not any("feedback_by_source" in parts for phases in shifted.values() for parts in phases.values())


def test_leg_phases_time_each_fsm_state_and_measure_the_step_at_touch_down(tmp_path):
    """leg_phases: mean duration of complete state visits after the start-up, and d_S, step
    length and hip angle at each touch-down (contact False -> True), per leg."""
    import numpy as np
    import pandas as pd

    from musclewalk.analysis.summary import _leg_phases

    k = np.arange(500)  # 10 ms samples, a 1 s cycle: stance 0.6 s, lift-off 0.1 s, swing 0.3 s
    t = k / 100.0
    cycle = np.where(k % 100 < 60, "stance", np.where(k % 100 < 70, "lift_off", "swing"))
    contact = k % 100 < 70
    frame = pd.DataFrame(
        {
            "t": t,
            "state_r": cycle,
            "state_l": "stance",
            "contact_r": contact,
            "contact_l": True,
            "d_S_r": 0.3,
            "d_S_l": -0.2,
            "hip_flexion_r": 0.25,
            "hip_flexion_l": -0.1,
        }
    )
    frame.to_csv(tmp_path / "controller.csv", index=False)
    phases = _leg_phases(tmp_path / "controller.csv", simulated_time=5.0)
    assert phases["from_s"] == 2.0
    right = phases["r"]
    assert right["mean_state_duration_s"] == pytest.approx({"stance": 0.6, "lift_off": 0.1, "swing": 0.3})
    assert right["touch_downs"] == 2  # at 3.0 and 4.0 s (2.0 s is the window's first sample)
    assert right["foot_ahead_of_com_at_touch_down_m"] == pytest.approx(0.3)
    assert right["step_length_m"] == pytest.approx(0.5)
    assert right["hip_flexion_at_touch_down_rad"] == pytest.approx(0.25)
    assert phases["l"]["touch_downs"] == 0 and phases["l"]["step_length_m"] is None
    assert phases["l"]["mean_state_duration_s"] == {}
    assert _leg_phases(tmp_path / "missing.csv", 5.0) is None


def test_operating_range_finds_stretched_and_idle_muscles():
    """operating_range: a muscle whose passive fibre force averages more than 10 % of F_max is
    stretched, one excited but never pulling 2 % of F_max is idle (a slack tendon), a muscle
    near its optimal length and pulling is neither; lengths and forces as recorded."""
    from types import SimpleNamespace

    import numpy as np

    from musclewalk.analysis.summary import _operating_range

    names = ["spring", "slack", "working"]
    meta = SimpleNamespace(
        muscles=[SimpleNamespace(max_isometric_force=f) for f in (1000, 500, 800)], total_mass=50.0
    )
    n = 50
    data = {
        "norm_fiber_length": np.column_stack(
            [np.linspace(1.4, 1.6, n), np.full(n, 0.44), np.linspace(0.8, 1.1, n)]
        ),
        "fiber_force": np.column_stack([np.full(n, 600.0), np.full(n, 1.0), np.linspace(0, 400, n)]),
        "active_fiber_force": np.column_stack([np.full(n, 100.0), np.full(n, 1.0), np.linspace(0, 400, n)]),
        "excitation": np.column_stack([np.full(n, 0.2), np.full(n, 0.4), np.full(n, 0.3)]),
    }
    out = _operating_range(meta, names, data.__getitem__)
    assert out["stretched"] == ["spring"]
    assert out["idle"] == ["slack"]
    spring = out["by_muscle"]["spring"]
    assert spring["mean_passive_force_N"] == pytest.approx(500.0)
    assert spring["norm_fiber_length"] == pytest.approx({"min": 1.4, "mean": 1.5, "max": 1.6})
    assert spring["peak_force_share_of_fmax"] == pytest.approx(0.6)
    assert out["by_muscle"]["working"]["mean_passive_force_N"] == 0.0
    assert out["by_muscle"]["slack"]["mean_excitation"] == pytest.approx(0.4)
    # the objective measure passive_fibre_force over the run: 500 N in body weights
    assert out["passive_fibre_force_BW"] == pytest.approx(500.0 / (50.0 * 9.80665))


def test_filmstrip_of_a_folder_without_a_usable_summary_names_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a simulation folder"):
        filmstrip.skeleton_frames(tmp_path)
    (tmp_path / "summary.json").write_text('{"creature": "HumanLegs"}\n')
    with pytest.raises(ValueError, match=r"summary\.json: model: missing"):
        filmstrip.filmstrip_png(tmp_path)
