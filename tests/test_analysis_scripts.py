"""The analysis/ scripts behind the README's tables run (shrunk: short evaluations)."""

import subprocess
import sys
from pathlib import Path

import pytest
from subject01 import SUBJECT, needs_subject

REPO = Path(__file__).resolve().parents[1]


def run_script(name: str, *args) -> subprocess.CompletedProcess:
    """``python3.11 analysis/<name> ARGS...`` with its output captured."""
    return subprocess.run(
        [sys.executable, str(REPO / "analysis" / name), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
    )


def _simulate_committed(run_name: str, out: Path, duration: float) -> Path:
    """`musclewalk simulate` of a committed walker at 1.3 m/s into ``out``."""
    run = REPO / "models/optimized" / run_name
    r = subprocess.run(
        [sys.executable, "-m", "musclewalk.cli", "simulate", str(run / "optimized.osim"), "--params",
         str(run / "best.json"), "--speed", "1.3", "--duration", str(duration), "--out", str(out)],
        capture_output=True, text=True, cwd=REPO,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    return out


def test_spine_stiffness_sweep_writes_its_table(tmp_path):
    out = tmp_path / "sweep.md"
    r = run_script("spine_stiffness_sweep.py", "--stiffness", 60, 420, "--duration", 0.2, "--out", out)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = out.read_text().splitlines()
    assert lines[0].startswith("| spine flexion/bending springs") and len(lines) == 4
    assert lines[2].startswith("| 60 |") and lines[3].startswith("| 420 |")


def _human_like_comparison() -> dict:
    """A comparison as `musclewalk compare` writes it, with a human-like knee and ankle."""
    import numpy as np

    pct = np.linspace(0, 100, 51)
    knee = 5 + 12 * np.exp(-(((pct - 14) / 7) ** 2)) + 55 * np.exp(-(((pct - 73) / 12) ** 2))
    ankle = 12 * np.sin(np.pi * np.clip(pct - 5, 0, 45) / 45) - 20 * np.exp(-(((pct - 62) / 5) ** 2))
    joint = {"r": 0.9, "rmse_offset_removed_deg": 5.0}
    variables = {
        f"{s}.{j}": joint for s in "rl" for j in ("hip_flexion", "knee_flexion", "ankle_dorsiflexion")
    }
    curves = {f"{s}.knee_flexion": {"mean": knee.tolist()} for s in "rl"}
    curves.update({f"{s}.ankle_dorsiflexion": {"mean": ankle.tolist()} for s in "rl"})
    vgrf = {s: {"peak1_bw": 1.1, "peak2_bw": 1.12} for s in "rl"}
    st = {"cadence_steps_per_min": 118, "stance_percent": 61}
    return {
        "variables": variables,
        "curves": curves,
        "vgrf": vgrf,
        "spatiotemporal": st,
        "spatiotemporal_reference": st,
        "gps_deg": 5.0,
    }


def test_human_targets_say_where_the_knee_and_ankle_errors_lie():
    """human_targets.phase_lines: per side, the phases carrying half the offset-removed squared
    error, largest first, from compare's phase_errors (a knee flexed 20° too far in loading
    response only: that phase alone)."""
    sys.path.insert(0, str(REPO / "analysis"))
    import numpy as np
    from human_targets import phase_lines

    from musclewalk.analysis import compare
    from musclewalk.analysis.reference import PERCENT, normative

    ref = normative().curves
    knee = ref["knee_flexion"][0] + np.where(PERCENT < 10, 20.0, 0.0)
    phases = {f"{s}.knee_flexion": compare.phase_errors(knee, ref["knee_flexion"][0]) for s in "rl"}
    lines = phase_lines({"phase_errors": phases})
    assert len(lines) == 1 and lines[0].startswith("knee flexion: where its error lies")
    right, left = lines[0].split(": ", 2)[2].split("; ")
    assert right.startswith("right: loading response +") and "terminal" not in right
    assert left.startswith("left: loading response +")
    assert phase_lines({}) == []


def test_human_targets_judge_each_figure():
    sys.path.insert(0, str(REPO / "analysis"))
    from human_targets import table, target_rows

    comparison = _human_like_comparison()
    analysis = {
        "cost_of_transport_J_per_kg_m": 4.0,
        "mean_forward_speed": 1.28,
        "target_speed": 1.3,
        "terminated": False,
        "simulated_time": 10.0,
    }
    assert all(met for *_, met in target_rows(analysis, comparison))
    assert table("x", analysis, comparison).startswith("x: 16 of 16 targets met")
    comparison["map_deg"] = {"knee_flexion": 4.0, "foot_progression": 12.5, "hip_rotation": None}
    assert (
        "- GPS by variable (Movement Analysis Profile, RMSE °, largest first): foot progression 12.5, "
        "knee flexion 4.0\n" in table("x", analysis, comparison)
    )
    for side in "rl":
        comparison["vgrf"][side].update(impact_bw=2.3, loading_peak_bw=1.1, loading_peak_percent=14.0)
    assert (
        "- vertical GRF first peak split (right / left): heel-strike impact (0-6 % of the cycle) "
        "2.30 / 2.30 BW, weight-acceptance peak (6-35 %) 1.10 / 1.10 BW at 14 / 14 %"
        in table("x", analysis, comparison)
    )
    # where the work comes from (inverse dynamics): the norm's own kinetics read as the norm's
    from musclewalk.analysis import compare, reference

    ref = reference.normative()
    kinetic = {
        "kinetic_variables": {
            f"{s}.{v}": compare.kinetic_metrics(ref.curves[v][0], *ref.curves[v])
            for s in "rl"
            for v in ("ankle_power", "ankle_plantarflexion_moment", "knee_extension_moment")
        },
        "kinetic_curves": {
            f"{s}.{v}": {"mean": list(ref.curves[v][0])}
            for s in "rl"
            for v in ("ankle_power", "knee_extension_moment")
        },
    }
    text = table("x", analysis, {**comparison, **kinetic})
    assert (
        "- ankle power peak (right / left), W/kg: 1.98 / 1.98 at 58 / 58 % (human 1.98 at 58 %: push-off)"
        in text
    )
    assert (
        "- ankle plantarflexor moment: r with the norm 1.00 / 1.00, peak 1.19 / 1.19 N m/kg at 52 / 52 %"
        in text
    )
    assert "- knee moment in mid-stance (20-50 %), mean, N m/kg, extensor +: 0.08 / 0.08 (human 0.08)" in text
    # the steps' shape beside the norm's (the committed human-objective Human's 0.30 m steps)
    steps = {"stride_length_m": 1.04, "step_width_m": 0.297, "double_support_percent": 24.5}
    wide = {**comparison, "spatiotemporal": {**comparison["spatiotemporal"], **steps}}
    norm = {"stride_length_m": 1.29, "step_width_m": 0.12, "double_support_percent": 16.2}
    wide["spatiotemporal_reference"] = {**comparison["spatiotemporal_reference"], **norm}
    assert (
        "- steps: stride length 1.04 m (human 1.29), step width 0.30 m (human 0.12), double support 24 "
        "% of the cycle (human 16)" in table("x", analysis, wide)
    )
    # below the table, the causes `musclewalk analyze` shows
    causes = {
        "joint_limit_torques": {
            "limit_knee_angle_r": {"mean_abs_Nm": 73.7},
            "limit_knee_angle_l": {"mean_abs_Nm": 73.8},
        },
        "metabolic_by_muscle": {
            "vasti_r": {"activation_heat_W": 100.0, "positive_work_W": 57.0, "mean_activation": 0.42}
        },
        "excitation_variation": {"hip_abductor_posterior_l": {"variation_per_s": 31.3}},
        "operating_range": {
            "passive_fibre_force_BW": 4.14,
            "stretched": ["hamstrings_r"],
            "idle": [],
            "by_muscle": {
                "hamstrings_r": {
                    "mean_passive_force_N": 1001.0,
                    "norm_fiber_length": {"min": 1.35, "max": 1.61},
                }
            },
        },
    }
    assert table("x", {**analysis, **causes}, comparison).splitlines()[-5:] == [
        "- knee-limit torque, mean |τ|, N m: 73.7 / 73.8",
        "- costliest muscles, W (mean activation): vasti_r 157 (0.42)",
        "- passive fibre force, summed over the muscles: 4.14 BW (the objective measure passive_fibre_force)",
        "- muscles outside their working range: stretched (mean passive force, fibre length): hamstrings_r "
        "1001 N, 1.35-1.61 l_opt; idle (excited but never above 2 % of F_max: mean excitation, fibre "
        "length): none",
        "- most switching excitations, per s: hip_abductor_posterior_l 31",
    ]
    # what the same motion costs with the least activation (analysis/static_optimization.py)
    motion = {
        "window_s": [2.0, 10.0],
        "controller": {"cost_of_transport_J_per_kg_m": 12.61},
        "static_optimization": {"cost_of_transport_J_per_kg_m": 11.33},
        "sagittal_power_W_per_kg": {"hip": {"walker": (0.85, -0.07), "people": (0.23, -0.09)}},
        "sagittal_power_by_leg_phase_W_per_kg": {"hip": {"stance": (0.64, -0.02), "lift_off": (0.11, -0.02)}},
    }
    assert table("x", analysis, comparison, motion).splitlines()[-2:] == [
        "- the same motion with the least muscle activation (analysis/static_optimization.py): cost of "
        "transport 11.3 J/(kg m), the controller's 12.6 (after 2 s)",
        "- muscles' sagittal power per leg, W/kg, positive / negative: hip +0.85 / -0.07 (stance +0.64 / "
        "-0.02, lift-off +0.11; people +0.23 / -0.09)",
    ]
    sources = {
        "vasti_r": {
            "stance": {"excitation": 0.15, "constant": 0.06, "force_feedback": 0.15, "remainder": -0.06},
            "swing": {"excitation": 0.45, "constant": 0.03, "force_feedback": 0.0, "remainder": 0.42},
        },
        "hamstrings_r": {
            "stance": {"excitation": 0.43, "constant": -0.14, "force_feedback": 0.0, "remainder": 0.57}
        },
    }
    assert table("x", {**analysis, "excitation_sources": sources}, comparison).splitlines()[-1] == (
        "- largest mean excitations from feedback other than F+ (target features, balance, features "
        "beyond the paper, less clipping; name, leg phase: that part / all): "
        "hamstrings_r stance 0.57 / 0.43, vasti_r swing 0.42 / 0.45"
    )
    # a knee locked straight in stance and a plantarflexing stance ankle (the committed Human's)
    for s in "rl":
        comparison["curves"][f"{s}.knee_flexion"]["mean"] = [-2.0] * 20 + [40.0] * 31
        comparison["curves"][f"{s}.ankle_dorsiflexion"]["mean"] = [-10.0 - k for k in range(51)]
    failed = [
        m
        for m, *_, met in target_rows({**analysis, "cost_of_transport_J_per_kg_m": 17.5}, comparison)
        if not met
    ]
    assert failed == [
        "loading-response knee flexion (max 0-20 %), °",
        "ankle: peak dorsiflexion in mid-stance (10-50 %), °",
        "gross metabolic cost of transport, J/(kg m)",
    ]
    # a run that falls before a gait cycle after 2 s (compare refuses it) says so, with its causes
    from human_targets import both_legs_measured, no_cycle_table

    assert both_legs_measured(comparison) and not both_legs_measured(None)
    one_leg = {**comparison, "variables": {k: v for k, v in comparison["variables"].items() if k[0] == "r"}}
    assert not both_legs_measured(one_leg)  # fell soon after 2 s: a cycle of the right leg only

    fell = {
        **analysis,
        **causes,
        "terminated": True,
        "simulated_time": 1.9,
        "termination_reason": "com_height",
    }
    lines = no_cycle_table("x", fell).splitlines()
    assert lines[0] == (
        "x: no target measured: it falls after 1.90 s (com_height), before a complete gait cycle of "
        "each leg after 2 s"
    )
    assert lines[-1] == "- most switching excitations, per s: hip_abductor_posterior_l 31"


def test_vary_parameters_puts_a_run_on_another_build(tmp_path, humanlegs_osim):
    """analysis/vary_parameters.py --model: the run's values on another build of its creature (a
    later template's, with a gain the run's best.json lacks: here one it is made to lack), which
    keeps that build's value unless named; without --model the name is unknown to the run."""
    import json
    import shutil

    from lxml import etree

    run = tmp_path / "run"
    shutil.copytree(
        REPO / "models/optimized/HumanLegs-walk-1.3", run, ignore=shutil.ignore_patterns("stages")
    )
    best = json.loads((run / "best.json").read_text())
    del best["parameters"]["model"]["passive"]["ankle_axial.stiffness"]
    (run / "best.json").write_text(json.dumps(best))
    build = tmp_path / "build" / "HumanLegs.osim"
    build.parent.mkdir()
    for f in (humanlegs_osim, humanlegs_osim.with_suffix(".meta.json")):
        shutil.copy(f, build.parent / f.name)

    def stiffness(osim, spring="spring_ankle_rotation_r"):
        return float(etree.parse(str(osim)).find(f".//*[@name='{spring}']").findtext("stiffness"))

    named = "passive.ankle_axial.stiffness"
    lacking = run_script("vary_parameters.py", run, tmp_path / "lacking", f"{named}=0.75")
    assert lacking.returncode != 0 and f"no {named!r}" in lacking.stderr
    out = tmp_path / "varied"
    r = run_script("vary_parameters.py", run, out, "--model", build, f"{named}=0.75")
    assert r.returncode == 0, r.stderr[-2000:]
    meta = json.loads((out / "optimized.meta.json").read_text())
    entry = next(e for e in meta["passive"] if e["name"] == "ankle_axial.stiffness")
    assert stiffness(out / "optimized.osim") == pytest.approx(
        entry["lo"] + 0.75 * (entry["hi"] - entry["lo"])
    )
    assert (out / "model" / "HumanLegs.osim").read_bytes() == build.read_bytes()
    # not named: the build's own value, the run's others as the run has them
    other = tmp_path / "unnamed"
    assert run_script("vary_parameters.py", run, other, "--model", build).returncode == 0
    assert stiffness(other / "optimized.osim") == pytest.approx(stiffness(build))
    nothing = run_script("vary_parameters.py", run, tmp_path / "nothing")
    assert nothing.returncode == 2 and "nothing to change" in nothing.stderr
    hip = "spring_hip_rotation_r"
    assert stiffness(other / "optimized.osim", hip) == pytest.approx(stiffness(run / "optimized.osim", hip))
    assert json.loads((other / "best.json").read_text())["creature"] == "HumanLegs"


def test_vary_parameters_puts_a_run_on_a_physics_variant_of_its_creature(tmp_path):
    """--model with a build of another physics (a softer heel): the copy's best.json names that
    build's creature, so that it simulates on it."""
    import json
    import shutil

    import yaml

    data = yaml.safe_load((REPO / "models/creatures/human_legs.yaml").read_text())
    data["name"] = "HumanLegsSoft"
    data["physics"] = {"contact": {"exponential_shape": [0.0073541, 0.5336, 1000]}}
    creature = tmp_path / "legs_soft.yaml"
    creature.write_text(yaml.safe_dump(data))
    build = tmp_path / "build" / "HumanLegsSoft.osim"
    from musclewalk.model.build import build_creature

    build_creature(str(creature), None, build)
    run = tmp_path / "run"
    shutil.copytree(
        REPO / "models/optimized/HumanLegs-walk-1.3", run, ignore=shutil.ignore_patterns("stages")
    )
    out = tmp_path / "soft"
    r = run_script("vary_parameters.py", run, out, "--model", build)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads((out / "best.json").read_text())["creature"] == "HumanLegsSoft"
    assert "0.0073541 0.5336 1000.0" in (out / "optimized.osim").read_text()


def test_vary_parameters_rewrites_the_model_and_the_controller_values(tmp_path):
    """analysis/vary_parameters.py: a model property (normalized) lands in the copy's .osim as
    the optimizer would write it, a controller value in its best.json; an unknown name is one
    error naming the file, and no folder is written."""
    import json
    import shutil

    from lxml import etree

    run = REPO / "models/optimized/HumanLegs-walk-1.3"
    out = tmp_path / "varied"
    # gain.knee.kw: a feature beyond the paper the run kept off (not in its best.json), turned on
    changes = ["properties.hamstrings.tendon_slack_length=0.5", "prep.theta0=0.25", "gain.knee.kw=0.1"]
    r = run_script("vary_parameters.py", run, out, *changes)
    assert r.returncode == 0, r.stderr[-2000:]
    best = json.loads((out / "best.json").read_text())["parameters"]
    assert best["controller"]["prep.theta0"] == 0.25 and best["controller"]["gain.knee.kw"] == 0.1
    assert best["model"]["properties"]["hamstrings.tendon_slack_length"] == 0.5

    def slack(osim):
        muscle = etree.parse(str(osim)).find(".//*[@name='hamstrings_r']")
        return float(muscle.findtext("tendon_slack_length"))

    meta = json.loads((out / "optimized.meta.json").read_text())
    entry = next(e for e in meta["properties"] if e["name"] == "hamstrings.tendon_slack_length")
    assert slack(out / "optimized.osim") == pytest.approx(entry["lo"] + 0.5 * (entry["hi"] - entry["lo"]))
    assert slack(run / "optimized.osim") != pytest.approx(slack(out / "optimized.osim"))
    bad = run_script("vary_parameters.py", run, tmp_path / "bad", "nope=1")
    assert bad.returncode != 0 and "best.json: parameters: no 'nope'" in bad.stderr
    assert not (tmp_path / "bad").exists()
    # outside its bounds: refused as `musclewalk simulate` would refuse the copy, before writing
    high = run_script("vary_parameters.py", run, tmp_path / "high", "knee_overextension.gain=6")
    assert high.returncode != 0 and "knee_overextension.gain: 6 is outside the bounds [0, 5]" in high.stderr
    slack = "properties.vasti.tendon_slack_length=1.2"
    normalized = run_script("vary_parameters.py", run, tmp_path / "high", slack)
    assert normalized.returncode != 0 and "outside the normalized bounds [0, 1]" in normalized.stderr
    assert not (tmp_path / "high").exists()
    # a best kept in a run's generation-N/ folder: the run's model copy is one folder up
    kept = tmp_path / "run" / "generation-7"
    shutil.copytree(run / "model", tmp_path / "run" / "model")
    kept.mkdir()
    for name in ("best.json", "optimized.osim", "optimized.meta.json"):
        shutil.copy(run / name, kept / name)
    r = run_script("vary_parameters.py", kept, tmp_path / "from-kept", "prep.theta0=0.25")
    assert r.returncode == 0, r.stderr[-2000:]
    assert (
        json.loads((tmp_path / "from-kept" / "best.json").read_text())["parameters"]["controller"][
            "prep.theta0"
        ]
        == 0.25
    )


def test_distribution_mean_writes_the_searchs_mean_as_a_run_copy(tmp_path):
    """analysis/distribution_mean.py: the copy's values encode back to pycma's distribution mean
    (not the best), its model values land in its optimized.osim, its best.json claims no score;
    a folder without a checkpoint is one error naming the file, and no copy is written."""
    import json

    import numpy as np
    from lxml import etree

    from musclewalk.constants import CONTROL_INTERVAL
    from musclewalk.model.meta import load_meta
    from musclewalk.optimize.driver import load_checkpoint
    from musclewalk.optimize.space import ParameterSpace
    from musclewalk.sim.bridge import control_model_from_meta

    run = REPO / "models/optimized/HumanLegs-walk-1.3"
    out = tmp_path / "mean"
    r = run_script("distribution_mean.py", run, out)
    assert r.returncode == 0, r.stderr[-2000:]
    settings, state = load_checkpoint(run / "checkpoint.pkl")
    copy = json.loads((out / "best.json").read_text())
    assert copy["objective"] is None and copy["terms"] == {}
    assert copy["distribution_mean"]["generation"] == state.generation
    (model,) = (out / "model").glob("*.osim")  # the run's own build, copied
    meta = load_meta(model)
    space = ParameterSpace(
        meta, control_model_from_meta(meta, CONTROL_INTERVAL), settings.parameters, settings.hold_values
    )
    x = space.x_from_values(space.flatten(copy["parameters"]))
    mean = np.clip(state.es.result.xfavorite, space.lower_x, space.upper_x)
    np.testing.assert_allclose(x, mean, rtol=0, atol=1e-9)
    best = json.loads((run / "best.json").read_text())
    assert copy["parameters"]["controller"] != best["parameters"]["controller"]

    meta = load_meta(out / "optimized.osim")
    entry = next(e for e in meta.properties if e.name == "hamstrings.max_isometric_force")
    u = copy["parameters"]["model"]["properties"]["hamstrings.max_isometric_force"]
    muscle = etree.parse(str(out / "optimized.osim")).find(".//*[@name='hamstrings_r']")
    assert float(muscle.findtext("max_isometric_force")) == pytest.approx(
        entry.lo + u * (entry.hi - entry.lo)
    )

    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "best.json").write_text((run / "best.json").read_text())
    bad = run_script("distribution_mean.py", bare, tmp_path / "bad")
    assert bad.returncode != 0 and "checkpoint.pkl" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "bad").exists()


