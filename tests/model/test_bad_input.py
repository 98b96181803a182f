"""Bad creature input: one clear error naming file and key, exit code 2, no output file."""

import pytest

from musclewalk.cli import main


def _run(capsys, tmp_path, *args):
    out = tmp_path / "out" / "model.osim"
    code = main(["build", *args, "-o", str(out)])
    err = capsys.readouterr().err
    assert code != 0
    assert not out.exists() and not out.with_name("model.meta.json").exists()
    assert len(err.strip().splitlines()) == 1, err
    return err


def _edit(path, old, new):
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_unknown_creature(capsys, tmp_path):
    err = _run(capsys, tmp_path, "NoSuchCreature")
    assert "unknown creature 'NoSuchCreature'" in err


def test_unknown_set_key(capsys, tmp_path):
    err = _run(capsys, tmp_path, "Human", "--set", "legs.uper=0.4")
    assert "human.yaml" in err and "legs.uper" in err


def test_unknown_part_in_set(capsys, tmp_path):
    err = _run(capsys, tmp_path, "Human", "--set", "wings.span=2")
    assert "wings.span" in err


def test_non_positive_dimension(capsys, tmp_path):
    err = _run(capsys, tmp_path, "Human", "--set", "legs.lower=0")
    assert "legs.lower" in err and "positive" in err


def test_negative_segment_count(capsys, tmp_path):
    err = _run(capsys, tmp_path, "Ostrich", "--set", "upper_body.N=-1")
    assert "upper_body.N" in err and "non-negative integer" in err


def test_malformed_yaml(capsys, tmp_path, models_copy):
    path = models_copy / "creatures" / "human.yaml"
    path.write_text(path.read_text() + "\n  bad: [unclosed\n")
    err = _run(capsys, tmp_path, "Human")
    assert "human.yaml" in err and "malformed YAML" in err


def test_inverted_range(capsys, tmp_path, models_copy):
    _edit(
        models_copy / "templates" / "humanoid_legs.yaml",
        "x: [-0.045, -0.015], z: [-0.02, 0.02]",
        "x: [-0.015, -0.045], z: [-0.02, 0.02]",
    )
    err = _run(capsys, tmp_path, "HumanLegs")
    assert "humanoid_legs.yaml" in err and "hamstrings" in err and ".x" in err
    assert "inverted or empty range" in err


def test_empty_range(capsys, tmp_path, models_copy):
    _edit(
        models_copy / "templates" / "humanoid_legs.yaml",
        "x: [-0.045, -0.015], z: [-0.02, 0.02]",
        "x: [-0.03, -0.03], z: [-0.02, 0.02]",
    )
    err = _run(capsys, tmp_path, "HumanLegs")
    assert "inverted or empty range" in err


def test_default_outside_region(capsys, tmp_path, models_copy):
    _edit(
        models_copy / "templates" / "humanoid_legs.yaml",
        "x: [-0.045, -0.015], z: [-0.02, 0.02]",
        "x: [-0.01, 0.02], z: [-0.02, 0.02]",
    )
    err = _run(capsys, tmp_path, "HumanLegs")
    assert "hamstrings" in err and "outside its region" in err


def test_muscle_on_missing_body(capsys, tmp_path, models_copy):
    _edit(
        models_copy / "templates" / "humanoid_legs.yaml",
        "- {body: lower_leg, at: [-0.03, -0.06, 0]",
        "- {body: shin, at: [-0.03, -0.06, 0]",
    )
    err = _run(capsys, tmp_path, "HumanLegs")
    assert "hamstrings" in err and "missing body 'shin'" in err and ".body" in err


def test_unknown_creature_key(capsys, tmp_path, models_copy):
    path = models_copy / "creatures" / "human.yaml"
    path.write_text(path.read_text() + "colour: red\n")
    err = _run(capsys, tmp_path, "Human")
    assert "human.yaml: colour: unknown key" in err


def test_unknown_head_gain_mass(capsys, tmp_path, models_copy):
    _edit(models_copy / "templates" / "neck_tail.yaml", "head_gain_mass: head_chain", "head_gain_mass: neck")
    err = _run(capsys, tmp_path, "Ostrich")
    assert "neck_tail.yaml" in err and "features.head_gain_mass" in err and "'neck'" in err


def test_head_gain_mass_without_a_head(capsys, tmp_path, models_copy):
    _edit(models_copy / "templates" / "neck_tail.yaml", "  head: head\n", "")
    err = _run(capsys, tmp_path, "Ostrich")
    assert "neck_tail.yaml" in err and "features.head_gain_mass" in err and "features.head" in err


