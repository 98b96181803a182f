"""`musclewalk compare`: gait cycles, clinical angles from segment orientations, metrics against
the normative reference, and a lab trial (OpenSim's subject01) through the same path."""

import json
import shutil

import numpy as np
import pytest
from cli_run import run_cli
from lxml import etree
from subject01 import SUBJECT, TRIAL, needs_subject

from musclewalk.analysis import compare, gait, reference
from musclewalk.analysis.reference import CURVES, KINETICS, PERCENT
from musclewalk.sim.outputs import read_storage, write_storage


def cli(*args):
    return run_cli("compare", *args)


def test_the_reference_scored_against_itself_is_perfect():
    ref = reference.normative()
    gvs = {}
    for variable, (mean, sd) in ref.curves.items():
        m = compare.curve_metrics(mean, mean, sd)
        assert m["rmse_deg"] == 0 and m["percent_within_1sd"] == 100
        assert m["r"] == pytest.approx(1.0)
        gvs[variable] = m["rmse_deg"]
    assert compare.gait_profile_score(gvs) == 0
    assert set(ref.curves) == set(CURVES) | set(KINETICS) and len(PERCENT) == 51
    # a curve one SD above the reference everywhere: |z| = 1, RMSE = RMS of the SD
    mean, sd = ref.curves["knee_flexion"]
    m = compare.curve_metrics(mean + sd, mean, sd)
    assert m["mean_abs_z"] == pytest.approx(1.0)
    assert m["rmse_deg"] == pytest.approx(np.sqrt(np.mean(sd**2)))
    assert m["rmse_offset_removed_deg"] < m["rmse_deg"]


def test_phase_errors_put_each_error_in_its_gait_phase_and_add_up_to_the_rmse():
    """A knee curve that stays flexed by 20° in terminal swing only (87-100 %): the whole error,
    offset removed, is shared out by Perry's phases; terminal swing carries the largest share and a
    positive mean error, the shares add up to 100 %, and the squared errors to the offset-removed
    RMSE of curve_metrics."""
    mean, sd = reference.normative().curves["knee_flexion"]
    late = mean + np.where(PERCENT >= 87.0, 20.0, 0.0)
    phases = compare.phase_errors(late, mean)
    assert [name for name, _, _ in compare.GAIT_PHASES] == list(phases)
    assert sum(p["share_percent"] for p in phases.values()) == pytest.approx(100.0)
    assert max(phases, key=lambda n: phases[n]["share_percent"]) == "terminal_swing"
    assert phases["terminal_swing"]["mean_error"] > 0 > phases["mid_stance"]["mean_error"]
    # seven of 51 points (88-100 %) are 20° up: offset 20 x 7/51 removed everywhere
    offset = 20.0 * 7 / 51
    assert phases["mid_stance"]["mean_error"] == pytest.approx(-offset)
    assert phases["terminal_swing"]["mean_error"] == pytest.approx(20.0 - offset)
    squares = {"terminal_swing": 7 * (20.0 - offset) ** 2, "other": 44 * offset**2}
    rmse = compare.curve_metrics(late, mean, sd)["rmse_offset_removed_deg"]
    assert np.sqrt(sum(squares.values()) / 51) == pytest.approx(rmse)
    share = 100.0 * squares["terminal_swing"] / sum(squares.values())
    assert phases["terminal_swing"]["share_percent"] == pytest.approx(share)
    assert all(
        p["mean_error"] == 0 and p["share_percent"] == 0 for p in compare.phase_errors(mean, mean).values()
    )
    result = {"phase_errors": {"r.knee_flexion": phases}}
    expected = f"terminal swing +{20.0 - offset:.0f}° ({share:.0f} %)"
    assert compare.largest_phase_error(result, "r.knee_flexion") == expected
    assert compare.largest_phase_error(result, "l.knee_flexion") == "n/a"
    assert compare.largest_phase_error({"error": "no complete gait cycle"}, "r.knee_flexion") == "n/a"