def test_parameter_sensitivity_moves_every_value_by_epsilon_and_reports_survival(tmp_path):
    """analysis/parameter_sensitivity.py: each value moves by exactly epsilon x its range (clipped
    at its bounds), the same for the same seed; the table has a row per epsilon."""
    sys.path.insert(0, str(REPO / "analysis"))
    from parameter_sensitivity import perturbed

    values = {"a": 0.5, "b": 0.99, "unbounded": 3.0}
    bounds = {"a": (0.0, 2.0), "b": (0.0, 1.0)}
    moved = perturbed(values, bounds, 0.01, seed=1)
    assert abs(moved["a"] - 0.5) == pytest.approx(0.02)
    assert moved["b"] in (pytest.approx(0.98), 1.0)  # clipped at the upper bound
    assert moved["unbounded"] == 3.0
    assert perturbed(values, bounds, 0.01, seed=1) == moved
    assert perturbed(values, bounds, 0.0, seed=1) == values
    out = tmp_path / "sensitivity.md"
    run = REPO / "models/optimized/HumanLegs-walk-1.3"
    args = ["--epsilon", 0, 1e-3, "--seeds", 2, "--duration", 0.2, "--out", out]
    r = run_script("parameter_sensitivity.py", run, *args)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [line for line in out.read_text().splitlines() if line.startswith("| ")]
    assert rows[1].startswith("| 0 | 1 of 1 | 0.20") and rows[2].startswith("| 0.001 | 2 of 2 |")
    fixed = tmp_path / "fixed.md"
    args = ["--epsilon", 0, "--seeds", 1, "--duration", 0.1, "--fixed-step", 0.0005, "--out", fixed]
    r = run_script("parameter_sensitivity.py", run, *args)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "on a fixed 0.5 ms step" in fixed.read_text().splitlines()[0]
    r = run_script("parameter_sensitivity.py", run, "--fixed-step", 0.01)
    assert r.returncode == 2 and "--fixed-step" in r.stderr
    grouped = tmp_path / "grouped.md"
    args = ["--epsilon", 1e-3, "--seeds", 1, "--duration", 0.1, "--group", "initial_state", "feedback"]
    r = run_script("parameter_sensitivity.py", run, *args, "--out", grouped)
    assert r.returncode == 0, r.stderr[-2000:]
    heads = [line for line in grouped.read_text().splitlines() if line.startswith(str(run))]
    assert len(heads) == 2 and "the initial_state parameters" in heads[0] and "feedback" in heads[1]
    r = run_script("parameter_sensitivity.py", run, "--group", "passive_control", "--out", tmp_path / "x.md")
    assert r.returncode == 2 and "passive_control" in r.stderr and not (tmp_path / "x.md").exists()


