"""physics.muscle_properties: working_range: the legs' tendon slack lengths follow from a bounded
standing fibre length, through any routing and l_opt; the default (independent) builds the same
files as before."""

import json
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

from musclewalk.model.build import build_creature
from musclewalk.model.meta import STANDING_FIBER_LENGTH_BOUNDS, load_meta, meta_path
from musclewalk.model.osim import write_atomic, xml_bytes
from musclewalk.model.template import CreatureError, resolve_creature
from musclewalk.model.vectors import ModelVectors, parse_osim
from musclewalk.opensim_env import import_opensim

HUMAN_LEGS = """name: HumanLegsWR
root: pelvis
parts:
  legs: {template: humanoid_legs, upper: 0.4, lower: 0.4, foot: 0.21}
  upper_body: {template: single_trunk}
physics:
  muscle_properties: %s
  standing_fiber_length: [0.5, 1.6]
"""
REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "models/optimized/HumanLegs-walk-1.3"


@pytest.fixture(scope="module")
def working_range_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wr")
    creature = folder / "legs.yaml"
    creature.write_text(HUMAN_LEGS % "working_range")
    out = folder / "HumanLegsWR.osim"
    build_creature(str(creature), None, out)
    return out


def test_the_slack_length_gives_way_to_the_standing_fibre_length(working_range_model, built_models):
    meta = load_meta(meta_path(working_range_model))
    names = {e.name: e for e in meta.properties}
    assert "hamstrings.standing_fiber_length" in names and "hamstrings.tendon_slack_length" not in names
    assert "hamstrings.optimal_fiber_length" in names and "hamstrings.max_isometric_force" in names
    entry = names["hamstrings.standing_fiber_length"]
    assert (entry.lo, entry.hi) == (0.5, 1.6)  # the creature's physics.standing_fiber_length
    assert STANDING_FIBER_LENGTH_BOUNDS == (0.5, 1.2)  # models/physics.yaml's default
    assert entry.initial == pytest.approx(0.85)  # the template's base_fiber_length
    assert meta.physics.muscle_properties == "working_range"
    # the paper's space is unchanged: same property names with the default physics
    paper = {e.name for e in load_meta(meta_path(built_models["HumanLegs"])).properties}
    assert paper - set(names) == {n for n in paper if n.endswith(".tendon_slack_length")}
    assert load_meta(meta_path(built_models["HumanLegs"])).physics.muscle_properties is None


def test_any_candidate_puts_each_fibre_at_its_standing_length(working_range_model, tmp_path):
    """Random routing, l_opt and standing lengths: OpenSim's equilibrium fibre length in the
    default pose (inactive muscles, slack-ish tendons) is the written standing length, and the
    vectors read back as written; routing moved alone keeps the standing lengths."""
    osim = import_opensim()
    meta = load_meta(meta_path(working_range_model))
    vectors = ModelVectors(meta)
    rng = np.random.default_rng(3)
    tree = parse_osim(working_range_model)
    values = {
        "routing": rng.uniform(0.1, 0.9, len(vectors.entries["routing"])),
        "properties": rng.uniform(0.1, 0.5, len(vectors.entries["properties"])),  # tendons that fit
    }
    vectors.write(tree, values)
    for kind, vec in values.items():
        np.testing.assert_allclose(vectors.read(tree, kind), vec, atol=1e-9)
    path = tmp_path / "candidate.osim"
    write_atomic(path, xml_bytes(tree))
    model = osim.Model(str(path))
    state = model.initSystem()
    for i in range(model.getMuscles().getSize()):
        model.getMuscles().get(i).setActivation(state, 0.01)
    model.equilibrateMuscles(state)
    model.realizeDynamics(state)
    standing = {
        t: e.lo + u * (e.hi - e.lo)
        for e, u in zip(vectors.entries["properties"], values["properties"])
        if e.kind == "standing_fiber_length"
        for t in e.targets
    }
    assert len(standing) == 20
    for name, expected in standing.items():
        muscle = model.getMuscles().get(name)
        # the tendon stretches a little under the passive force of a long fibre
        assert muscle.getNormalizedFiberLength(state) == pytest.approx(expected, abs=0.03), name
    moved = {"routing": rng.uniform(0.1, 0.9, len(vectors.entries["routing"]))}
    vectors.write(tree, moved)
    read = dict(zip(vectors.names("properties"), vectors.read(tree, "properties")))
    for e, u in zip(vectors.entries["properties"], values["properties"]):
        if e.kind == "standing_fiber_length":
            assert read[e.name] == pytest.approx(u, abs=1e-9)


def test_no_tendon_fits_is_an_error_and_a_bad_mode_names_the_key(working_range_model, tmp_path):
    meta = load_meta(meta_path(working_range_model))
    vectors = ModelVectors(meta)
    tree = parse_osim(working_range_model)
    longest = {e.name: 1.0 for e in vectors.entries["properties"] if e.kind == "optimal_fiber_length"}
    with pytest.raises(ValueError, match="no tendon puts the fibre"):
        vectors.write(tree, {"properties": {**longest, "vasti.standing_fiber_length": 1.0}})
    creature = tmp_path / "bad.yaml"
    creature.write_text(HUMAN_LEGS % "loose")
    with pytest.raises(CreatureError, match=r"bad.yaml: physics.muscle_properties: expected one of"):
        build_creature(str(creature), None, tmp_path / "bad.osim")
    assert not (tmp_path / "bad.osim").exists()
    assert resolve_creature("HumanLegs")  # the presets still resolve