def test_foot_events_have_hysteresis_and_cycles_need_one_stance_and_one_swing():
    mass, g = 70.0, 9.80665
    t = np.arange(0, 4.0, 0.01)
    # right foot: stance 0.6 s of every 1 s stride, starting at 0.2 s; a brush to 3 % BW at
    # 0.9 s (between the hysteresis thresholds: no event) and a dip to 3 % BW mid-stance at
    # 1.5 s (no lift-off)
    right = np.where(((t - 0.2) % 1.0) < 0.6, 1.0, 0.0) * mass * g
    right[t < 0.2] = 0.0
    right[np.isclose(t, 0.9)] = 0.03 * mass * g
    right[np.isclose(t, 1.5)] = 0.03 * mass * g
    strikes, offs = gait.foot_events(t, right, mass)
    np.testing.assert_allclose(strikes, [0.2, 1.2, 2.2, 3.2], atol=1e-9)
    np.testing.assert_allclose(offs, [0.8, 1.8, 2.8, 3.8], atol=1e-9)
    left = np.roll(right, 50)
    n = len(t)
    trial = gait.Trial(
        "synthetic",
        t,
        {("r", v): np.zeros(n) for v in CURVES} | {("l", v): np.zeros(n) for v in CURVES},
        t,
        {"r": right, "l": left},
        {"r": np.zeros((n, 3)), "l": np.zeros((n, 3))},
        np.column_stack([1.2 * t, np.ones(n), np.zeros(n)]),
        mass,
    )
    cycles = gait.gait_cycles(trial)
    right_cycles = [c for c in cycles if c.side == "r"]
    # pytest >= 9.2 approx takes no nested sequences
    np.testing.assert_allclose([(c.start, c.end) for c in right_cycles], [(0.2, 1.2), (1.2, 2.2), (2.2, 3.2)])
    assert all(c.percent(c.foot_off) == pytest.approx(60.0) for c in right_cycles)
    assert len(gait.gait_cycles(trial, skip=1.0)) < len(cycles)
    st = gait.spatiotemporal(trial, cycles)
    assert st["cadence_steps_per_min"] == pytest.approx(120.0)
    assert st["stride_length_m"] == pytest.approx(1.2)
    assert st["stance_percent"] == pytest.approx(60.0)
    assert st["double_support_percent"] == pytest.approx(20.0)


@needs_subject
def test_a_lab_trial_through_compare_matches_the_normative_curves(tmp_path):
    """OpenSim's subject01 (knee coordinate negative in flexion) against the normative data: hip
    and knee r >= 0.9, which catches sign and convention errors."""
    out = tmp_path / "subject"
    r = cli("--trial", *TRIAL, "-o", out)
    assert r.returncode == 0, r.stderr
    result = json.loads((out / "comparison.json").read_text())
    for side in "rl":
        assert result["variables"][f"{side}.hip_flexion"]["r"] >= 0.9
        assert result["variables"][f"{side}.knee_flexion"]["r"] >= 0.9
        assert result["curves"][f"{side}.knee_flexion"]["mean"][35] > 40  # knee flexes in swing
    assert 0.9 < result["vgrf"]["r"]["peak1_bw"] < 1.4
    for name in ("summary.md", "kinematics.png", "kinematics.svg", "grf.png", "grf.svg", "kinetics.png"):
        assert (out / name).stat().st_size > 0
    assert result["kinetic_variables"]["r.ankle_plantarflexion_moment"]["r"] > 0.95
    knee = result["phase_errors"]["r.knee_flexion"]
    assert sum(p["share_percent"] for p in knee.values()) == pytest.approx(100.0)
    summary = (out / "summary.md").read_text().split("Where the sagittal joints' error lies")
    assert len(summary) == 2 and "| knee_flexion | r | " in summary[1] and "terminal swing" in summary[1]


@needs_subject
def test_a_flipped_knee_axis_gives_the_same_knee_flexion(tmp_path):
    """The angles come from segment orientations: a model whose knee axis points the other way
    (and whose IK knee values are negated) gives the same clinical knee flexion."""
    tree = etree.parse(str(TRIAL[0]))
    for joint in tree.iter("CustomJoint"):
        if joint.get("name") not in ("knee_r", "knee_l"):
            continue
        for axis in joint.iter("TransformAxis"):
            if not (axis.findtext("coordinates") or "").strip().startswith("knee_angle"):
                continue
            if axis.get("name").startswith("rotation"):
                values = [-float(v) for v in axis.findtext("axis").split()]
                axis.find("axis").text = " ".join(repr(v) for v in values)
            for spline in axis.iter("SimmSpline"):
                # the tibia's translation as a function of the negated coordinate
                x = [-float(v) for v in spline.findtext("x").split()][::-1]
                y = [float(v) for v in spline.findtext("y").split()][::-1]
                spline.find("x").text = " ".join(repr(v) for v in x)
                spline.find("y").text = " ".join(repr(v) for v in y)
        for coordinate in joint.iter("Coordinate"):
            lo, hi = (float(v) for v in coordinate.findtext("range").split())
            coordinate.find("range").text = f"{-hi!r} {-lo!r}"
    flipped = tmp_path / "flipped.osim"
    tree.write(str(flipped))
    ik = read_storage(TRIAL[1])
    for side in "rl":
        ik[f"knee_angle_{side}"] = -ik[f"knee_angle_{side}"]
    ik_path = tmp_path / "ik.mot"
    labels = [c for c in ik.columns if c != "time"]
    write_storage(ik_path, "ik", labels, ik["time"].to_numpy(), ik[labels].to_numpy(), True)
    a = gait.from_opensim_trial(*TRIAL)
    b = gait.from_opensim_trial(flipped, ik_path, TRIAL[2], TRIAL[3])
    for side in "rl":
        np.testing.assert_allclose(
            b.angles[(side, "knee_flexion")], a.angles[(side, "knee_flexion")], atol=1e-6
        )
        # and the same knee moment (N m/kg): the coordinate is read with its sign turned
        np.testing.assert_allclose(
            b.kinetics[(side, "knee_extension_moment")],
            a.kinetics[(side, "knee_extension_moment")],
            atol=1e-3,
        )