def test_parameter_sensitivity_work_keeps_each_probe_to_re_simulate(tmp_path):
    """--work: one folder per probe with its recorded simulation and a params.json from which
    `musclewalk simulate` gives the same run to the bit; the table is the same as without it."""
    import json

    import pandas as pd

    run = REPO / "models/optimized/HumanLegs-walk-1.3"
    args = ["--epsilon", 0, 1e-3, "--seeds", 2, "--duration", 0.2, "--group", "feedback"]
    plain, kept, work = tmp_path / "plain.md", tmp_path / "kept.md", tmp_path / "work"
    assert run_script("parameter_sensitivity.py", run, *args, "--out", plain).returncode == 0
    r = run_script("parameter_sensitivity.py", run, *args, "--out", kept, "--work", work)
    assert r.returncode == 0, r.stderr[-2000:]
    assert kept.read_text() == plain.read_text()
    names = sorted(p.name for p in work.iterdir())
    assert names == ["feedback-eps0-seed1", "feedback-eps0.001-seed1", "feedback-eps0.001-seed2"]
    probe = work / "feedback-eps0.001-seed2"
    params = json.loads((probe / "params.json").read_text())
    best = json.loads((run / "best.json").read_text())["parameters"]
    assert params["probe"]["epsilon"] == 1e-3 and params["probe"]["group"] == "feedback"
    moved = [k for k in best["controller"] if params["parameters"]["controller"][k] != best["controller"][k]]
    assert moved and params["parameters"]["initial_state"] == best["initial_state"]
    again = tmp_path / "again"
    r = subprocess.run(
        [sys.executable, "-m", "musclewalk.cli", "simulate", str(run / "optimized.osim"), "--params",
         str(probe / "params.json"), "--duration", "0.2", "--out", str(again)],
        capture_output=True, text=True, cwd=REPO,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    a, b = pd.read_csv(probe / "controller.csv"), pd.read_csv(again / "controller.csv")
    assert len(a) > 10 and a.equals(b)


def test_parameter_sensitivity_moves_only_the_named_group():
    """--group: the bounds a probe moves are exactly that group's controller or state values."""
    import json

    sys.path.insert(0, str(REPO / "analysis"))
    from parameter_sensitivity import moved_bounds

    from musclewalk.optimize.space import ParameterSpace

    run = REPO / "models/optimized/HumanLegs-walk-1.3"
    params = json.loads((run / "best.json").read_text())["parameters"]
    values = {**params["controller"], **params["initial_state"]}
    space = ParameterSpace.of_creature(str(run / "optimized.osim"))
    state = moved_bounds(space, values, "initial_state")
    assert state and set(state) == set(params["initial_state"])
    feedback = set(moved_bounds(space, values, "feedback"))
    assert feedback and not feedback & set(state) and feedback <= set(params["controller"])
    assert feedback == {e.name for e in space.entries if e.group == "feedback" and e.name in values}


def test_lower_one_at_a_time_scales_each_matching_value_alone(tmp_path):
    """analysis/lower_one_at_a_time.py: the walker as optimized first, then one row per matching
    controller value of at least --min, scaled by --factor; the cost is the run objective's
    metabolic measure; a pattern matching nothing is one error."""
    import json

    run = REPO / "models/optimized/HumanLegs-walk-1.3"
    controller = json.loads((run / "best.json").read_text())["parameters"]["controller"]
    expected = sorted(n for n, v in controller.items() if n.startswith("const.stance.") and v >= 0.2)
    out = tmp_path / "lower.md"
    args = ["--pattern", "const.stance.*", "--min", 0.2, "--factor", 0.5, "--duration", 0.2, "--out", out]
    r = run_script("lower_one_at_a_time.py", run, *args)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [line.split(" | ") for line in out.read_text().splitlines() if line.startswith("| ")][1:]
    assert rows[0][0] == "| as optimized" and rows[0][3] == "yes"
    assert sorted(row[0].lstrip("| ") for row in rows[1:]) == expected and expected
    for row in rows[1:]:
        name = row[0].lstrip("| ")
        assert float(row[1]) == pytest.approx(controller[name], abs=5e-4)
        assert float(row[2]) == pytest.approx(controller[name] * 0.5, abs=5e-4)
        assert float(row[5]) > 0  # HumanLegs' objective (the paper's) has a metabolic effort term
    bad = run_script("lower_one_at_a_time.py", run, "--pattern", "nothing.*", "--duration", 0.2)
    assert bad.returncode == 2 and "no controller value matches 'nothing.*'" in bad.stderr


def test_objective_terms_scores_runs_by_a_given_objective_or_their_own(tmp_path):
    """analysis/objective_terms.py: per run its best simulated straight and scored by --objective
    (every term's average and weighted value, the score their sum), or by its own objective; an
    unknown objective is one error naming the known ones."""
    run = REPO / "models/optimized/HumanLegs-walk-1.3"
    out = tmp_path / "terms.md"
    objective = "human-firstpeak-cycle-cadence-secondpeak-kneeland"
    r = run_script("objective_terms.py", run, "--objective", objective, "--duration", 0.3, "--out", out)
    assert r.returncode == 0, r.stderr[-2000:]
    header, row = [line.split(" | ") for line in out.read_text().splitlines() if line.startswith("| ")]
    assert header[5:] == [
        "speed",
        "headori",
        "headvel",
        "slide",
        "cot",
        "grf",
        "firstpeak",
        "limit",
        "cadence",
        "cadence_band",
        "secondpeak",
        "kneeland |",
    ]
    assert row[1] == objective and row[2] == "yes"
    weighted = [float(cell.split("(")[1].rstrip(") |")) for cell in row[5:]]
    assert float(row[4]) == pytest.approx(sum(weighted), abs=0.02)
    assert row[-1].startswith("0 (0.00)")  # no landing after 2 s in 0.3 s
    own = run_script("objective_terms.py", run, "--duration", 0.3)
    assert own.returncode == 0 and "| geijtenbeek2013 | yes |" in own.stdout
    bad = run_script("objective_terms.py", run, "--objective", "nosuch")
    assert bad.returncode == 2 and "objective 'nosuch': unknown" in bad.stderr


def test_aid_dependence_walks_a_stage_under_its_aid_without_its_yaw_hold_half_and_none(tmp_path):
    """analysis/aid_dependence.py: one row per aid (its own, the heading free, half, none, and its
    own from a start at the target speed), the stage's aid read from its settings.json (or its
    best.json's task_definition), with the trunk's largest heading error; a best scored without
    an aid is one error naming it."""
    import json
    import shutil

    committed = REPO / "models/optimized/HumanLegs-walk-1.3"
    stage = tmp_path / "aid_0.5"
    stage.mkdir()
    for name in ("best.json", "optimized.osim", "optimized.meta.json"):
        shutil.copy(committed / name, stage / name)
    bare = run_script("aid_dependence.py", stage, "--duration", 0.1)
    assert bare.returncode == 2 and "best.json: scored without a balance aid (task walk)" in bare.stderr
    task = {"assist": {"upright": 0.5, "support": 0.2}}
    (stage / "settings.json").write_text(json.dumps({"speed": 1.3, "task_definition": task}))
    out = tmp_path / "aid.md"
    r = run_script("aid_dependence.py", stage, "--duration", 0.1, "--out", out)
    assert r.returncode == 0, r.stderr[-2000:]
    text = out.read_text()
    assert "upright torque 0.5 M g L per rad, support 0.2 of body weight" in text and "kq " in text
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| ")][1:]
    assert [(row[0], row[1], row[2]) for row in rows] == [
        ("| its aid", "0.5", "0.2"),
        ("| its aid, heading free", "0.5 (no yaw)", "0.2"),
        ("| half its aid", "0.25", "0.1"),
        ("| no aid", "", ""),
        ("| its aid, started at the target speed", "0.5", "0.2"),
    ]
    start = json.loads((stage / "best.json").read_text())["parameters"]["initial_state"]["init.forward_speed"]
    assert f"starts at {start:.2f} of the target speed" in text
    assert all(float(row[3]) == pytest.approx(0.1) for row in rows)  # the committed walker stays up
    # the trunk's largest heading error: measured (not zero: it turns a little in its first 0.1 s)
    assert all(0 < float(row[-1].rstrip(" |")) < 5 for row in rows), rows


def test_touchdown_reports_each_sphere_at_the_strikes_after_2_s():
    """analysis/touchdown.py: per side a row per contact sphere of that foot, with the number of
    strikes after 2 s, the sphere that lands first, velocities and the raw vGRF peak; and per side the
    time in the air before the strike, the knee's flexion and the foot's distance ahead of the
    centre of mass."""
    run = REPO / "models/optimized/HumanLegs-walk-1.3"
    r = run_script("touchdown.py", run, "--duration", 3.2)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [
        line.split(" | ")
        for line in r.stdout.splitlines()
        if (line.startswith("| r |") or line.startswith("| l |")) and line.count(" | ") == 6
    ]
    assert {"heel_r", "toe_r", "heel_l", "toe_l"} <= {row[3] for row in rows}
    for row in rows:
        assert int(row[1]) >= 1
        forward, peak = float(row[4].split()[0]), float(row[6].split()[0])
        assert 0.0 < forward < 5.0 and peak > 0.5
    # the leg at the strike: time in the air, knee flexion and the foot ahead of the centre of mass
    legs = [line.split(" | ") for line in r.stdout.splitlines() if line.count(" | ") == 4]
    legs = [row for row in legs if row[0] in ("| r", "| l")]
    assert len(legs) == 2
    for row in legs:
        air, knee, ahead = (float(cell.split()[0]) for cell in row[2:5])
        assert 0.1 < air < 1.0 and -15.0 < knee < 90.0 and 0.0 < ahead < 0.8


def test_excitation_sources_tabulates_each_leg_muscle_by_phase_and_term(tmp_path):
    """analysis/excitation_sources.py: one row per leg muscle (both sides averaged) with its
    metabolic rate and, per phase, the mean excitation = constant + the terms shown + clipping
    (every term shown here: --min 0); the stance hip muscles get the trunk term (eq 21), the
    stance extensors F+ (eq 23); --out writes the same tables."""
    run = REPO / "models/optimized/HumanLegs-walk-1.3"
    out = tmp_path / "sources.md"
    r = run_script("excitation_sources.py", run, "--duration", 1.0, "--min", 0, "--out", out)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = {
        line.split(" | ")[0][2:]: line.split(" | ") for line in r.stdout.splitlines() if line.startswith("| ")
    }
    assert {"vasti", "soleus", "hip_abductor_posterior"} <= set(rows)
    for name, row in rows.items():
        if name == "muscle":
            continue
        assert float(row[1]) > 0  # W
        for u, parts in ((row[2], row[3]), (row[4], row[5].rstrip(" |"))):
            constant, terms, clipping = parts.split("; ")
            values = [float(constant), float(clipping)]
            if terms != "—":
                values += [float(t.split()[1]) for t in terms.split(", ")]
            # each printed to 2 decimals
            assert sum(values) == pytest.approx(float(u), abs=0.005 * (len(values) + 1)), (name, u, parts)
    assert "trunk" in rows["hip_abductor_posterior"][3] and "force_feedback" in rows["soleus"][3]
    assert out.read_text().strip() == r.stdout.strip()


def test_ablations_tabulates_each_run_recorded_and_re_simulated(tmp_path):
    """analysis/ablations.py: one row per run folder with its recorded objective and terms, and
    its best re-simulated 10 s and compared; a folder without best.json is one error."""
    out = tmp_path / "ablations.md"
    run = REPO / "models/optimized/HumanLegs-walk-1.3"
    r = run_script("ablations.py", run, "--out", out)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = out.read_text().splitlines()
    assert lines[0].startswith("| run | objective (terms) |") and len(lines) == 3
    cells = lines[2].split(" | ")
    assert cells[0] == "| HumanLegs-walk-1.3" and "speed 0.00" in cells[1]
    assert cells[4].startswith("walks, 1.2") and float(cells[7].rstrip("°")) > 0
    bad = run_script("ablations.py", tmp_path)
    assert bad.returncode == 2 and "best.json: not found" in bad.stderr


def test_cli_runs_take_run_folders_relative_to_the_caller(tmp_path, monkeypatch):
    """The scripts run the CLI from the repository; a run folder given relative to the caller's
    directory (``human_targets.py g0.9``) reaches it as an absolute path."""
    sys.path.insert(0, str(REPO / "analysis"))
    import committed_comparison

    calls = []
    monkeypatch.setattr(committed_comparison.subprocess, "run", lambda cmd, **kw: calls.append((cmd, kw)))
    monkeypatch.chdir(tmp_path)
    committed_comparison.musclewalk("analyze", Path("run"), "-o", Path("a.json"), "--speed", 1.3)
    cmd, kw = calls[0]
    assert kw["cwd"] == REPO
    assert cmd[-6:] == ["analyze", str(tmp_path / "run"), "-o", str(tmp_path / "a.json"), "--speed", "1.3"]


def test_holding_moments_tabulates_each_flexion_joint(built_models, tmp_path):
    """analysis/holding_moments.py: a row per flexion coordinate; the LongNeck's neck joints hold
    what lies beyond them out horizontally (README "Getting a creature to walk"), and a missing
    model file is one error naming it."""
    out = tmp_path / "holding.md"
    r = run_script("holding_moments.py", built_models["LongNeck"], "--out", out)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = {}
    for line in out.read_text().splitlines():
        cells = [c.strip() for c in line.split("|")[1:-1]]
        try:
            rows[cells[0]] = [float(c) for c in cells[1:]]
        except (IndexError, ValueError):
            continue  # a title, a header or a rule, not a joint's row
    assert {f"neck_flexion_{k}" for k in range(1, 10)} | {"hip_flexion_r", "hip_flexion_l"} <= set(rows)
    mass, load, positive, negative, ratio = rows["neck_flexion_1"]
    assert 5.0 < mass < 6.5 and load > 20.0
    assert ratio == pytest.approx(min(positive, negative) / load, abs=0.01) and ratio > 1.5
    assert rows["neck_flexion_9"][1] < rows["neck_flexion_1"][1]  # the head joint carries least
    missing = run_script("holding_moments.py", tmp_path / "none.osim")
    assert missing.returncode == 2 and "none.osim: no such model file" in missing.stderr


def test_ostrich_hip_muscles_keep_their_action_over_the_hip_range(built_models, tmp_path):
    """analysis/moment_arm_ranges.py on the Ostrich: with the hip muscles' pelvis points turned
    with the thigh's tilt (models/templates/inverted_legs.yaml, rotate:), each hip muscle acts the
    way its function says over the whole hip flexion range (unturned, the medial hip flexor extended
    the hip beyond 23 deg of flexion) and keeps at least a tenth of its arm there."""
    import json

    out = tmp_path / "arms.md"
    r = run_script(
        "moment_arm_ranges.py",
        built_models["Ostrich"],
        "--coordinates",
        "hip_flexion_",
        "--fraction",
        "1.01",
        "--out",
        out,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    meta = json.loads(built_models["Ostrich"].with_suffix(".meta.json").read_text())
    functions = {m["name"]: m["function"] for m in meta["muscles"]}
    rows = [
        line.split("|")
        for line in out.read_text().splitlines()
        if line.startswith("| hip_") or line.startswith("| ham") or line.startswith("| rectus")
    ]
    flexing = {(row[1].strip(), row[2].strip()): row for row in rows}
    checked = 0
    for (muscle, coordinate), row in flexing.items():
        sign = functions[muscle].get(coordinate.rsplit("_", 1)[0])
        if sign is None:
            continue
        arm, fraction = float(row[4]), float(row[5])
        assert arm * sign > 0 and fraction >= 0.09, row
        checked += 1
    assert checked == 12  # six hip muscles a side, each with a hip-flexion function


@pytest.mark.parametrize("creature", ["Ostrich", "LongLegs", "LongNeck"])
def test_neck_muscles_keep_their_action_over_the_neck_range(built_models, tmp_path, creature):
    """analysis/moment_arm_ranges.py: over each neck joint's flexion and bending range every neck
    muscle keeps at least a fifth of its default-pose moment arm, with its sign (the first joint's
    posterior muscles once flexed beyond 64 deg, where the Ostrich's and LongLegs' necks rested);
    a stricter fraction lists the pairs that fall below it, and a missing model is one error."""
    out = tmp_path / "arms.md"
    prefixes = ["--coordinates", "neck_flexion_", "--coordinates", "neck_bending_"]
    r = run_script("moment_arm_ranges.py", built_models[creature], *prefixes, "--out", out)
    assert r.returncode == 0, r.stderr[-2000:]
    head = out.read_text().splitlines()[0]
    assert ": 0 of " in head and "below 0.2" in head, head
    pairs = int(head.split(" of ")[1].split()[0])
    assert pairs >= 4 * 2 * 6  # four muscles, two coordinates, at least six neck joints
    strict = run_script(
        "moment_arm_ranges.py", built_models[creature], *prefixes, "--fraction", "0.5", "--out", out
    )
    rows = [line for line in out.read_text().splitlines() if line.startswith("| neck_")]
    assert strict.returncode == 0 and rows
    for row in rows:
        fraction = float(row.split("|")[5])
        assert 0.2 <= fraction < 0.5, row
    missing = run_script("moment_arm_ranges.py", tmp_path / "none.osim")
    assert missing.returncode == 2 and "none.osim: no such model file" in missing.stderr


def test_energy_audit_balances_the_fibres_against_the_passive_elements(tmp_path):
    """analysis/energy_audit.py's balance on hand-made files (window t > 0.5 s): active fibre power
    -F_active v split by sign, passive fibre power -(F - F_active) v, spring-damper dissipation
    c qdot^2, joint-limit power tau qdot, and the remainder that closes the balance."""
    sys.path.insert(0, str(REPO / "analysis"))
    import energy_audit

    sim = tmp_path / "sim"
    sim.mkdir()
    (sim / "muscles.csv").write_text(
        "time,m.excitation,m.fiber_velocity,m.active_fiber_force,m.fiber_force\n"
        "0,0.5,9,9,9\n1,0.5,-0.1,100,110\n2,0.5,0.2,100,120\n3,0.5,-0.1,100,110\n"
    )
    (sim / "states.sto").write_text(
        "states\nendheader\ntime\t/jointset/knee/knee_angle/value\t/jointset/knee/knee_angle/speed\n"
        "0\t0\t9\n1\t0\t1\n2\t0\t-2\n3\t0\t0\n"
    )
    (sim / "joint_limits.csv").write_text("time,limit_knee_angle\n0,9\n1,-4\n2,2\n3,7\n")
    model = tmp_path / "m.osim"
    model.write_text(
        "<OpenSimDocument><Model><ForceSet><objects>"
        '<SpringGeneralizedForce name="spring_knee"><coordinate>knee_angle</coordinate>'
        "<stiffness>5</stiffness><rest_length>0</rest_length><viscosity>3</viscosity>"
        "</SpringGeneralizedForce></objects></ForceSet></Model></OpenSimDocument>"
    )
    result = energy_audit.audit(sim, model, after=0.5)
    t = result["totals"]
    assert t["active_positive"] == pytest.approx(20 / 3)  # -100 x (-0.1, 0.2, -0.1) = 10, -20, 10
    assert t["active_negative"] == pytest.approx(-20 / 3)
    assert t["active_net"] == pytest.approx(0.0)
    assert t["passive_fibre_net"] == pytest.approx(-2 / 3)  # -(10, 20, 10) x v = 1, -4, 1
    assert t["spring_damper_dissipation"] == pytest.approx(5.0)  # 3 x mean(1, 4, 0)
    assert t["joint_limit_net"] == pytest.approx(-8 / 3)  # (-4, 2, 7) x (1, -2, 0)
    assert t["remainder"] == pytest.approx(2 / 3 + 5 + 8 / 3)
    text = energy_audit.table("x", result)
    assert "| joint spring-dampers: dissipated | -5.0 |" in text and "| spring_knee | 5.0 |" in text


def test_energy_audit_runs_on_a_run_folder(tmp_path):
    out = tmp_path / "energy.md"
    run = REPO / "models/optimized/HumanLegs-walk-1.3"
    r = run_script("energy_audit.py", run, "--duration", 0.6, "--after", 0.2, "--out", out)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "| muscles' active fibres: positive work |" in r.stdout
    assert out.read_text().strip() == r.stdout.strip()


def test_leg_clearance_takes_the_closest_pass_of_each_swing():
    """analysis/leg_clearance.py on hand-made rows: each leg's swing (swing and stance
    preparation) gets the smallest distance of any segment pair within it, swings starting before
    --after are left out."""
    import pandas as pd

    sys.path.insert(0, str(REPO / "analysis"))
    import leg_clearance

    states = pd.DataFrame(
        {
            "state_r": ["swing", "stance_preparation", "stance", "stance", "lift_off", "swing", "swing"],
            "state_l": ["stance", "stance", "lift_off", "swing", "stance_preparation", "stance", "stance"],
        }
    )
    distances = pd.DataFrame(
        {
            "time": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            "foot_r-foot_l": [0.09, 0.05, 0.30, 0.06, 0.08, 0.07, 0.20],
            "lower_leg_r-lower_leg_l": [0.10, 0.12, 0.30, 0.045, 0.10, 0.30, 0.065],
        }
    )
    assert leg_clearance.swings(states["state_r"]) == [(0, 1), (5, 6)]
    minima = leg_clearance.per_swing_minima(distances, states, after=0.5)
    rows = minima.to_dict("records")
    assert rows == [
        {"leg": "r", "start_s": 5.0, "min_m": 0.065, "pair": "lower_leg_r-lower_leg_l"},
        {"leg": "l", "start_s": 3.0, "min_m": 0.045, "pair": "lower_leg_r-lower_leg_l"},
    ]
    text = leg_clearance.report("x", minima)
    assert "| r | 1 | 6.5 (5.00, lower_leg_r-lower_leg_l) | 6.5 | 0 |" in text
    assert "| l | 1 | 4.5 (3.00, lower_leg_r-lower_leg_l) | 4.5 | 1 |" in text


def test_leg_clearance_runs_on_a_simulation_folder(tmp_path):
    """The script on a real `musclewalk simulate` folder: the committed HumanLegs walker, 1.5 s;
    the distances it reports are those of the termination rule's segment function."""
    sys.path.insert(0, str(REPO / "analysis"))
    import leg_clearance

    run = REPO / "models/optimized/HumanLegs-walk-1.3"
    sim = tmp_path / "sim"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "musclewalk.cli",
            "simulate",
            str(run / "optimized.osim"),
            "--params",
            str(run / "best.json"),
            "--speed",
            "1.3",
            "--duration",
            "1.5",
            "--out",
            str(sim),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    distances, states = leg_clearance.clearance(sim)
    assert len(distances) == len(states) > 100
    pairs = [c for c in distances.columns if c != "time"]
    assert len(pairs) == 4 and (distances[pairs].to_numpy() > 0.04).all()  # it did not terminate
    out = tmp_path / "clearance.md"
    r = run_script("leg_clearance.py", sim, "--after", 0.5, "--out", out)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "the legs' closest pass per swing (rule: 4 cm)" in r.stdout
    assert out.read_text().strip() == r.stdout.strip()


def _history(folder: Path, bests, survived, duration=5.0, wall=360.0, medians=None) -> None:
    """A history.csv as the optimizer writes it (the columns run_status reads; an early one had no
    median) and settings.json."""
    import json

    folder.mkdir(parents=True)
    rows = [
        "generation,evaluations,best,generation_best,wall_time,best_simulated_time"
        + (",median" if medians else "")
    ]
    for g, best in enumerate(bests, 1):
        rows.append(
            f"{g},{20 * g},{best},{best},{wall * g},{survived}" + (f",{medians[g - 1]}" if medians else "")
        )
    (folder / "history.csv").write_text("\n".join(rows) + "\n")
    (folder / "settings.json").write_text(json.dumps({"duration": duration}))


def test_run_status_gives_each_stage_its_best_and_whether_it_runs(tmp_path):
    import json
    import os
    import time

    run = tmp_path / "Creature-walk-1.0-aid"
    # the last 5 generations' medians: of the 6 below, 120..80 (mean 100)
    _history(
        run / "stages" / "aid_1",
        [90.0, 50.0, 50.0, 50.0, 50.0, 50.0],
        5,
        medians=[500, 120, 110, 100, 90, 80],
    )
    time.sleep(0.01)
    _history(run / "stages" / "aid_0.5", [70.0, 60.0], 2.5)
    (run / "stages" / "aid_0.5" / ".musclewalk.lock").write_text(str(os.getpid()))
    plain = tmp_path / "Creature-walk-1.0"
    _history(plain, [10.0], 10, duration=10, wall=7200)
    (plain / ".musclewalk.lock").write_text("999999999")  # a holder that is gone
    # a run with three trials per candidate: its best's trials listed
    trials = {"count": 3, "jitter": 1e-6, "objectives": [1, 2, 3], "simulated_times": [10, 10.0, 10]}
    (plain / "best.json").write_text(json.dumps({"trials": trials}))
    # a run in its first generation: its first stage has only the lock and its model copy
    new = tmp_path / "Creature-walk-1.0-new"
    (new / "stages" / "aid_1" / "model").mkdir(parents=True)
    (new / "stages" / "aid_1" / ".musclewalk.lock").write_text(str(os.getpid()))
    # an experiment in its first generation of its last stage, which runs in the run folder:
    # that stage is running, the finished ones are not
    last = tmp_path / "Creature-walk-1.0-last"
    _history(last / "stages" / "aid_1", [40.0], 5)
    (last / "model").mkdir(parents=True)
    (last / ".musclewalk.lock").write_text(str(os.getpid()))
    out = tmp_path / "status.md"
    r = run_script("run_status.py", run, plain, new, last, "--out", out)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = out.read_text().splitlines()[2:]
    assert rows == [
        "| Creature-walk-1.0-aid | aid_1 | 6 | 50.00 (2) | 4 | 5 of 5 | 100.00 | 0.60 |  |",
        "| Creature-walk-1.0-aid | aid_0.5 | 2 | 60.00 (2) | 0 | 2.5 of 5 | — | 0.20 | running |",
        "| Creature-walk-1.0 | — | 1 | 10.00 (1) | 0 | 10 of 10 (its 3 trials: 10, 10, 10) | — | 2.00 |  |",
        "| Creature-walk-1.0-new | aid_1 | 0 | no generation yet | | | | | running |",
        "| Creature-walk-1.0-last | aid_1 | 1 | 40.00 (1) | 0 | 5 of 5 | — | 0.10 |  |",
        "| Creature-walk-1.0-last | last (the run folder) | 0 | no generation yet | | | | | running |",
    ]
    r = run_script("run_status.py", tmp_path)
    assert r.returncode == 2 and "no history.csv, settings.json or lock" in r.stderr


def test_yaw_budget_closes_on_a_walker_and_its_stances_alternate(tmp_path):
    """analysis/yaw_budget.py on the committed HumanLegs walker, 2 s: the change of the whole
    body's angular momentum about the vertical through its centre of mass equals the ground's
    moment integrated over the run (grf.mot's forces at their centres of pressure plus the free
    moments: without them the two differed by 1.05 kg m²/s), and the stances alternate feet and
    the sign of their yaw impulse, as in a straight gait; a folder without the files is one error."""
    sim = _simulate_committed("HumanLegs-walk-1.3", tmp_path / "sim", 2)
    out = tmp_path / "yaw.md"
    r = run_script("yaw_budget.py", sim, "--out", out)
    assert r.returncode == 0, r.stderr[-2000:]
    text = out.read_text()
    closure = next(line for line in text.splitlines() if line.startswith("- change of L"))
    change, ground = (float(v) for v in closure.split(": ")[1].split(" / "))
    assert abs(change - ground) < 0.05 and abs(change) > 0.3, closure
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith(("| r |", "| l |"))]
    impulses = [(row[0][-1], float(row[3].rstrip(" |"))) for row in rows]
    assert len(impulses) >= 5
    large = [(side, value) for side, value in impulses if abs(value) > 0.3]
    assert all(a[0] != b[0] and a[1] * b[1] < 0 for a, b in zip(large, large[1:])), impulses
    bare = run_script("yaw_budget.py", tmp_path)
    assert bare.returncode == 2 and "summary.json: not found" in bare.stderr


def test_parameter_survey_tabulates_each_creature_and_run(tmp_path):
    import json

    def best(folder, creature, lift, walked):
        folder.mkdir(parents=True)
        data = {
            "creature": creature,
            "simulated_time": walked,
            "parameters": {"controller": {"lift.hip": lift}, "initial_state": {"init.forward_speed": 1.0}},
        }
        (folder / "best.json").write_text(json.dumps(data))

    best(tmp_path / "a", "Ostrich", 0.01, 7.16)
    best(tmp_path / "b" / "stages" / "progress", "Ostrich", 0.03, 3.0)
    best(tmp_path / "c", "Human", 0.9, 10.0)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "best.json").write_text("{not json")  # skipped, not an optimizer's best
    out = tmp_path / "survey.md"
    r = run_script("parameter_survey.py", "lift.hip", "init.forward_speed", "--under", tmp_path, "--runs",
                   "--out", out)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    text = out.read_text()
    assert "| Human | lift.hip | 1 | 0.9 | 0.9 | 0.9 |" in text
    assert "| Ostrich | lift.hip | 2 | 0.01 | 0.02 | 0.03 |" in text
    assert "| Ostrich | init.forward_speed | 2 | 1 | 1 | 1 |" in text
    assert f"| Ostrich | 7.16 | 0.01 | 1 | {tmp_path / 'a'} |" in text
    missing = run_script("parameter_survey.py", "no.such", "--under", tmp_path)
    assert missing.returncode == 1 and "has no.such" in missing.stderr