def _slack_lengths(tree) -> dict[str, float]:
    return {
        m.get("name"): float(m.findtext("tendon_slack_length"))
        for m in tree.iter("Millard2012EquilibriumMuscle")
    }


def test_a_walker_of_independent_properties_converts_to_standing_lengths(working_range_model):
    """The committed HumanLegs' slack lengths as standing fibre lengths: written back they give
    the same tendons, but for its rectus femoris, whose tendon is longer than its path (slack:
    a negative standing length), clipped to the lower bound."""
    meta = load_meta(meta_path(working_range_model))
    vectors = ModelVectors(meta)
    model = json.loads((COMMITTED / "best.json").read_text())["parameters"]["model"]
    converted = vectors.standing_from_slack(parse_osim(working_range_model), model)
    assert len(converted) == 10
    rectus_u, rectus_length = converted["rectus_femoris.standing_fiber_length"]
    assert rectus_length < 0 and rectus_u == 0.0
    properties = {n: v for n, v in model["properties"].items() if not n.endswith(".tendon_slack_length")}
    properties.update({name: u for name, (u, _) in converted.items()})
    tree = parse_osim(working_range_model)
    vectors.write(tree, {"routing": model["routing"], "properties": properties})
    ours, committed = _slack_lengths(tree), _slack_lengths(etree.parse(str(COMMITTED / "optimized.osim")))
    for name, slack in committed.items():
        if name.startswith("rectus_femoris"):
            assert ours[name] < slack  # now pulls
        else:
            assert ours[name] == pytest.approx(slack, abs=2e-6), name


def test_optimize_converts_a_warm_start_and_says_so(working_range_model, tmp_path):
    from tests.cli_run import run_cli

    creature = tmp_path / "legs.yaml"
    creature.write_text(HUMAN_LEGS % "working_range")
    out = tmp_path / "run"
    args = ["--speed", "1.3", "--duration", "0.02", "--generations", "1", "--workers", "1", "--quiet"]
    init = ["--init", COMMITTED / "best.json", "--init-from-other-creature", "--sigma", "0.01"]
    result = run_cli("optimize", creature, *args, *init, "--out", out)
    assert result.returncode == 0, result.stderr[-2000:]
    log = (out / "log.txt").read_text()
    assert "tendon slack lengths of independent muscle properties as standing fibre lengths" in log
    assert "properties.hip_flexor_medial.standing_fiber_length 1.3" in log


WORKING_RANGE = {"muscle_properties": "working_range"}
FIXED_STEP = {"integrator": {"fixed_step": 0.0005}}


@pytest.mark.parametrize(
    "preset, variant, physics",
    [
        ("models/creatures/human.yaml", "models/creatures/human_working_range.yaml", WORKING_RANGE),
        (
            "models/creatures/ostrich.yaml",
            "config/experiments/creatures/ostrich_working_range.yaml",
            WORKING_RANGE,
        ),
        (
            "models/creatures/long_neck.yaml",
            "config/experiments/creatures/long_neck_working_range.yaml",
            WORKING_RANGE,
        ),
        ("models/creatures/human.yaml", "config/experiments/creatures/human_fixed_step.yaml", FIXED_STEP),
        ("models/creatures/ostrich.yaml", "config/experiments/creatures/ostrich_fixed_step.yaml", FIXED_STEP),
        (
            "models/creatures/long_legs.yaml",
            "config/experiments/creatures/long_legs_fixed_step.yaml",
            FIXED_STEP,
        ),
        (
            "models/creatures/long_neck.yaml",
            "config/experiments/creatures/long_neck_working_range_fixed_step.yaml",
            {**WORKING_RANGE, **FIXED_STEP},
        ),
    ],
)
def test_a_creature_variant_is_its_preset_but_for_its_physics(preset, variant, physics):
    """A creature file cannot include another: the variants repeat their preset's root and parts,
    and must follow it."""
    import yaml

    theirs = yaml.safe_load((REPO / preset).read_text())
    ours = yaml.safe_load((REPO / variant).read_text())
    assert (ours["root"], ours["parts"]) == (theirs["root"], theirs["parts"])
    assert ours["physics"] == physics


@pytest.mark.parametrize("length", [-0.8, -0.1, 0.5, 1.0, 1.55])
def test_standing_length_and_tendon_slack_are_inverse(length):
    """Below 0 the muscle is slack by that many optimal lengths (a continuation from a walker
    with a slack muscle starts there exactly)."""
    from musclewalk.model.meta import standing_fiber_length, tendon_slack_for

    slack = tendon_slack_for(0.46, 0.09, length, 0.087)
    assert standing_fiber_length(0.46, 0.09, slack, 0.087) == pytest.approx(length, abs=1e-12)
    assert (slack > 0.46) == (length < 0)


def test_one_side_keeps_one_muscle_per_mirrored_pair_and_chain():
    from musclewalk.model.meta import one_side

    names = [
        "vasti_r",
        "vasti_l",
        "spine_1",
        "spine_2",
        "neck_1_r",
        "neck_1_l",
        "neck_2_r",
        "neck_2_l",
        "tail_l",
    ]
    assert one_side(names) == ["vasti_r", "spine_1", "spine_2", "neck_1_r", "neck_2_r", "tail_l"]
    assert one_side(names, first_segment_only=True) == ["vasti_r", "spine_1", "neck_1_r", "tail_l"]
