"""models/physics.yaml: contact model, rigid-tendon rule and integrator are data, checked on
every build; models built before they existed keep their own (smooth spheres, 1e-3)."""

from pathlib import Path

import numpy as np
import pytest
import yaml
from lxml import etree

from musclewalk.cli import main
from musclewalk.model.build import build_creature
from musclewalk.model.meta import load_meta
from musclewalk.model.metadata import IntegratorPhysics
from musclewalk.model.template import CreatureError, load_creature, tendon_is_rigid
from musclewalk.sim.engine import integrator_settings

REPO = Path(__file__).resolve().parents[2]


def test_presets_use_exponential_contact_and_the_rigid_tendon_rule(built_models):
    tree = etree.parse(str(built_models["Human"]))
    meta = load_meta(built_models["Human"])
    assert len(tree.xpath("//ExponentialContactForce")) == len(meta.contacts) == 8
    assert not tree.xpath("//SmoothSphereHalfSpaceForce")
    rigid = sorted(
        m.getparent().get("name") for m in tree.xpath("//ignore_tendon_compliance") if m.text == "true"
    )
    ratio = meta.physics.rigid_tendon_below_slack_ratio
    expected = sorted(
        m.name for m in meta.muscles if tendon_is_rigid(m.tendon_slack_length, m.optimal_fiber_length, ratio)
    )
    assert rigid == expected and "shoulder_extensor_r" in rigid
    # the elbow extensors' slack is 0.5006 fibre lengths: above the rule, compliant
    assert "elbow_extensor_r" not in rigid
    # the contact point of each force is the lowest point of its sphere
    for c in meta.contacts:
        loc = tree.xpath(f"//ExponentialContactForce[@name='ecf_{c.name}']//location")[0]
        np.testing.assert_allclose(
            [float(v) for v in loc.text.split()], np.array(c.location) - [0, c.radius, 0]
        )
    assert integrator_settings(meta) == ("semi_explicit_euler2", 0.01, None)


def test_every_neck_and_tail_muscle_of_a_chain_gets_the_same_tendon(built_models):
    # their slack is derived as half the fibre (0.5, the rule's ratio): one rule for all of them,
    # not a split by the last bit of each path's length
    for creature in ("LongNeck", "Ostrich"):
        meta = load_meta(built_models[creature])
        chain = [m for m in meta.muscles if m.name.startswith(("neck_", "tail_"))]
        assert chain
        for m in chain:
            ratio = m.tendon_slack_length / m.optimal_fiber_length
            assert m.rigid_tendon is (ratio <= 0.5 + 1e-6), (creature, m.name, ratio)
        assert any(m.rigid_tendon for m in chain)


def test_models_without_physics_keep_their_settings():
    path = REPO / "models/optimized/HumanLegs-walk-1.3/earlier/smooth-contact/optimized.meta.json"
    meta = load_meta(path)
    assert meta.physics is None and "physics" not in meta.to_dict()
    assert integrator_settings(meta) == ("semi_explicit_euler2", 1e-3, None)


def test_a_creature_overrides_physics(models_copy, tmp_path):
    path = models_copy / "creatures" / "human_legs.yaml"
    data = yaml.safe_load(path.read_text())
    data["physics"] = {"contact": {"model": "smooth_sphere"}, "integrator": {"accuracy": 0.001}}
    path.write_text(yaml.safe_dump(data))
    out = tmp_path / "legs.osim"
    build_creature("HumanLegs", None, out)
    tree = etree.parse(str(out))
    assert len(tree.xpath("//SmoothSphereHalfSpaceForce")) == 8
    assert not tree.xpath("//ExponentialContactForce")
    meta = load_meta(out)
    assert meta.physics.integrator == IntegratorPhysics(method="semi_explicit_euler2", accuracy=0.001)
    assert meta.physics.contact.friction_elasticity == 100000  # the rest: defaults


def test_a_creature_sets_a_fixed_integrator_step(models_copy, tmp_path):
    """physics.integrator.fixed_step is kept in the metadata and used by the engine (absent from
    every model built without it, so that their files stay as they were)."""
    from musclewalk.sim.runner import Simulator

    path = models_copy / "creatures" / "human_legs.yaml"
    data = yaml.safe_load(path.read_text())
    data["physics"] = {"integrator": {"fixed_step": 0.0005}}
    path.write_text(yaml.safe_dump(data))
    out = tmp_path / "legs.osim"
    build_creature("HumanLegs", None, out)
    meta = load_meta(out)
    assert meta.physics.integrator == IntegratorPhysics(
        method="semi_explicit_euler2", accuracy=0.01, fixed_step=0.0005
    )
    assert meta.to_dict()["physics"]["integrator"]["fixed_step"] == 0.0005
    assert integrator_settings(meta).fixed_step == 0.0005
    assert Simulator(out).engine.fixed_step == 0.0005
    assert Simulator(out, fixed_step=0).engine.fixed_step is None  # error-controlled for one run