def test_parameter_survey_against_walkers_lists_what_lies_outside_their_range(tmp_path):
    import json

    def best(folder, creature, controller, walked, duration=10.0, assist=None):
        folder.mkdir(parents=True)
        data = {
            "creature": creature,
            "simulated_time": walked,
            "duration": duration,
            "parameters": {"controller": controller, "initial_state": {}},
        }
        (folder / "best.json").write_text(json.dumps(data))
        definition = {"assist": assist, "pushes": None}
        (folder / "settings.json").write_text(json.dumps({"task_definition": definition}))

    best(tmp_path / "h1", "Human", {"lift.hip": 0.8, "gain.trunk.kw": 0.5, "x": 1.0}, 10.0)
    best(tmp_path / "h2", "Human", {"lift.hip": 0.9, "gain.trunk.kw": 1.5, "x": 2.0}, 10.0)
    best(tmp_path / "h3", "Human", {"lift.hip": 0.0, "gain.trunk.kw": 9.0, "x": 1.5}, 3.0)  # a fall
    aid = {"upright": 1.0, "support": 0.5}
    best(tmp_path / "h4", "Human", {"lift.hip": 0.0, "gain.trunk.kw": 9.0, "x": 1.5}, 5.0, 5.0, aid)
    best(tmp_path / "o1", "Ostrich", {"lift.hip": 0.01, "gain.trunk.kw": 1.0, "x": 1.2}, 7.0)
    best(tmp_path / "o2", "Ostrich", {"lift.hip": 0.03, "gain.trunk.kw": 2.0, "x": 1.8}, 3.0)
    out = tmp_path / "apart.md"
    r = run_script("parameter_survey.py", "--against", "Human", "--under", tmp_path, "--out", out)
    assert r.returncode == 0, r.stderr[-2000:]
    text = out.read_text()
    assert "Against 2 walking bests of Human" in text  # neither the fall nor the aided best
    # lift.hip: median 0.02, the walkers 0.8-0.9: 0.78 below, 7.80 of their range's width
    assert "| Ostrich | lift.hip | 2 | 0.02 | 0.01 | 0.03 | 0.8 to 0.9 | 7.80 |" in text
    assert "gain.trunk.kw" not in text and "| x |" not in text  # medians inside the walkers' range
    # walkers that agree: the width is a tenth of their value, not zero
    best(tmp_path / "h5", "Human", {"lift.hip": 0.85, "gain.trunk.kw": 1.0, "x": 1.5}, 10.0)
    one = run_script("parameter_survey.py", "--against", "Human", "--under", tmp_path / "h5", tmp_path / "o1")
    assert "| Ostrich | lift.hip | 1 | 0.01 | 0.01 | 0.01 | 0.85 to 0.85 | 9.88 |" in one.stdout, one.stdout
    none = run_script("parameter_survey.py", "--against", "Nobody", "--under", tmp_path)
    assert none.returncode == 1 and "no best of Nobody ran its full duration" in none.stderr
    bare = run_script("parameter_survey.py", "--under", tmp_path)
    assert bare.returncode != 0 and "--against" in bare.stderr