def test_a_run_without_a_complete_cycle_is_one_error_and_writes_nothing(built_models, tmp_path):
    sim = tmp_path / "sim"
    r = run_cli("simulate", built_models["HumanLegs"], "--speed", "1.3", "--duration", "0.3", "--out", sim)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "cmp"
    r = cli(sim, "-o", out)
    assert r.returncode == 2 and "no complete gait cycle after 2 s" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not out.exists()


@needs_subject
def test_bad_inputs_are_one_line_each(tmp_path):
    r = cli("--trial", TRIAL[0], TRIAL[1], TRIAL[2], tmp_path / "missing.xml", "-o", tmp_path / "o")
    assert r.returncode == 2 and "missing.xml: ExternalLoads file not found" in r.stderr
    bad = tmp_path / "ref.csv"
    bad.write_text("variable,percent,mean\nknee_flexion,0,1\n")
    r = cli("--trial", *TRIAL, "--reference", bad, "-o", tmp_path / "o")
    assert r.returncode == 2 and f"{bad}: missing columns ['sd']" in r.stderr
    bad.write_text("variable,percent,mean,sd\nknee_flex,0,1,1\n")
    r = cli("--trial", *TRIAL, "--reference", bad, "-o", tmp_path / "o")
    assert r.returncode == 2 and "variable 'knee_flex' unknown" in r.stderr
    assert not (tmp_path / "o").exists()
    shutil.copy(TRIAL[1], tmp_path / "ik.mot")
    (tmp_path / "ik.mot").write_text("not a storage file\n")
    r = cli("--trial", TRIAL[0], tmp_path / "ik.mot", TRIAL[2], TRIAL[3], "-o", tmp_path / "o")
    assert r.returncode == 2 and "ik.mot: not an OpenSim storage file" in r.stderr


def test_activation_against_emg_envelopes_and_the_muscle_map():
    ref = reference.normative()
    emg = ref.emg["RGas"]
    m = compare.activation_metrics(0.3 * emg, emg)  # scaled to its maximum first
    assert m["r"] == pytest.approx(1.0) and m["best_shift_percent"] == 0
    shifted = np.roll(emg[:-1], 5)  # 5 % of the cycle late
    m = compare.activation_metrics(np.append(shifted, shifted[0]), emg)
    assert m["best_r_within_shift"] == pytest.approx(1.0) and m["best_shift_percent"] == -5.0
    square = np.where((np.linspace(0, 100, 101) >= 20) & (np.linspace(0, 100, 101) < 40), 1.0, 0.1)
    m = compare.activation_metrics(square, square)
    assert m["on_periods_percent"] == [[20.0, 40.0]] and m["on_off_agreement_percent"] == 100
    late = np.roll(square, 10)
    m = compare.activation_metrics(late, square)
    assert m["on_periods_percent"] == [[30.0, 50.0]]
    assert m["on_off_agreement_percent"] == pytest.approx(100 * 81 / 101)
    mapping = compare.emg_map()
    assert mapping["soleus"] == "Sol"
    assert all(f"R{channel}" in ref.emg for channel in mapping.values())


@needs_subject
def test_a_measured_trial_as_a_second_reference(tmp_path):
    """--reference-trial: the subject's own cycles as a further reference, drawn and scored
    beside the normative one; the subject against itself scores near 0 (both sides pooled)."""
    out = tmp_path / "two"
    r = cli("--trial", *TRIAL, "--reference-trial", *TRIAL, "-o", out)
    assert r.returncode == 0, r.stderr
    result = json.loads((out / "comparison.json").read_text())
    ((name, other),) = result["other_references"].items()
    assert name.startswith("subject01_walk_IK") and other["gps_deg"] < 3.0
    assert result["gps_deg"] > 5.0  # the normative reference, scored in full
    assert "Against subject01_walk_IK" in (out / "summary.md").read_text()