def test_a_creature_softens_its_contact(models_copy, tmp_path, built_models):
    """physics.contact.exponential_shape sets every contact point's (d0, d1, d2), kept in the
    metadata; absent from every model built without it, whose files keep OpenSim's defaults."""
    path = models_copy / "creatures" / "human_legs.yaml"
    data = yaml.safe_load(path.read_text())
    data["physics"] = {"contact": {"exponential_shape": [0.0161352, 0.5336, 400]}}
    path.write_text(yaml.safe_dump(data))
    out = tmp_path / "legs.osim"
    build_creature("HumanLegs", None, out)
    shapes = etree.parse(str(out)).xpath("//ExponentialContactForce/exponential_shape_parameters")
    assert len(shapes) == 8 and {s.text for s in shapes} == {"0.0161352 0.5336 400.0"}
    assert load_meta(out).physics.contact.exponential_shape == (0.0161352, 0.5336, 400.0)
    default = etree.parse(str(built_models["HumanLegs"]))
    assert {s.text for s in default.xpath("//exponential_shape_parameters")} == {"0.0065905 0.5336 1150"}
    assert "exponential_shape" not in load_meta(built_models["HumanLegs"]).to_dict()["physics"]["contact"]


@pytest.mark.parametrize(
    "physics, key, message",
    [
        (
            {"contact": {"exponential_shape": [0.0066, 0.53]}},
            "physics.contact.exponential_shape",
            "expected [d0, d1, d2] with 0 < d0 <= 0.05 m",
        ),
        (
            {"contact": {"exponential_shape": [0.0066, 0.53, 20]}},
            "physics.contact.exponential_shape",
            "50 <= d2 <= 10000 1/m",
        ),
        (
            {"contact": {"model": "smooth_sphere", "exponential_shape": [0.0066, 0.53, 1150]}},
            "physics.contact.exponential_shape",
            "only with contact model exponential",
        ),
        (
            {"contact": {"model": "rubber"}},
            "physics.contact.model",
            "expected one of exponential, smooth_sphere",
        ),
        (
            {"contact": {"friction_elasticity": -1}},
            "physics.contact.friction_elasticity",
            "expected a number in [1000, 1e+07]",
        ),
        ({"integrator": {"accuracy": "fast"}}, "physics.integrator.accuracy", "expected a number"),
        ({"gravity": 3}, "physics.gravity", "unknown key"),
        (
            {"integrator": {"fixed_step": 0.01}},
            "physics.integrator.fixed_step",
            "expected a number in [1e-05, 0.005]",
        ),
        ({"contact": {"stiffnes": 3}}, "physics.contact.stiffnes", "unknown key"),
        ({"muscles": "hill"}, "physics.muscles", "expected one of millard, ideal, got 'hill'"),
    ],
)
def test_bad_physics_is_one_line_naming_file_and_key(models_copy, tmp_path, capsys, physics, key, message):
    path = models_copy / "creatures" / "human_legs.yaml"
    data = yaml.safe_load(path.read_text())
    data["physics"] = physics
    path.write_text(yaml.safe_dump(data))
    out = tmp_path / "legs.osim"
    assert main(["build", "HumanLegs", "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and key in err[0] and message in err[0], err
    assert not out.exists()
    with pytest.raises(CreatureError):
        load_creature("HumanLegs")


def test_a_creature_stands_on_the_exponential_contact(built_models):
    """At rest on the ground the contact carries the body weight, with no launch at the start
    (the contact points start at the clearance where the springs hold the body)."""
    from musclewalk.sim.runner import Simulator

    sim = Simulator(built_models["HumanLegs"])
    eng = sim.engine
    state = eng.initial_state({}, {})
    eng.start(state)
    weight = sim.meta.total_mass * 9.80665
    first = eng.read().contact_force[:, 1].sum()
    assert 0.2 * weight < first < 3.0 * weight
    for k in range(1, 41):
        assert eng.advance(k * 0.005)
    raw = eng.read()
    assert raw.contact_force[:, 1].sum() == pytest.approx(weight, rel=0.35)


@pytest.mark.parametrize("step", [0, 1e-7, 0.01, True, "0.0005"])
def test_a_hand_edited_fixed_step_in_a_meta_file_is_refused(step):
    """The meta file's fixed step is checked with the template's range (FIXED_STEP_RANGE)."""
    raw = {"method": "semi_explicit_euler2", "accuracy": 0.01, "fixed_step": step}
    message = r"physics.integrator.fixed_step: expected a step in \[1e-05, 0.005\] s"
    with pytest.raises(ValueError, match=message):
        IntegratorPhysics.from_dict(raw)
    assert IntegratorPhysics.from_dict({**raw, "fixed_step": 1e-5}).fixed_step == 1e-5