def test_joint_excursions_times_each_coordinate_past_its_limit_onset(tmp_path):
    """analysis/joint_excursions.py on 1 s of the committed HumanLegs walker: a row per limited
    coordinate with its range and the share of the time past its limit force's onset; a knee held
    past its upper onset reads 100 %; a folder that is not a simulation is one error."""
    from musclewalk.sim.outputs import read_storage, write_storage

    sim = _simulate_committed("HumanLegs-walk-1.3", tmp_path / "sim", 1)
    r = run_script("joint_excursions.py", sim, "--prefix", "knee", "--prefix", "hip_flexion")
    assert r.returncode == 0, r.stderr[-2000:]
    rows = {
        line.split(" | ")[0][2:]: line.split(" | ") for line in r.stdout.splitlines() if line.startswith("| ")
    }
    assert {"knee_angle_r", "knee_angle_l", "hip_flexion_r", "hip_flexion_l"} == set(rows) - {"coordinate"}
    for name in ("knee_angle_r", "hip_flexion_l"):
        mean, smallest, largest = (float(v) for v in rows[name][1:4])
        assert smallest <= mean <= largest and 0 <= float(rows[name][5].split(" %")[0]) <= 100
    # the right knee held at 150 deg, past its onset of +140
    kinematics = read_storage(sim / "kinematics.mot")
    kinematics["knee_angle_r"] = 150.0
    labels = [c for c in kinematics.columns if c != "time"]
    write_storage(sim / "kinematics.mot", "kinematics", labels, kinematics["time"].to_numpy(),
                  kinematics[labels].to_numpy(), in_degrees=True)  # fmt: skip
    out = tmp_path / "excursions.md"
    r = run_script("joint_excursions.py", sim, "--prefix", "knee_angle_r", "--after", 0.2, "--out", out)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "| knee_angle_r | +150.0 | +150.0 | +150.0 | +0 / +140 | 100 % (0 / 100) |" in out.read_text()
    bare = run_script("joint_excursions.py", tmp_path)
    assert bare.returncode == 1 and "not a simulation folder" in bare.stderr


