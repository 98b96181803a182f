"""The benchmark scripts still run against the current package (tiny settings; the real
measurements take minutes)."""

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _load(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_simulation_speed_smoke(capfd):
    bench = _load("simulation_speed")
    bench.main(
        ["--runs", str(REPO / "models/optimized/HumanLegs-walk-1.3"), "--duration", "0.05", "--rounds", "1"]
    )
    out = capfd.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("HumanLegs-walk-1.3 "))
    # termination, simulated time, closed loop, steps/s, realizations/s, python share, replay
    fields = row.replace("|", " ").split()
    assert fields[2] == "none" and float(fields[3]) == pytest.approx(0.05)
    assert fields[5].isdigit() and fields[6].isdigit(), row  # integrator statistics parsed
    assert fields[9].isdigit() and fields[10].isdigit(), row
    assert "[info]" not in out  # the OpenSim log stayed out
    assert "WARNING" not in out


@pytest.mark.parametrize("step", ["0", "0.01", "-1", "1e-7", "fast"])
def test_integrator_smoothness_refuses_a_step_outside_the_fixed_step_range(step, capsys):
    """--steps takes 'adaptive' or a fixed step within FIXED_STEP_RANGE (0 would run
    error-controlled under a fixed-step label), refused before anything is simulated."""
    bench = _load("integrator_smoothness")
    run = str(REPO / "models/optimized/HumanLegs-walk-1.3")
    with pytest.raises(SystemExit) as exc:
        bench.main([run, "--steps", "adaptive", step])
    assert exc.value.code == 2
    message = f"--steps: {step!r} is neither 'adaptive' nor a fixed step in [1e-05, 0.005] s"
    assert message in capsys.readouterr().err


def test_optimization_throughput_smoke(capfd):
    bench = _load("optimization_throughput")
    bench.main(
        [
            "--creature",
            "HumanLegs",
            "--init",
            "none",
            "--popsize",
            "2",
            "--duration",
            "0.05",
            "--workers",
            "1",
        ]
    )
    out = capfd.readouterr().out
    assert "2 evaluations in" in out and "evaluations/min" in out
    assert "per-evaluation overhead" in out


def test_physics_alternatives_smoke(capfd):
    bench = _load("physics_alternatives")
    bench.main(
        [
            "--runs",
            str(REPO / "models/optimized/HumanLegs-walk-1.3"),
            "--duration",
            "0.05",
            "--variants",
            "fixed-1ms",
            "max-step-0.5ms",
            "rigid-tendons",
        ]
    )
    out = capfd.readouterr().out
    rows = {
        line.split()[0]: line.split()
        for line in out.splitlines()
        if line.startswith(("baseline ", "fixed-1ms ", "max-step-0.5ms ", "rigid-tendons "))
    }
    assert set(rows) == {"baseline", "fixed-1ms", "max-step-0.5ms", "rigid-tendons"}
    assert "h=1ms" in rows["fixed-1ms"] and float(rows["fixed-1ms"][-3]) == 1000  # steps/s
    # the error control's steps capped at 0.5 ms: at least 2000 per simulated s
    assert "h<=0.5ms" in rows["max-step-0.5ms"] and float(rows["max-step-0.5ms"][-3]) >= 2000
    assert "rigid-tendons changes 8:" in out