def test_the_first_grf_peak_is_split_into_impact_and_weight_acceptance():
    """A hard landing (a 10 ms spike after foot strike, which the cycle's 2 % points miss) and the
    weight-acceptance peak are told apart: the impact from the raw signal, the loading peak from
    the mean curve."""
    mass, g = 70.0, 9.80665
    t = np.arange(0, 4.0, 0.005)
    phase = (t - 0.2) % 1.0
    stance = np.where(phase < 0.6, 1.1 * np.clip(np.sin(np.pi * phase / 0.6), 0, 1) ** 0.5, 0.0)
    stance[t < 0.2] = 0.0
    spike = np.where((t > 0.2) & (phase > 0.0274) & (phase < 0.0326), 4.0, 0.0)  # one sample at 3 %
    right = (stance + spike) * mass * g
    left = np.roll(stance, 100) * mass * g
    n = len(t)
    trial = gait.Trial(
        "synthetic",
        t,
        {(s, v): np.zeros(n) for s in "rl" for v in CURVES},
        t,
        {"r": right, "l": left},
        {"r": np.zeros((n, 3)), "l": np.zeros((n, 3))},
        np.column_stack([1.2 * t, np.ones(n), np.zeros(n)]),
        mass,
    )
    cycles = gait.gait_cycles(trial)
    raw = gait.impact_peaks(trial, cycles, "r", compare.IMPACT_END)
    assert len(raw) == 3 and raw == pytest.approx(
        4.0 + stance[(phase > 0.0149) & (phase < 0.0251)].max(), abs=0.2
    )
    assert np.all(gait.impact_peaks(trial, cycles, "l", compare.IMPACT_END) < 0.7)
    curve = gait.normalized_vgrf(trial, cycles, "r").mean(axis=0)
    assert curve[PERCENT <= 6].max() < 1.0  # the 2 % points miss the spike
    features = compare.vgrf_features(curve)
    assert features["loading_peak_bw"] == pytest.approx(1.1, abs=0.02)
    assert features["loading_peak_percent"] > 6


@needs_subject
def test_coordinate_rows_read_names_or_state_paths_in_model_units_and_pose_a_state():
    import pandas as pd

    model = gait._model(SUBJECT / "subject01.osim")
    knee = model.getCoordinateSet().get("knee_angle_r")
    path = knee.getAbsolutePathString()
    ik = pd.DataFrame({"time": [0.0, 0.1], "knee_angle_r": [-30.0, -60.0]})
    rows = gait.coordinate_rows(model, ik, True, "ik.mot")
    assert [c.getName() for c in rows.coordinates] == ["knee_angle_r"] and rows.speeds is None
    np.testing.assert_allclose(rows.values[:, 0], np.radians([-30.0, -60.0]))
    states = pd.DataFrame({"time": [0.0], f"{path}/value": [-0.5], f"{path}/speed": [2.0]})
    rows = gait.coordinate_rows(model, states, False, "states.sto", speeds=True)
    state = model.initSystem()
    rows.pose(state, 0)
    assert knee.getValue(state) == pytest.approx(-0.5) and knee.getSpeedValue(state) == pytest.approx(2.0)
    with pytest.raises(gait.GaitError, match=f"states.sto: no column {path}/speed"):
        gait.coordinate_rows(model, states.drop(columns=f"{path}/speed"), False, "states.sto", speeds=True)
    with pytest.raises(gait.GaitError, match="ik.mot: no column names a coordinate"):
        gait.coordinate_rows(model, pd.DataFrame({"time": [0.0], "x": [1.0]}), True, "ik.mot")


def test_a_twisted_foot_progresses_along_its_long_axis_and_dorsiflexes_about_its_own():
    """A foot whose neutral pose is turned out (a tibial torsion) keeps that turn in its foot
    progression (the angle of its long axis, X, to the walking direction; toe-out negative on both
    sides), and its dorsiflexion is read about its own ankle axis; an untwisted foot reads as before."""
    from scipy.spatial.transform import Rotation

    from musclewalk.analysis.gait import clinical_angles

    twist, dorsiflexion = np.radians(15.0), np.radians(10.0)

    def ry(a):
        return Rotation.from_euler("Y", a).as_matrix()

    def rz(a):
        return Rotation.from_euler("Z", a).as_matrix()

    seg = {"root": "pelvis", "r": ("thigh_r", "shank_r", "foot_r"), "l": ("thigh_l", "shank_l", "foot_l")}
    for turn in (twist, 0.0):
        R0 = {b: np.eye(3) for b in ("pelvis", "thigh_r", "shank_r", "thigh_l", "shank_l")}
        R0["foot_r"], R0["foot_l"] = ry(-turn), ry(turn)
        R = {b: r[None] for b, r in R0.items()}
        R["foot_r"] = (R0["foot_r"] @ rz(dorsiflexion))[None]
        R["foot_l"] = (R0["foot_l"] @ rz(dorsiflexion))[None]
        angles = clinical_angles(R, R0, seg)
        for side in "rl":
            assert angles[(side, "foot_progression")][0] == pytest.approx(-np.degrees(turn), abs=1e-9)
            assert angles[(side, "ankle_dorsiflexion")][0] == pytest.approx(10.0, abs=1e-9)
