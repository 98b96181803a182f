"""models/physics.yaml `muscles: ideal` (Geijtenbeek et al. 2013 §7.5.3, "no biomechanical
constraints"): every muscle a PathActuator F = u F_max on the Millard build's path, no neural
delays, F_max its only muscle property; the default (Millard) builds as before."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import yaml
from lxml import etree

from musclewalk.constants import CONTROL_INTERVAL
from musclewalk.io_checks import check_model
from musclewalk.model.build import build_creature
from musclewalk.model.meta import load_meta, meta_path
from musclewalk.model.vectors import ModelVectors, parse_osim
from musclewalk.opensim_env import import_opensim
from musclewalk.sim.bridge import control_model_from_meta

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _path_points(actuator) -> list[tuple]:
    return [
        (p.get("name"), p.findtext("socket_parent_frame"), p.findtext("location"))
        for p in actuator.iter("PathPoint")
    ]


def test_the_ideal_human_is_path_actuators_on_the_millard_paths(ideal_human_osim, built_models):
    ideal = etree.parse(str(ideal_human_osim))
    millard = etree.parse(str(built_models["Human"]))
    assert not ideal.xpath("//Millard2012EquilibriumMuscle")
    actuators = ideal.xpath("//ForceSet/objects/PathActuator")
    muscles = {m.get("name"): m for m in millard.xpath("//ForceSet/objects/Millard2012EquilibriumMuscle")}
    assert [a.get("name") for a in actuators] == list(muscles) and len(actuators) == 40
    for a in actuators:
        m = muscles[a.get("name")]
        assert _path_points(a) == _path_points(m)
        assert float(a.findtext("optimal_force")) == float(m.findtext("max_isometric_force"))
        assert (a.findtext("min_control"), a.findtext("max_control")) == ("0", "1")
    # the controller drives the same actuators; everything but the muscles is the Millard build's
    assert ideal.xpath("//PrescribedController/socket_actuators")[0].text == (
        millard.xpath("//PrescribedController/socket_actuators")[0].text
    )
    assert len(ideal.xpath("//ExponentialContactForce")) == len(millard.xpath("//ExponentialContactForce"))


def test_the_ideal_human_loads_in_opensim_with_the_same_moment_arms(ideal_human_osim, built_models):
    osim = import_opensim()
    ideal = osim.Model(str(ideal_human_osim))
    ideal_state = ideal.initSystem()
    assert ideal.getMuscles().getSize() == 0 and ideal.getActuators().getSize() == 40
    # no activation or fibre states: 39 coordinates and speeds only
    assert ideal.getNumStateVariables() == 2 * 39
    millard = osim.Model(str(built_models["Human"]))
    millard_state = millard.initSystem()
    for name, coordinate in (("vasti_r", "knee_angle_r"), ("soleus_l", "ankle_angle_l")):
        actuator = osim.PathActuator.safeDownCast(ideal.getForceSet().get(name))
        assert actuator.getOptimalForce() == load_meta(ideal_human_osim).muscle(name).max_isometric_force
        arm = actuator.computeMomentArm(ideal_state, ideal.getCoordinateSet().get(coordinate))
        expected = (
            millard.getMuscles()
            .get(name)
            .computeMomentArm(millard_state, millard.getCoordinateSet().get(coordinate))
        )
        assert arm == pytest.approx(expected, rel=1e-9) and abs(arm) > 0.01


def test_the_ideal_metadata_has_no_delays_and_only_max_force(ideal_human_osim, built_models):
    meta = load_meta(ideal_human_osim)
    human = load_meta(built_models["Human"])
    assert meta.muscle_model == "ideal" and meta.physics.muscles == "ideal"
    assert human.muscle_model == "millard" and human.physics.muscles is None
    assert "muscles" not in human.to_dict()["physics"]
    assert [m.delay for m in meta.muscles] == [0.0] * 40 and max(m.delay for m in human.muscles) == 0.02
    assert all(m.rigid_tendon is None for m in meta.muscles)
    # what the controller gets: no delay anywhere (the Millard Human: 1-4 control steps)
    assert not control_model_from_meta(meta, CONTROL_INTERVAL).delay_steps.any()
    assert set(control_model_from_meta(human, CONTROL_INTERVAL).delay_steps.tolist()) == {1, 2, 4}
    # the muscle properties it has: F_max of the groups whose F_max the Millard Human optimizes
    assert [e.name for e in meta.properties] == [
        e.name for e in human.properties if e.kind == "max_isometric_force"
    ]
    assert len(meta.properties) == 10 and {e.kind for e in meta.properties} == {"max_isometric_force"}
    assert meta.routing == human.routing and meta.passive == human.passive
    check_model(ideal_human_osim)


def test_the_ideal_vectors_write_optimal_force_and_derive_no_tendon(ideal_human_osim, tmp_path):
    meta = load_meta(ideal_human_osim)
    vectors = ModelVectors(meta)
    tree = parse_osim(ideal_human_osim)
    before = etree.tostring(tree)
    vectors.write(tree, {"properties": {"vasti.max_isometric_force": 1.0}})
    entry = next(e for e in meta.properties if e.name == "vasti.max_isometric_force")
    forces = tree.xpath("//PathActuator[starts-with(@name, 'vasti_')]/optimal_force")
    assert [float(f.text) for f in forces] == [entry.hi, entry.hi]
    assert vectors.read_values(tree, "properties")["vasti.max_isometric_force"] == pytest.approx(1.0)
    updated = vectors.updated_meta(tree).muscle("vasti_l")
    assert updated.max_isometric_force == entry.hi
    assert updated.optimal_fiber_length == meta.muscle("vasti_l").optimal_fiber_length
    initial = (entry.initial - entry.lo) / (entry.hi - entry.lo)
    vectors.write(tree, {"properties": {"vasti.max_isometric_force": initial}})
    assert etree.tostring(tree) == before
    # a Millard-only property (a hand-made metadata) is refused, naming it
    human = build_creature("Human", None, tmp_path / "Human.osim", validate=False)[1]
    mixed = dataclasses.replace(meta, properties=human.properties)
    with pytest.raises(
        ValueError, match=r"properties\.hip_flexor_medial\.optimal_fiber_length: ideal muscles have no"
    ):
        ModelVectors(mixed)


def test_ideal_metadata_beside_a_millard_model_is_one_error(ideal_human_osim, built_models, tmp_path):
    osim_copy = tmp_path / "HumanIdealMuscles.osim"
    osim_copy.write_bytes(built_models["Human"].read_bytes())
    meta_path(osim_copy).write_bytes(meta_path(ideal_human_osim).read_bytes())
    with pytest.raises(ValueError, match=r"no ideal muscle \(PathActuator\) hip_flexor_medial_r"):
        check_model(osim_copy)


def test_the_ideal_creature_is_the_human_but_for_its_muscles():
    """A creature file cannot include another: the ablation repeats human.yaml's body."""
    human = yaml.safe_load((REPO / "models/creatures/human.yaml").read_text())
    ideal = yaml.safe_load((REPO / "models/creatures/human_ideal_muscles.yaml").read_text())
    assert ideal["physics"] == {"muscles": "ideal"}
    assert {k: ideal[k] for k in ("root", "parts")} == {k: human[k] for k in ("root", "parts")}
    assert set(ideal) - {"physics"} == set(human)


def test_muscles_millard_is_the_default_byte_for_byte(models_copy, tmp_path):
    path = models_copy / "creatures" / "human_legs.yaml"
    build_creature("HumanLegs", None, tmp_path / "default" / "HumanLegs.osim")
    data = yaml.safe_load(path.read_text())
    data["physics"] = {"muscles": "millard"}
    path.write_text(yaml.safe_dump(data))
    build_creature("HumanLegs", None, tmp_path / "explicit" / "HumanLegs.osim")
    for name in ("HumanLegs.osim", "HumanLegs.meta.json"):
        assert (tmp_path / "explicit" / name).read_bytes() == (tmp_path / "default" / name).read_bytes()


def test_presets_are_millard_models(built_models):
    for name, path in built_models.items():
        meta = load_meta(path)
        assert meta.muscle_model == "millard" and "muscles" not in meta.to_dict()["physics"], name
        assert not etree.parse(str(path)).xpath("//PathActuator"), name
    assert np.all([m.delay > 0 for m in load_meta(built_models["Human"]).muscles])