def test_chain_stiffness_finds_the_neck_muscles_buckling_their_joints(built_models, tmp_path):
    """analysis/chain_stiffness.py on the LongNeck: the neck muscles' summed generalized force on
    each neck coordinate grows with the coordinate (a negative stiffness, as a tensioned cable
    across a pivot gives, about the tension times the attachments' distance from the joint), in
    proportion to their activation and strongest at the base, whose muscles carry the chain; at
    0.5 it exceeds every joint's 5 N m/rad spring, at a near-zero activation (passive forces
    alone) none buckles."""
    out = tmp_path / "stiffness.md"

    def rows(activation):
        r = run_script(
            "chain_stiffness.py", built_models["LongNeck"], "--activation", activation, "--out", out
        )
        assert r.returncode == 0, r.stderr[-2000:]
        table = {}
        for line in out.read_text().splitlines():
            if line.startswith("| neck_"):
                cells = [c.strip() for c in line.strip("|").split("|")]
                table[cells[0]] = tuple(float(c) for c in cells[1:])
        return out.read_text().splitlines()[0], table

    head, half = rows(0.5)
    assert len(half) == 2 * 9 and "18 of 18 coordinates buckle" in head, head
    _, low = rows(0.01)
    for name, (muscles, spring, net) in half.items():
        assert muscles > 0 and spring == 5.0 and net == pytest.approx(spring - muscles, abs=0.06), name
        assert abs(low[name][0]) < muscles / 5 and low[name][2] > 0, name
    assert half["neck_bending_1"][0] > 3 * half["neck_bending_9"][0]
    bending = run_script(
        "chain_stiffness.py", built_models["LongNeck"], "--coordinates", "neck_bending_", "--out", out
    )
    lines = [line for line in out.read_text().splitlines() if line.startswith("| neck_")]
    assert bending.returncode == 0 and len(lines) == 9 and all("neck_bending_" in line for line in lines)
    assert float(lines[0].split("|")[2]) == pytest.approx(half["neck_bending_1"][0], abs=0.06)
    missing = run_script("chain_stiffness.py", tmp_path / "none.osim")
    assert missing.returncode == 2 and "none.osim: no such model file" in missing.stderr
    humanoid = run_script("chain_stiffness.py", built_models["HumanLegs"])
    assert humanoid.returncode == 2 and "no neck or tail muscles" in humanoid.stderr


def test_standing_lengths_match_opensims_path_and_mark_the_muscles_outside_the_range(tmp_path):
    """analysis/standing_lengths.py on the committed paper-objective Human: each muscle's
    normalized fibre length standing is OpenSim's base-pose path length less the tendon slack
    length, over l_opt (a slack muscle's negative), and the muscles outside 0.5-1.2 optimal
    lengths are marked (its hamstrings stretched standing, its rectus femoris slack)."""
    import numpy as np
    import opensim as osim

    from musclewalk.model.meta import load_meta, meta_path
    from musclewalk.model.vectors import ModelVectors, parse_osim

    model_path = REPO / "models/optimized/Human-walk-1.3/optimized.osim"
    lengths = ModelVectors(load_meta(meta_path(model_path))).standing_lengths(parse_osim(model_path))
    model = osim.Model(str(model_path))
    state = model.initSystem()
    model.realizePosition(state)
    muscles = model.getMuscles()
    assert len(lengths) == muscles.getSize()
    for i in range(muscles.getSize()):
        m = osim.Millard2012EquilibriumMuscle.safeDownCast(muscles.get(i))
        along = m.getLength(state) - m.getTendonSlackLength()
        height = m.getOptimalFiberLength() * np.sin(m.getPennationAngleAtOptimalFiberLength())
        fibre = np.hypot(along, height) if along > 0 else along
        assert lengths[m.getName()] == pytest.approx(fibre / m.getOptimalFiberLength(), abs=1e-6), m.getName()
    r = run_script("standing_lengths.py", model_path)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = {line.split()[0]: line.split()[1:] for line in r.stdout.splitlines()[1:]}
    assert "4 of 20 listed muscles outside 0.5-1.2" in r.stdout.splitlines()[0]
    assert rows["hamstrings_r"] == [f"{lengths['hamstrings_r']:.2f}", "outside"]
    assert rows["rectus_femoris_r"][1] == "outside" and float(rows["rectus_femoris_r"][0]) < 0
    assert rows["vasti_r"] == [f"{lengths['vasti_r']:.2f}"] and "vasti_l" not in rows
    wide = run_script("standing_lengths.py", model_path, "--all", "--bounds=-2,2")
    assert wide.returncode == 0 and "0 of 40 listed muscles outside -2-2" in wide.stdout
    bad = run_script("standing_lengths.py", model_path, "--bounds", "x")
    assert bad.returncode == 2 and "--bounds 'x': expected LO,HI" in bad.stderr
    missing = run_script("standing_lengths.py", tmp_path / "none.osim")
    assert missing.returncode == 1 and "none.osim" in missing.stderr