def test_neck_tail_model_edits(built_models, tmp_path):
    """The neck-tail speed variants edit what they say on a neck-tail creature (the LongNeck
    built with the paper's 3-DOF neck joints, twist 1) and nothing on the humanoids (whose runs
    then skip them), the Human's head included."""
    import json
    import math

    from musclewalk.model.build import build_creature
    from musclewalk.model.meta import meta_path
    from musclewalk.model.vectors import parse_osim

    bench = _load("physics_alternatives")

    def inertias(tree):
        return {
            b.get("name"): [float(v) for v in b.findtext("inertia").split()]
            for b in tree.getroot().iter("Body")
        }

    path = tmp_path / "LongNeck.osim"
    build_creature("LongNeck", {"upper_body.twist": "1"}, path)
    meta = json.loads(meta_path(path).read_text())
    tree = parse_osim(path)
    before = inertias(tree)
    changed = bench.neck_tail_axial_inertia(tree, meta)
    after = inertias(tree)
    assert set(changed) == {f"neck_{i}" for i in range(1, 9)} | {"head"}
    for name in changed:
        moments = before[name][:3]
        axial = moments.index(min(moments))
        added = 9 * moments[axial]
        assert after[name][axial] == pytest.approx(moments[axial] + added)
        for i in set(range(3)) - {axial}:
            assert after[name][i] == pytest.approx(moments[i] + added / 2)
        new = after[name][:3]
        assert all(new[i] <= new[(i + 1) % 3] + new[(i + 2) % 3] for i in range(3))  # a real body
    assert after["trunk"] == before["trunk"]

    tree = parse_osim(path)
    changed = bench.neck_tail_segment_damping(tree, meta)
    assert len(changed) == 3 * 9  # flexion, bending, rotation of 8 neck joints and the head's
    inertia = inertias(tree)
    springs = {s.findtext("coordinate"): s for s in tree.getroot().iter("SpringGeneralizedForce")}
    for coord, moment in (
        ("neck_rotation_1", min(inertia["neck_1"][:3])),
        ("neck_flexion_1", inertia["neck_1"][2]),
    ):
        stiffness = float(springs[coord].findtext("stiffness"))
        assert float(springs[coord].findtext("viscosity")) == pytest.approx(2 * math.sqrt(stiffness * moment))
    assert springs["hip_rotation_r"].findtext("viscosity") == parse_osim(path).getroot().find(
        ".//SpringGeneralizedForce[@name='spring_hip_rotation_r']"
    ).findtext("viscosity")

    tree = parse_osim(path)
    twists = {f"neck_rotation_{i}" for i in range(1, 10)}
    assert set(bench.neck_tail_twist_damping(tree, meta)) == twists
    springs = {s.findtext("coordinate"): s for s in tree.getroot().iter("SpringGeneralizedForce")}
    assert springs["neck_flexion_1"].findtext("viscosity") == "0.4"
    axial = min(inertias(tree)["neck_1"][:3])
    assert float(springs["neck_rotation_1"].findtext("viscosity")) == pytest.approx(
        2 * math.sqrt(5.0 * axial)
    )

    tree = parse_osim(path)
    assert set(bench.neck_tail_twist_locked(tree, meta)) == twists
    locked = {c.get("name") for c in tree.getroot().iter("Coordinate") if c.findtext("locked") == "true"}
    assert locked == twists

    tree = parse_osim(path)
    assert len(bench.neck_tail_spring_damping_tenth(tree, meta)) == 3 * 9
    springs = {s.findtext("coordinate"): s for s in tree.getroot().iter("SpringGeneralizedForce")}
    assert float(springs["neck_bending_4"].findtext("viscosity")) == pytest.approx(0.04)

    tree = parse_osim(path)
    changed = bench.neck_tail_fiber_damping_zero(tree, meta)
    assert len(changed) == 4 * 9 and all(n.startswith("neck_") for n in changed)
    damping = {
        m.get("name"): m.findtext("fiber_damping")
        for m in tree.getroot().iter("Millard2012EquilibriumMuscle")
    }
    assert damping["neck_anterior_1_r"] == "0" and damping["vasti_r"] is None

    edits = (
        bench.neck_tail_inertia,
        bench.neck_tail_axial_inertia,
        bench.neck_tail_segment_damping,
        bench.neck_tail_twist_damping,
        bench.neck_tail_twist_locked,
        bench.neck_tail_spring_damping_tenth,
        bench.neck_tail_fiber_damping_zero,
    )
    for name in ("Human", "HumanLegs"):
        meta = json.loads(meta_path(built_models[name]).read_text())
        for edit in edits:
            assert edit(parse_osim(built_models[name]), meta) == []


def test_runs_of_the_same_folder_name_get_their_own_labels(tmp_path):
    """Two runs' stage folders of one name (run-a/stages/survive, run-b/stages/survive) are told
    apart by their path below the common folder (one name used to hide the other's integrator statistics)."""
    import shutil

    bench = _load("simulation_speed")
    runs = []
    for run in ("run-a", "run-b"):
        folder = tmp_path / run / "stages" / "survive"
        folder.mkdir(parents=True)
        for name in ("optimized.osim", "optimized.meta.json", "best.json"):
            shutil.copy(REPO / "models/optimized/HumanLegs-walk-1.3" / name, folder)
        runs.append(folder)
    names = [w.name for w in bench.load_walkers(runs)]
    assert names == ["run-a/stages/survive", "run-b/stages/survive"]
    with pytest.raises(SystemExit, match="given twice"):
        bench.load_walkers([runs[0], runs[0]])
