"""The typed model metadata (musclewalk.model.metadata): every committed .meta.json reads into a
ModelMeta and is written back byte for byte; another version, a missing or an unknown key is one
error naming the file and the key."""

import dataclasses
import json
from pathlib import Path

import pytest

from musclewalk.model.meta import load_meta, meta_bytes, scale_passive_bounds
from musclewalk.model.metadata import ModelMeta

REPO = Path(__file__).resolve().parents[2]
COMMITTED = sorted((REPO / "models" / "optimized").glob("**/*.meta.json"))


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(REPO)))
def test_committed_metadata_round_trips_byte_for_byte(path):
    meta = load_meta(path)
    data = json.loads(path.read_text())
    assert meta.to_dict() == data and list(meta.to_dict()) == list(data)
    assert meta_bytes(meta) == path.read_bytes()


def _data():
    return json.loads((REPO / "models/optimized/HumanLegs-walk-1.3/optimized.meta.json").read_text())


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(musclewalk_meta=2), "musclewalk_meta: unsupported version 2"),
        (lambda d: d.pop("muscles"), "muscles: missing"),
        (lambda d: d.update(colour="red"), "colour: unknown key"),
        (lambda d: d["muscles"][2].pop("delay"), "muscles[2].delay: missing"),
        (lambda d: d["features"]["legs"]["l"].pop("toe"), "features.legs.l.toe: missing"),
        (lambda d: d.update(bodies={}), "bodies: expected a list"),
        (lambda d: d["physics"].update(muscles="hill"), "physics.muscles: expected one of millard, ideal"),
    ],
)
def test_bad_metadata_is_one_error_naming_file_and_key(tmp_path, change, message):
    data = _data()
    change(data)
    path = tmp_path / "m.meta.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError) as exc:
        load_meta(path)
    assert str(exc.value).startswith(f"{path}: ") and message in str(exc.value)


def test_optional_keys_keep_their_place():
    """optimized_from and passive_scale stay where the file (or the order of writing) put them."""
    data = _data()
    base = {k: v for k, v in data.items() if k != "optimized_from"}
    meta = ModelMeta.from_dict(base, "base")
    scaled = scale_passive_bounds(meta, {"hip_axial": 2.0})
    optimized = dataclasses.replace(scaled, optimized_from="a.osim")
    assert list(optimized.to_dict())[-2:] == ["passive_scale", "optimized_from"]
    rescaled = scale_passive_bounds(ModelMeta.from_dict(data, "optimized"), {"hip_axial": 2.0})
    assert list(rescaled.to_dict())[-2:] == ["optimized_from", "passive_scale"]
    assert meta.passive_scale is None and meta.optimized_from is None


def test_head_gain_mass_of_the_neck_tail_creatures(built_models):
    """The neck-tail creatures' head gains are in units of their neck and head's mass; the
    humanoids keep the whole body's (their metadata has no such key, as before it existed)."""
    from musclewalk.constants import CONTROL_INTERVAL
    from musclewalk.model.meta import load_meta
    from musclewalk.sim.bridge import control_model_from_meta

    for name in ("Ostrich", "LongNeck", "LongLegs"):
        meta = load_meta(built_models[name])
        neck = sum(b.mass for b in meta.bodies if b.name.startswith("neck_") or b.name == "head")
        model = control_model_from_meta(meta, CONTROL_INTERVAL)
        assert model.head_gain_mass == pytest.approx(neck) and 0.03 < neck / meta.total_mass < 0.1
        assert type(model).from_dict(model.to_dict()).head_gain_mass == model.head_gain_mass
    for name in ("Human", "HumanLegs"):
        meta = load_meta(built_models[name])
        assert meta.features.head_gain_mass is None
        assert "head_gain_mass" not in meta.to_dict()["features"]
        assert control_model_from_meta(meta, CONTROL_INTERVAL).head_gain_mass is None
    # what the head-chain joints carry: the Human's spine carries its thorax, head and arms
    from musclewalk.sim.bridge import head_chain_mass

    human = load_meta(built_models["Human"])
    carried = {"lumbar", "thorax", "head", "upper_arm_r", "upper_arm_l", "forearm_r", "forearm_l"}
    assert head_chain_mass(human) == pytest.approx(sum(b.mass for b in human.bodies if b.name in carried))


def test_head_gain_mass_in_a_metadata_file_is_checked(built_models):
    import json

    from musclewalk.model.meta import meta_path
    from musclewalk.model.metadata import ModelMeta

    data = json.loads(meta_path(built_models["Ostrich"]).read_text())
    assert data["features"]["head_gain_mass"] == "head_chain"
    data["features"]["head_gain_mass"] = "neck"
    with pytest.raises(ValueError, match="head_gain_mass: expected one of body, head_chain, got 'neck'"):
        ModelMeta.from_dict(data, "Ostrich.meta.json")
