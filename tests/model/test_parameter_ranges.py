"""Issue 10 item 6: template parameters have a plausible range, written as data in the template
(``ranges``). A creature value or a --set override outside it is one error line naming the file,
the key and the range, before anything is built; a template whose ranges are missing or broken
is refused naming the template file and key."""

import pytest
import yaml

from musclewalk.cli import main
from musclewalk.model.template import CreatureError, load_creature, models_dir

PRESETS = ["HumanLegs", "Human", "Ostrich", "LongNeck", "LongLegs"]


def _build_error(capsys, tmp_path, *args):
    out = tmp_path / "out" / "model.osim"
    code = main(["build", *args, "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert not out.exists() and not out.with_name("model.meta.json").exists()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_absurd_set_override_is_refused_before_building(capsys, tmp_path):
    # was: a 3593 kg creature that then grinds in every simulation
    err = _build_error(capsys, tmp_path, "HumanLegs", "--set", "legs.upper=100")
    assert "human_legs.yaml" in err and "legs.upper" in err and "--set legs.upper=100" in err
    assert "outside the plausible range [0.12, 1.2]" in err
    assert "humanoid_legs.yaml: ranges.upper" in err


@pytest.mark.parametrize(
    "override, rng",
    [
        ("upper_body.N=21", "[0, 20]"),
        ("upper_body.neck_tilt=-120", "[-90, 90]"),
        ("legs.upper=0.01", "[0.06, 0.6]"),
        ("legs.hip_x=2", "[-0.3, 0.3]"),
    ],
)
def test_out_of_range_overrides_name_key_and_range(capsys, tmp_path, override, rng):
    err = _build_error(capsys, tmp_path, "Ostrich", "--set", override)
    key = override.split("=")[0]
    assert "ostrich.yaml" in err and f"parts.{key}" in err and rng in err


def test_out_of_range_creature_value_names_the_creature_file(capsys, tmp_path, models_copy):
    path = models_copy / "creatures" / "long_legs.yaml"
    path.write_text(path.read_text().replace("upper: 0.6, lower: 0.6", "upper: 6, lower: 0.6"))
    err = _build_error(capsys, tmp_path, "LongLegs")
    assert "long_legs.yaml: parts.legs.upper: 6 is outside the plausible range" in err
    assert "--set" not in err


def test_range_bounds_are_inclusive():
    spec = load_creature("HumanLegs", {"legs.upper": "1.2", "legs.lower": "0.12"})
    assert spec.parameters["legs.upper"] == 1.2 and spec.parameters["legs.lower"] == 0.12
    with pytest.raises(CreatureError, match=r"legs\.upper.*\[0\.12, 1\.2\]"):
        load_creature("HumanLegs", {"legs.upper": "1.2001"})


def test_every_template_parameter_has_a_range_containing_its_default():
    for path in sorted((models_dir() / "templates").glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        params, ranges = data["parameters"], data["ranges"]
        assert set(ranges) == set(params), path
        for name, default in params.items():
            lo, hi = ranges[name]
            assert lo <= default <= hi, (path, name)


@pytest.mark.parametrize("name", PRESETS)
def test_presets_are_within_their_ranges(name):
    load_creature(name)  # raises if a preset value were outside a range


def _edit(path, old, new):
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("  upper: [0.12, 1.2]\n", "", "ranges.upper: missing"),
        ("  upper: [0.12, 1.2]\n", "  upper: [1.2, 0.12]\n", "ranges.upper: inverted or empty range"),
        ("  upper: [0.12, 1.2]\n", "  upper: 1.2\n", "ranges.upper: expected [min, max]"),
        (
            "  upper: [0.12, 1.2]\n",
            "  upper: [0.5, 1.2]\n",
            "parameters.upper: default 0.4 lies outside its plausible range [0.5, 1.2]",
        ),
        ("  upper: [0.12, 1.2]\n", "  upper: [0, 1.2]\n", "ranges.upper: a dimension needs a positive"),
        (
            "  upper: [0.12, 1.2]\n",
            "  upper: [0.12, 1.2]\n  wings: [1, 2]\n",
            "ranges.wings: not a parameter of the template",
        ),
    ],
)
def test_broken_ranges_name_the_template_file(capsys, tmp_path, models_copy, old, new, message):
    _edit(models_copy / "templates" / "humanoid_legs.yaml", old, new)
    err = _build_error(capsys, tmp_path, "HumanLegs")
    assert f"humanoid_legs.yaml: {message}" in err


def test_template_without_ranges_is_refused(capsys, tmp_path, models_copy):
    path = models_copy / "templates" / "single_trunk.yaml"
    data = yaml.safe_load(path.read_text())
    del data["ranges"]
    path.write_text(yaml.safe_dump(data))
    err = _build_error(capsys, tmp_path, "HumanLegs")
    assert "single_trunk.yaml: ranges: expected a mapping" in err


def test_neck_tail_twist_parameter_leaves_out_only_the_long_axis_rotations():
    """twist 1 (the template default, the paper's): flexion, bending and rotation on every neck
    and tail joint; twist 0 (the presets): the same joints without their rotation, and nothing
    else changed (springs and limits follow their coordinates)."""

    def chain(spec):
        coords = [c.name for j in spec.joints for c in j.coordinates]
        return {n for n in coords if n.startswith(("neck_", "tail_"))}

    with_twist = load_creature("Ostrich", {"upper_body.twist": "1"})
    without = load_creature("Ostrich")
    rotations = {n for n in chain(with_twist) if "_rotation_" in n}
    assert len(rotations) == 6 + 5 and not any("_rotation_" in n for n in chain(without))
    assert chain(with_twist) - rotations == chain(without)
    assert {s.coordinate for s in with_twist.springs} - rotations == {s.coordinate for s in without.springs}
    assert {lim.coordinate for lim in with_twist.limits} - rotations == {
        lim.coordinate for lim in without.limits
    }
    assert len(with_twist.muscles) == len(without.muscles)