@pytest.mark.parametrize(
    "rotation, expected",
    [
        (
            "{about: [hip_x, hip_y, hip_z], y: upper_tilt}",
            ["muscles[0](hip_flexor_medial).points[0].rotate.y: unknown key", "(allowed: about, z)"],
        ),
        (
            "{about: [hip_x, hip_y, hip_z]}",
            ["muscles[0](hip_flexor_medial).points[0].rotate: ", "expected {about: [x, y, z], z: degrees}"],
        ),
    ],
)
def test_bad_point_rotation(capsys, tmp_path, models_copy, rotation, expected):
    _edit(
        models_copy / "templates" / "inverted_legs.yaml",
        "rotate: {about: [hip_x, hip_y, hip_z], z: upper_tilt}",
        f"rotate: {rotation}",
    )
    err = _run(capsys, tmp_path, "Ostrich")
    assert "inverted_legs.yaml: " in err
    for part in expected:
        assert part in err


def test_misspelt_template_keys(capsys, tmp_path, models_copy):
    """A template key the builder does not read stops the build instead of being ignored."""
    legs = models_copy / "templates" / "humanoid_legs.yaml"
    original = legs.read_text()
    cases = [
        ("center:", "centre:", "shapes[0].centre: unknown key"),
        ("    mirror: true\n", "    mirorr: true\n", "bodies[0](upper_leg).mirorr: unknown key"),
        ("max_isometric_force:", "max_isometric_froce:", ".properties.max_isometric_froce: unknown key"),
        ("expect:", "expected:", "humanoid_legs.yaml: expected: unknown key"),
    ]
    for old, new, message in cases:
        assert old in original, old
        legs.write_text(original.replace(old, new, 1))
        err = _run(capsys, tmp_path, "HumanLegs")
        assert "humanoid_legs.yaml: " in err and message in err, (new, err)
    legs.write_text(original)
    neck = models_copy / "templates" / "neck_tail.yaml"
    _edit(neck, "    tilt_step: neck_tilt_step", "    tilt_stepp: neck_tilt_step")
    err = _run(capsys, tmp_path, "Ostrich")
    assert "neck_tail.yaml: chains[0](neck).tilt_stepp: unknown key" in err


def test_template_name_must_match_its_file(capsys, tmp_path, models_copy):
    _edit(models_copy / "templates" / "humanoid_legs.yaml", "template: humanoid_legs", "template: human_legs")
    err = _run(capsys, tmp_path, "HumanLegs")
    assert "humanoid_legs.yaml: template: names 'human_legs'" in err


def test_tilts_that_put_the_base_pose_outside_a_joint_range(capsys, tmp_path):
    # the Ostrich's intertarsal range ends at straight, lower_tilt - foot_tilt: a shank tilted
    # 30 deg forward over a 15 deg foot bends the joint the human way in the base pose
    err = _run(capsys, tmp_path, "Ostrich", "--set", "legs.lower_tilt=30")
    assert "inverted_legs.yaml" in err and "bodies[2](foot).joint.coordinates[0].range" in err
    assert "[15, 50] leaves out 0, the base pose" in err
    # 5 deg of flexion: inside the joint's range, but within the 10 deg the limit force starts before
    err = _run(capsys, tmp_path, "Ostrich", "--set", "legs.lower_tilt=10")
    assert "inverted_legs.yaml" in err and "limits[1].range" in err and "[5, 45] leaves out 0" in err


def test_include_that_leaves_a_joint_without_coordinates(capsys, tmp_path, models_copy):
    _edit(
        models_copy / "templates" / "humanoid_legs.yaml",
        "- {name: knee_angle, axis: [0, 0, -1], range: [-10, 150]}",
        "- {name: knee_angle, axis: [0, 0, -1], range: [-10, 150], include: 0}",
    )
    err = _run(capsys, tmp_path, "HumanLegs")
    assert "humanoid_legs.yaml" in err and "joint.coordinates" in err and "include" in err


def test_include_takes_a_yaml_boolean(capsys, tmp_path, models_copy):
    """include: false leaves a coordinate out as include: 0 does, include: true keeps it."""
    from musclewalk.model.build import build_creature

    legs = models_copy / "templates" / "humanoid_legs.yaml"
    declared = "- {name: knee_angle, axis: [0, 0, -1], range: [-10, 150]}"
    build_creature("HumanLegs", None, tmp_path / "before.osim")
    _edit(legs, declared, "- {name: knee_angle, axis: [0, 0, -1], range: [-10, 150], include: true}")
    build_creature("HumanLegs", None, tmp_path / "after.osim")
    assert (tmp_path / "after.osim").read_bytes() == (tmp_path / "before.osim").read_bytes()
    _edit(legs, "include: true}", "include: false}")
    err = _run(capsys, tmp_path, "HumanLegs")
    assert "humanoid_legs.yaml" in err and "every coordinate is left out by its include" in err


def test_include_with_an_unknown_variable(capsys, tmp_path, models_copy):
    _edit(
        models_copy / "templates" / "neck_tail.yaml",
        "range: [-45, 45], include: twist}",
        "range: [-45, 45], include: twirl}",
    )
    err = _run(capsys, tmp_path, "Ostrich")
    assert "neck_tail.yaml" in err and ".include" in err and "twirl" in err
