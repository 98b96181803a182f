"""Every preset builds, loads in OpenSim 4.6 and validates; structure counts and moment-arm signs."""

import numpy as np
import pytest

from musclewalk.model.meta import load_meta
from musclewalk.model.template import load_creature
from musclewalk.model.validate import validate_model
from musclewalk.opensim_env import import_opensim

PRESETS = ["HumanLegs", "Human", "Ostrich", "LongNeck", "LongLegs"]

# documented structure (models/README.md): bodies incl. root, DOFs incl. 6 root DOFs, muscles
STRUCTURE = {
    "HumanLegs": (9, 22, 20),
    "Human": (16, 39, 40),
    # N = T = 5: 9 + N + T + 1 bodies, 4 (N + 1) + 4 T + 20 muscles; twist 0: 2 (N + 1) + 2 T
    # chain DOFs
    "Ostrich": (20, 44, 64),
    "LongNeck": (18, 40, 56),  # N = 8, T = 0
    "LongLegs": (20, 44, 64),
}


@pytest.mark.parametrize("name", PRESETS)
def test_preset_loads_with_documented_structure(built_models, name):
    osim = import_opensim()
    model = osim.Model(str(built_models[name]))
    state = model.initSystem()
    bodies, dofs, muscles = STRUCTURE[name]
    assert model.getBodySet().getSize() == bodies
    assert model.getCoordinateSet().getSize() == dofs
    assert model.getMuscles().getSize() == muscles
    forces = model.getForceSet()
    muscle_classes = {
        forces.get(i).getConcreteClassName()
        for i in range(forces.getSize())
        if "Muscle" in forces.get(i).getConcreteClassName()
    }
    assert muscle_classes == {"Millard2012EquilibriumMuscle"}
    for i in range(model.getMuscles().getSize()):
        path = model.getMuscles().get(i).getGeometryPath().getPathPointSet()
        assert path.getSize() >= 2
        assert all(path.get(k).getConcreteClassName() == "PathPoint" for k in range(path.getSize()))
        mus = osim.Millard2012EquilibriumMuscle.safeDownCast(model.getMuscles().get(i))
        assert mus.get_activation_time_constant() == pytest.approx(0.01)
        assert mus.get_deactivation_time_constant() == pytest.approx(0.01)
    # the creature stands on its contact spheres: lowest sphere touches the ground
    lowest = []
    geoms = model.getContactGeometrySet()
    for i in range(geoms.getSize()):
        sphere = osim.ContactSphere.safeDownCast(geoms.get(i))
        if sphere:
            p = sphere.getFrame().findStationLocationInGround(state, sphere.get_location())
            lowest.append(p.get(1) - sphere.getRadius())
    assert min(lowest) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("name", PRESETS)
def test_preset_validates(built_models, name):
    report = validate_model(built_models[name], load_meta(built_models[name]))
    assert report.ok, report.problems
    # humanoid_legs muscles start at the standing fibre length of gait10dof18musc (template data)
    standing = {
        "hip_abductor_posterior": 0.56,
        "hamstrings": 0.85,
        "rectus_femoris": 0.87,
        "vasti": 0.53,
        "soleus": 0.91,
        "tibialis_anterior": 0.82,
    }
    for muscle, value in report.fiber_lengths.items():
        base = muscle[:-2] if muscle[-2:] in ("_r", "_l") else muscle
        expected = standing.get(base, 1.0) if name != "Ostrich" else 1.0  # inverted_legs: 1.0
        assert value == pytest.approx(expected, abs=0.05), muscle


def test_human_mass_and_dimensions():
    spec = load_creature("Human")
    assert 70 <= spec.total_mass <= 80
    # hip height = ankle height + lower + upper
    assert spec.root_height == pytest.approx(0.075 + 0.4 + 0.4 + 0.07)