def test_static_optimization_turns_off_the_antagonist_and_shares_by_gain():
    """One coordinate, two agonists (gains 2 and 1 per unit activation) and an antagonist (-1), all
    at 0.3: the least sum of a^2 with the same generalized force (0.6) is a = (0.24, 0.12, 0), the
    agonists in proportion to their gains; a repeated row (a coordinate whose equation another
    repeats) changes nothing; a floor holds a muscle up, and a floor of 1 fixes it."""
    import numpy as np

    sys.path.insert(0, str(REPO / "analysis"))
    import static_optimization as so

    simulated, weights, zero = np.full(3, 0.3), np.ones(3), np.zeros(3)
    gain = np.array([[2.0, 1.0, -1.0]])
    a = so.least_activation_frame(gain, gain @ simulated, zero, weights, 1e-3)
    assert a == pytest.approx([0.24, 0.12, 0.0], abs=1e-6)
    twice = np.vstack([gain, gain])
    assert so.least_activation_frame(twice, twice @ simulated, zero, weights, 1e-3) == pytest.approx(
        a, abs=1e-6
    )
    # mass weights: a muscle twice as heavy carries less (a_i = mu g_i / w_i)
    heavy = so.least_activation_frame(gain, gain @ simulated, zero, np.array([2.0, 1.0, 1.0]), 1e-3)
    assert heavy == pytest.approx([1 / 5, 1 / 5, 0.0], abs=1e-6)  # 2 a1 + a2 = 0.6, a1 = a2
    floored = so.least_activation_frame(gain, gain @ simulated, np.array([0.0, 0.0, 0.1]), weights, 1e-3)
    assert floored == pytest.approx([0.28, 0.14, 0.1], abs=1e-6)  # 2 a1 + a2 = 0.7
    fixed = so.least_activation_frame(gain, gain @ simulated, np.array([0.0, 0.0, 1.0]), weights, 1e-3)
    assert fixed[2] == 1.0 and 2 * fixed[0] + fixed[1] == pytest.approx(1.6, abs=1e-6)
    # the floor: the model's minimum activation, or what keeps a damped fibre from pushing
    floor = so.activation_floor(
        np.array([[100.0, 100.0, 0.0, 50.0]]), np.array([[20.0, -30.0, -5.0, -80.0]]), np.full(4, 0.01)
    )
    assert floor.tolist() == [[0.01, 0.3, 0.01, 1.0]]
    # per frame, through the arrays the script builds: arms (frames, coordinates, muscles)
    arms = np.array([[[0.05, 0.05, -0.05]]] * 2)
    per_activation = np.array([[40.0, 20.0, 20.0]] * 2)
    solution = so.least_activation(
        arms, per_activation, np.ones((2, 3)), np.full((2, 3), 0.3), np.zeros((2, 3)), weights
    )
    assert solution == pytest.approx(np.array([[0.24, 0.12, 0.0]] * 2), abs=1e-6)