def test_moment_arm_signs_match_function(built_models):
    """A few muscles against anatomy, both sides (OpenSim's own moment arms)."""
    osim = import_opensim()
    model = osim.Model(str(built_models["Human"]))
    state = model.initSystem()
    cs = model.getCoordinateSet()

    def arm(muscle, coord):
        return model.getMuscles().get(muscle).computeMomentArm(state, cs.get(coord))

    for side in "rl":
        assert arm(f"hip_flexor_medial_{side}", f"hip_flexion_{side}") > 0.01
        assert arm(f"hip_flexor_medial_{side}", f"hip_adduction_{side}") > 0.01
        assert arm(f"hip_abductor_anterior_{side}", f"hip_adduction_{side}") < -0.01
        assert arm(f"hamstrings_{side}", f"knee_angle_{side}") > 0.01
        assert arm(f"vasti_{side}", f"knee_angle_{side}") < -0.01
        assert arm(f"soleus_{side}", f"ankle_angle_{side}") < -0.01
        assert arm(f"tibialis_anterior_{side}", f"ankle_angle_{side}") > 0.01
    # mirrored muscles act identically on mirrored coordinates
    for m in ("hip_abductor_posterior", "hamstrings", "gastrocnemius"):
        for c in ("hip_flexion", "hip_adduction", "hip_rotation", "knee_angle", "ankle_angle"):
            assert arm(f"{m}_r", f"{c}_r") == pytest.approx(arm(f"{m}_l", f"{c}_l"), abs=1e-9)
    # spine muscles of a side bend the trunk to that side
    assert arm("spine_posterior_lower_r", "lumbar_bending") > 0.01
    assert arm("spine_posterior_lower_l", "lumbar_bending") < -0.01


def test_meta_roles_and_delays(built_models):
    meta = load_meta(built_models["Human"])
    by_name = {m.name: m for m in meta.muscles}
    assert set(by_name["vasti_r"].roles) == {"knee", "knee_extensor"}
    assert {"hip", "hip_extensor", "knee"} <= set(by_name["hamstrings_l"].roles)
    assert {"ankle", "ankle_extensor", "knee"} <= set(by_name["gastrocnemius_r"].roles)
    assert "head_chain" in by_name["spine_posterior_neck_r"].roles
    assert "arm" in by_name["elbow_flexor_l"].roles
    # paper §4.4 delays: foot 20 ms, lower leg 10 ms, others 5 ms
    assert by_name["soleus_r"].delay == 0.020
    assert by_name["vasti_r"].delay == 0.010
    assert by_name["hip_flexor_medial_r"].delay == 0.005
    assert by_name["spine_anterior_neck_r"].delay == 0.005
    # the hamstrings span the hip (root -> upper leg) and the knee on one path segment
    assert [s.joint for s in by_name["hamstrings_r"].spans] == ["hip_r", "knee_r"]


def test_ostrich_chain_muscles_share_a_type():
    spec = load_creature("Ostrich")
    types = {m.unique for m in spec.muscles if m.name.startswith(("neck", "tail"))}
    assert types == {"neck_anterior", "neck_posterior", "tail_anterior", "tail_posterior"}
    assert sum(m.unique == "neck_anterior" for m in spec.muscles) == 2 * (5 + 1)
    assert sum(m.unique == "tail_posterior" for m in spec.muscles) == 2 * 5


def test_overrides_change_dimensions():
    base = load_creature("Human")
    longer = load_creature("Human", {"legs.upper": "0.45"})
    assert longer.root_height == pytest.approx(base.root_height + 0.05)
    assert longer.body("upper_leg_r").mass > base.body("upper_leg_r").mass
    no_tail = load_creature("Ostrich", {"upper_body.T": "0"})
    assert not any(b.name.startswith("tail") for b in no_tail.bodies)


def _assert_stop_at_declared_ranges(model_path, prefixes, count, push_back):
    """Every coordinate named with ``prefixes`` (``count`` of them) has a CoordinateLimitForce
    inside the range its template declares, pushing back by more than ``push_back`` N m 10 deg
    beyond its upper limit."""
    osim = import_opensim()
    model = osim.Model(str(model_path))
    state = model.initSystem()
    limits = {}
    forces = model.getForceSet()
    for i in range(forces.getSize()):
        f = osim.CoordinateLimitForce.safeDownCast(forces.get(i))
        if f:
            limits[f.get_coordinate()] = f
    coords = model.getCoordinateSet()
    names = [coords.get(i).getName() for i in range(coords.getSize())]
    names = [n for n in names if n.startswith(prefixes)]
    assert len(names) == count
    for name in names:
        assert name in limits, name
        c = coords.get(name)
        lo, hi = np.degrees(c.getRangeMin()), np.degrees(c.getRangeMax())
        f = limits[name]
        assert lo - 1e-9 <= f.get_lower_limit() < 0.0 < f.get_upper_limit() <= hi + 1e-9, name
        c.setValue(state, np.radians(f.get_upper_limit() + 10.0))
        model.realizeVelocity(state)
        assert f.calcLimitForce(state) < -push_back, name  # pushes back toward the range
        c.setValue(state, 0.0)


def test_human_spine_and_neck_stop_at_their_declared_ranges(built_models):
    """Without these limits the Human's lumbar bent to -81 deg and its head turned -228 deg."""
    _assert_stop_at_declared_ranges(built_models["Human"], ("lumbar_", "thorax_", "neck_"), 9, 50.0)


@pytest.mark.parametrize("name, dofs", [("Ostrich", 22), ("LongNeck", 18), ("LongLegs", 22)])
def test_neck_and_tail_stop_at_their_declared_ranges(built_models, name, dofs):
    """Without these limits the Ostrich's first neck joint folded to 112 deg, and its integrator
    took about six times the steps (models/templates/neck_tail.yaml)."""
    _assert_stop_at_declared_ranges(built_models[name], ("neck_", "tail_"), dofs, 10.0)


@pytest.mark.parametrize("name", ["Ostrich", "LongNeck"])
def test_neck_muscles_hold_the_neck_out_horizontally(built_models, name):
    """Each neck joint's posterior muscles (moment arms from OpenSim) hold the neck and head beyond
    it straight out horizontally (their weight times the distance of their centre of mass from
    the joint, from OpenSim's base pose) about neck_holding = 3 times over, or have the distal
    joints' 250 N x force_scale where that is more; the anterior muscles 0.6 of that force."""
    osim = import_opensim()
    model = osim.Model(str(built_models[name]))
    state = model.initSystem()
    model.realizePosition(state)
    spec = load_creature(name)
    force_scale = (spec.total_mass / 75.16) ** (2.0 / 3.0)
    bodies = {b.getName(): b for b in model.getBodySet()}
    neck = sorted((b for b in bodies if b.startswith("neck_")), key=lambda b: int(b.split("_")[1]))
    chain = [*neck, "head"]
    muscles = model.getMuscles()
    ratios = []
    for k, child in enumerate(chain, start=1):
        joint = bodies[child].findStationLocationInGround(state, osim.Vec3(0, 0, 0)).to_numpy()
        masses = np.array([bodies[b].getMass() for b in chain[k - 1 :]])
        coms = np.array(
            [
                bodies[b].findStationLocationInGround(state, bodies[b].getMassCenter()).to_numpy()
                for b in chain[k - 1 :]
            ]
        )
        load = masses.sum() * 9.80665 * np.linalg.norm(masses @ coms / masses.sum() - joint)
        coordinate = model.getCoordinateSet().get(f"neck_flexion_{k}")
        posterior = [muscles.get(f"neck_posterior_{k}_{s}") for s in "rl"]
        anterior = [muscles.get(f"neck_anterior_{k}_{s}") for s in "rl"]
        fmax = posterior[0].getMaxIsometricForce()
        assert fmax == pytest.approx(max(250 * force_scale, 3 * load / (2 * 1.2 * 0.035)), rel=1e-9)
        assert anterior[0].getMaxIsometricForce() == pytest.approx(0.6 * fmax, rel=1e-12)
        holding = -sum(m.getMaxIsometricForce() * m.computeMomentArm(state, coordinate) for m in posterior)
        ratios.append(holding / load)
        # each joint's muscles lie symmetric about it in the base pose, 1.2 neck radii from it,
        # the first joint's too (its parent-side points are in the first segment's tilted frame)
        arms = [m.computeMomentArm(state, coordinate) for m in (*posterior, *anterior)]
        np.testing.assert_allclose(arms, [-0.042, -0.042, 0.042, 0.042], atol=1e-9, err_msg=child)
    assert ratios[0] == pytest.approx(3, rel=1e-6) and ratios[1] == pytest.approx(3, rel=1e-6)
    assert ratios[-1] > 9  # the head joint keeps 250 N


def test_bodies_beyond_a_joint():
    from musclewalk.model.kinematics import bodies_beyond

    links = [
        ("root", "neck_1"),
        ("neck_1", "neck_2"),
        ("neck_2", "head"),
        ("neck_1", "crest"),
        ("root", "tail_1"),
    ]
    assert bodies_beyond(links, "neck_1") == ["neck_1", "neck_2", "crest", "head"]
    assert bodies_beyond(links, "head") == ["head"]