def test_static_optimization_runs_on_a_simulation_and_keeps_its_generalized_forces(tmp_path):
    import json

    sim = _simulate_committed("Human-walk-1.3-human", tmp_path / "sim", 1.0)
    out, result = tmp_path / "so.md", tmp_path / "so.json"
    r = run_script(
        "static_optimization.py", sim, "--skip", 0.4, "--every", 4, "--out", out, "--json", result,
        "--without-passive", "hamstrings_*", "rectus_femoris_r",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    data = json.loads(result.read_text())[str(sim)]
    assert data["frames"] == 31
    assert data["generalized_force_mismatch_N_m_per_kg"] < 1e-4
    assert {"hip_flexion_r", "knee_angle_l", "ankle_angle_r"} <= set(data["coordinates"])
    assert not any(c.startswith("root") for c in data["coordinates"])
    controller, least = data["controller"], data["static_optimization"]
    assert least["rate_W"] <= controller["rate_W"]
    assert least["terms_W"]["basal"] == controller["terms_W"]["basal"]
    assert set(data["sagittal_power_W_per_kg"]) == {"hip", "knee", "ankle"}
    # by muscle, active and passive: the parts add up to the joint's net muscle power
    hip_total = data["sagittal_power_W_per_kg"]["hip"]["walker"]
    parts = data["sagittal_power_by_muscle_W_per_kg"]["hip"].values()
    assert sum(v["active"] + v["passive"] for v in parts) == pytest.approx(sum(hip_total), abs=1e-9)
    assert "hamstrings" in data["sagittal_power_by_muscle_W_per_kg"]["knee"]
    # the counterfactual: the same motion without those muscles' passive force
    without = data["without_passive"]
    assert without["muscles"] == ["hamstrings_r", "hamstrings_l", "rectus_femoris_r"]
    assert without["terms_W"]["basal"] == controller["terms_W"]["basal"]
    assert "without their passive force" in r.stdout
    none = run_script("static_optimization.py", sim, "--skip", 0.4, "--without-passive", "biceps_*")
    assert none.returncode == 2 and "no muscle of" in none.stderr and "Traceback" not in none.stderr
    short = run_script("static_optimization.py", sim, "--skip", 5)
    assert short.returncode == 2 and "ends before --skip 5.0 s" in short.stderr
    assert "| gross cost of transport, J/(kg m) |" in r.stdout and out.read_text().strip() == r.stdout.strip()
    bad = run_script("static_optimization.py", tmp_path)
    assert bad.returncode == 2 and "neither a run folder" in bad.stderr


@needs_subject
def test_static_optimization_charges_a_lab_trial(tmp_path):
    """OpenSim's subject01 (a treadmill trial; ../shared/reference): every frame solved by its
    muscles (reserves of a few thousandths of a N m), the belt speed read from the feet, and a cost
    of transport in the range the README reports (6.0 J/(kg m))."""
    import json

    out = tmp_path / "trial.json"
    files = [
        SUBJECT / "subject01.osim",
        SUBJECT / "subject01_walk_IK.mot",
        SUBJECT / "subject01_walk_grf.xml",
    ]
    r = run_script("static_optimization.py", "--trial", *files, "--json", out)
    assert r.returncode == 0, r.stderr[-2000:]
    trial = json.loads(out.read_text())["trial"]
    assert sorted(trial["coordinates"]) == sorted(
        f"{c}_{s}" for c in ("hip_flexion", "knee_angle", "ankle_angle") for s in "rl"
    )
    assert max(trial["reserve_rms_N_m"].values()) < 0.05
    assert 1.0 < trial["belt_speed_m_s"] < 1.3 and 1.0 < trial["speed_m_s"] < 1.3
    cost = trial["static_optimization"]["cost_of_transport_J_per_kg_m"]
    assert 5.0 < cost < 7.0
    assert "| gross cost of transport, J/(kg m) |" in r.stdout
    missing = run_script("static_optimization.py", "--trial", "a.osim", "b.mot", "c.xml")
    assert missing.returncode == 2 and "a.osim: no such file" in missing.stderr


def test_grf_measures_replays_the_objectives_measures_on_a_recorded_grf(monkeypatch):
    """analysis/grf_measures.py: one control step per recorded GRF sample, time-averaged over
    t_max as the objective does: a landing at 2 BW is 0.7 BW above first_grf_peak_excess's
    limit once, 0.6 above vertical_grf_excess's for one sample."""
    from types import SimpleNamespace

    import numpy as np

    sys.path.insert(0, str(REPO / "analysis"))
    import grf_measures

    mass, dt = 50.0, 0.005
    weight = mass * 9.80665
    right = np.array([0.0, 1.0, 2.0, 1.0, 1.0]) * weight
    trial = SimpleNamespace(body_mass=mass, grf_time=np.arange(5) * dt, vgrf={"r": right, "l": np.zeros(5)})
    monkeypatch.setattr(grf_measures, "from_simulation", lambda sim_dir, kinetics: trial)
    values = grf_measures.replay(Path("sim"), t_max=1.0)
    assert values["first_grf_peak_excess"] == pytest.approx(0.7)
    assert values["vertical_grf_excess"] == pytest.approx(0.6 * dt)
    assert values["cycle_first_grf_peak_excess"] == 0.0  # no cycle after 2 s


def test_reproducibility_record_and_check_under_load(tmp_path):
    """A record written by the script is met to the last bit when checked beside a CPU burner, a
    record with one changed bit is not (exit 1, the field named), and the committed record's
    HumanLegs walker gives its committed numbers on this machine."""
    import json

    record = tmp_path / "record.json"
    run = REPO / "models/optimized/HumanLegs-walk-1.3"
    r = run_script("reproducibility.py", run, "--duration", 0.3, "--out", record)
    assert r.returncode == 0, r.stderr[-2000:]
    checked = run_script("reproducibility.py", "--check", record, "--burn", 1)
    assert checked.returncode == 0 and "to the last bit" in checked.stdout, (
        checked.stdout + checked.stderr[-2000:]
    )

    data = json.loads(record.read_text())
    data["runs"]["models/optimized/HumanLegs-walk-1.3"]["distance"] += 1e-12
    record.write_text(json.dumps(data))
    changed = run_script("reproducibility.py", "--check", record)
    assert changed.returncode == 1 and "distance expected" in changed.stdout

    committed = json.loads((REPO / "docs/tables/reproducibility.json").read_text())
    one = {
        **committed,
        "runs": {k: v for k, v in committed["runs"].items() if k.endswith("/HumanLegs-walk-1.3")},
    }
    assert len(one["runs"]) == 1
    record.write_text(json.dumps(one))
    across = run_script("reproducibility.py", "--check", record)
    assert across.returncode == 0, across.stdout + across.stderr[-2000:]
    bad = run_script("reproducibility.py", run, "--check", record)
    assert bad.returncode == 2 and "give no run folders" in bad.stderr


def test_commit_rule_ranks_by_targets_then_gps_and_asks_for_survival(tmp_path):
    """analysis/commit_rule.py: a candidate replaces the committed walker with more targets met,
    or as many at a lower GPS, and only if it walks on every seed at every epsilon (its table
    naming the termination rules that ended the falls); a missing run folder is a usage error
    naming it."""
    sys.path.insert(0, str(REPO / "analysis"))
    import commit_rule

    committed = commit_rule.Standing(Path("committed"), 13, 16, 7.68)
    walked = {1e-12: [10.0] * 5, 1e-9: [10.0] * 5}
    better = commit_rule.Standing(Path("a"), 13, 16, 7.38, walked)
    assert commit_rule.ranks_above(better, committed)
    assert commit_rule.verdict(better, committed).startswith("commit")
    from parameter_sensitivity import Walked

    fell = Walked(4.2, "com_height")
    assert str(fell) == "4.20 (com_height)" and str(Walked(10.0)) == "10.00" and fell == 4.2
    lucky = commit_rule.Standing(Path("b"), 14, 16, 9.0, {1e-12: [10.0, fell, 10.0, 10.0, 10.0]})
    assert commit_rule.ranks_above(lucky, committed) and lucky.survives() is False
    assert "falls with its parameters moved" in commit_rule.verdict(lucky, committed)
    assert "| 1e-12: 4 of 5 (com_height 1) |" in commit_rule.markdown(committed, [lucky])
    for worse in (
        commit_rule.Standing(Path("c"), 12, 16, 7.0),
        commit_rule.Standing(Path("d"), 13, 16, 7.68),
        commit_rule.Standing(Path("e"), 13, 16, None),
    ):
        assert not commit_rule.ranks_above(worse, committed)
        assert commit_rule.verdict(worse, committed).startswith("keep")
    table = commit_rule.markdown(committed, [better, commit_rule.Standing(Path("c"), 12, 16, 7.0)])
    assert "| committed | 13 of 16 | 7.68 | not probed | (committed) |" in table
    assert "| c | 12 of 16 | 7.00 | not probed | keep" in table
    assert "1e-12: 5 of 5, 1e-09: 5 of 5" in table

    missing = run_script("commit_rule.py", tmp_path / "none")
    assert missing.returncode == 2 and "none/best.json: not found" in missing.stderr


def test_ankle_push_off_reads_each_stride_from_touch_down_to_touch_down(tmp_path):
    """analysis/ankle_push_off.py on hand-made files: each complete stride after --after gets its
    stance peak, its angles at the start of lift-off and when the foot leaves the ground, and the
    least angle in early swing and in the whole swing; an unfinished stride is left out; a folder
    without kinematics is one error."""
    import numpy as np
    import pandas as pd

    from musclewalk.sim.outputs import write_storage

    sys.path.insert(0, str(REPO / "analysis"))
    import ankle_push_off

    dt = 0.05
    cycle = ["stance"] * 6 + ["lift_off"] * 2 + ["swing"] * 4 + ["stance_preparation"] * 2
    angles = [0, 5, 10, 12, 11, 10, 8, 0, -6, -12, -8, -2, 0, 1]  # deg, one per state sample
    states = ["swing"] * 2 + cycle * 3 + ["stance"] * 3  # a touch-down at 0.1 s and after each cycle
    ankle = np.array([0.0, 0.0] + angles * 3 + [0.0] * 3)
    time = dt * np.arange(len(states))
    rows = ankle_push_off.push_off_strides(time, np.array(states), ankle, after=0.5)
    assert len(rows) == 2  # from the touch-downs at 0.80 and 1.50 s (the one at 0.10 s: before --after)
    assert rows[0] == {
        "stance_peak": 12.0,
        "lift_off_start": 8.0,
        "ground_left": -6.0,
        "early_swing_least": -12.0,  # within 0.1 s of the foot leaving: -6, -12, -8
        "swing_least": -12.0,
    }

    sim = tmp_path / "sim"
    sim.mkdir()
    controller = pd.DataFrame({"t": time, "state_r": states, "state_l": states})
    controller.to_csv(sim / "controller.csv", index=False)
    write_storage(sim / "kinematics.mot", "kinematics", ["ankle_angle_r", "ankle_angle_l"], time,
                  np.column_stack([ankle, ankle - 1.0]), in_degrees=True)  # fmt: skip
    out = tmp_path / "push_off.md"
    r = run_script("ankle_push_off.py", sim, "--after", 0.5, "--out", out)
    assert r.returncode == 0, r.stderr[-2000:]
    text = out.read_text()
    assert "strides after 0.5 s (right / left): 2 / 2" in text
    assert "| when the foot leaves the ground | -6.0 | -7.0 |" in text
    bare = run_script("ankle_push_off.py", tmp_path)
    assert bare.returncode == 1 and "kinematics.mot" in bare.stderr


def test_pace_counts_touchdowns_and_compares_with_the_similar_pace(tmp_path):
    """analysis/pace.py on a hand-made simulation folder of the committed HumanLegs model: a
    touch-down every 0.5 s after 2 s (120 steps a minute) at 1.2 m/s gives 0.6 m steps; the similar
    pace is the step-frequency measure's."""
    import json as json_

    import numpy as np
    import pandas as pd

    from musclewalk.measures.gait import dynamically_similar_step_frequency
    from musclewalk.model.meta import load_meta

    model = REPO / "models/optimized/HumanLegs-walk-1.3/optimized.osim"
    sim = tmp_path / "sim"
    sim.mkdir()
    (sim / "summary.json").write_text(json_.dumps({"model": str(model)}))
    t = np.round(np.arange(0, 6.0, 0.05), 2)
    # the right leg enters stance at 0, 1, 2, ...; the left at 0.5, 1.5, ...
    right = np.where((t % 1.0) < 0.5, "stance", "swing")
    left = np.where((t % 1.0) < 0.5, "swing", "stance")
    speed = np.where(t > 2, 1.2, 0.3)
    pd.DataFrame({"t": t, "state_r": right, "state_l": left, "target_speed": 1.3,
                  "com_forward_speed": speed}).to_csv(sim / "controller.csv", index=False)  # fmt: skip
    out = tmp_path / "pace.md"
    r = run_script("pace.py", sim, "--out", out)
    assert r.returncode == 0, r.stderr
    hip = load_meta(model).leg_length
    similar = dynamically_similar_step_frequency(1.3, hip) * 60
    similar_step = 1.3 * 60 / similar / hip
    row = f"| {sim} | 5.95 | 1.20 (1.3) | 120 | {0.6 / hip:.2f} | {similar:.0f} | {similar_step:.2f} |"
    assert row in out.read_text() and row in r.stdout
    bad = run_script("pace.py", tmp_path)
    assert bad.returncode != 0 and "summary.json: not found" in bad.stderr


def _variant_run(tmp_path: Path, upper: str = "upper: 0.4") -> Path:
    """A run folder of the committed HumanLegs walker on a copy of the HumanLegs creature file
    named HumanLegsCopy (its legs' ``upper`` as given): its model built there, its best.json
    renamed to that creature."""
    import json

    from musclewalk.model.build import build_creature

    creature = tmp_path / "human_legs_copy.yaml"
    text = (REPO / "models/creatures/human_legs.yaml").read_text()
    creature.write_text(text.replace("name: HumanLegs", "name: HumanLegsCopy").replace("upper: 0.4", upper))
    run = tmp_path / "run"
    build_creature(str(creature), None, run / "model" / "HumanLegsCopy.osim")
    committed = REPO / "models/optimized/HumanLegs-walk-1.3"
    best = json.loads((committed / "best.json").read_text())
    best.update(creature="HumanLegsCopy", model=str(run / "model" / "HumanLegsCopy.osim"))
    (run / "best.json").write_text(json.dumps(best))
    (run / "history.csv").write_text("generation,best\n1,2.0\n")
    (run / "settings.json").write_text("{}\n")
    (run / "log.txt").write_text("command: musclewalk optimize ...\n")
    return run


def _osim_values(osim: Path) -> list:
    """Each element of an .osim as (tag, attributes, its text's numbers or the text itself)."""
    from lxml import etree

    def value(text):
        try:
            return [float(x) for x in (text or "").split()]
        except ValueError:
            return text.strip()

    return [
        (e.tag, dict(e.attrib), value(e.text))
        for e in etree.parse(str(osim)).iter()
        if isinstance(e.tag, str)
    ]


def test_adopt_run_rewrites_a_run_under_the_preset_its_model_equals(tmp_path):
    import json

    run = _variant_run(tmp_path)
    out = tmp_path / "HumanLegs-walk-1.3"
    r = run_script("adopt_run.py", run, "HumanLegs", "--out", out)
    assert r.returncode == 0, r.stderr[-2000:]
    committed = REPO / "models/optimized/HumanLegs-walk-1.3"
    best = json.loads((out / "best.json").read_text())
    assert best["creature"] == "HumanLegs" and best["model"] == str(out / "model" / "HumanLegs.osim")
    assert best["parameters"] == json.loads((committed / "best.json").read_text())["parameters"]
    # the preset's build with the run's values written back: the committed walker's own model
    # (written by an earlier version, which formatted some numbers otherwise)
    assert _osim_values(out / "optimized.osim") == _osim_values(committed / "optimized.osim")
    assert json.loads((out / "optimized.meta.json").read_text())["creature"] == "HumanLegs"
    assert (out / "history.csv").read_text() == (run / "history.csv").read_text()
    log = (out / "log.txt").read_text().splitlines()
    assert log[0] == "command: musclewalk optimize ..." and log[-1].startswith("adopted: ")
    assert f"from {run} as the preset HumanLegs (creature HumanLegsCopy -> HumanLegs)" in log[-1]
    again = run_script("adopt_run.py", run, "HumanLegs", "--out", out)  # never over a folder
    assert again.returncode == 2 and "exists" in again.stderr


def test_adopt_run_refuses_a_run_whose_model_is_another(tmp_path):
    run = _variant_run(tmp_path, "upper: 0.42")
    out = tmp_path / "HumanLegs-walk-1.3"
    r = run_script("adopt_run.py", run, "HumanLegs", "--out", out)
    assert r.returncode == 2 and "HumanLegsCopy.osim: differs from the preset's build" in r.stderr
    assert not out.exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_adopt_run_takes_a_template_parameter_added_since_at_its_build_value(tmp_path):
    import json

    run = _variant_run(tmp_path)
    meta = run / "model" / "HumanLegsCopy.meta.json"
    data = json.loads(meta.read_text())
    del data["parameters"]["legs.tibial_torsion"]  # a run from before the parameter (at 0: the same .osim)
    meta.write_text(json.dumps(data, indent=1))
    out = tmp_path / "HumanLegs-walk-1.3"
    r = run_script("adopt_run.py", run, "HumanLegs", "--out", out)
    assert r.returncode == 0, r.stderr[-2000:]
    last = (out / "log.txt").read_text().splitlines()[-1]
    assert "template parameters added since, at their build values: legs.tibial_torsion" in last
