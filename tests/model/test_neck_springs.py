"""The neck-tail template's neck_stiffening: 0 keeps the paper's 5 N m/rad neck springs; above 0
each joint's flexion and bending springs are that many times its muscles' buckling stiffness,
and the shared optimized spring gain scales them together (PassiveEntry.profile)."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from musclewalk.model.build import build_creature
from musclewalk.model.meta import load_meta, meta_bytes, meta_path, scale_passive_bounds
from musclewalk.model.metadata import PassiveEntry
from musclewalk.model.vectors import ModelVectors, parse_osim

REPO = Path(__file__).resolve().parents[2]


def _springs(path):
    return {
        s.findtext("coordinate"): float(s.findtext("stiffness"))
        for s in parse_osim(path).getroot().iter("SpringGeneralizedForce")
    }


@pytest.fixture(scope="module")
def stiffened(tmp_path_factory):
    path = tmp_path_factory.mktemp("neck") / "LongLegs.osim"
    build_creature("LongLegs", {"upper_body.neck_stiffening": "1"}, path)
    return path


@pytest.mark.parametrize("name, joints", [("LongLegs", 6), ("Ostrich", 6), ("LongNeck", 9)])
def test_default_keeps_the_papers_springs(built_models, name, joints):
    springs = _springs(built_models[name])
    neck = {c: k for c, k in springs.items() if c.startswith(("neck_flexion_", "neck_bending_"))}
    assert len(neck) == 2 * joints and set(neck.values()) == {5.0}
    entries = json.loads(meta_path(built_models[name]).read_text())["passive"]
    assert {e["name"] for e in entries} >= {"neck_flexion.stiffness", "neck_bending.damping"}
    assert not any("profile" in e for e in entries)


def test_stiffened_springs_hold_the_muscles_buckling_at_full_activation(stiffened):
    """The template's buckling (sum over a joint's muscles of F_max a / 2) against OpenSim's
    slope of the muscles' generalized force at activation 1 (analysis/chain_stiffness.py): the
    springs match it within 1.5 %, and every neck coordinate stays (just) stable."""
    springs = _springs(stiffened)
    out = stiffened.with_name("stiffness.md")
    r = subprocess.run(
        [sys.executable, str(REPO / "analysis" / "chain_stiffness.py"), str(stiffened), "--activation", "1"]
        + ["--coordinates", "neck_", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [line.strip("|").split("|") for line in out.read_text().splitlines() if line.startswith("| neck_")]
    assert len(rows) == 12
    for name, muscles, spring, net in rows:
        name, muscles, spring = name.strip(), float(muscles), float(spring)
        assert spring == pytest.approx(springs[name], abs=0.06)
        assert muscles == pytest.approx(spring, rel=0.015) and float(net) >= -0.05, name
    assert springs["neck_bending_1"] > 2 * springs["neck_bending_6"]  # the base carries the chain
    assert all(k == 5.0 for c, k in springs.items() if c.startswith("tail_"))


def test_one_gain_scales_the_joints_springs_together(stiffened):
    meta = load_meta(stiffened)
    entry = next(e for e in meta.passive if e.name == "neck_bending.stiffness")
    before = _springs(stiffened)
    assert entry.profile[0] == 1.0 and len(entry.profile) == len(entry.targets) == 6
    assert entry.initial == before["neck_bending_1"]
    vectors = ModelVectors(meta)
    tree = parse_osim(stiffened)
    u = (2 * entry.initial - entry.lo) / (entry.hi - entry.lo)  # twice the template's gain
    vectors.write(tree, {"passive": {"neck_bending.stiffness": u}})
    after = {
        s.findtext("coordinate"): float(s.findtext("stiffness"))
        for s in tree.getroot().iter("SpringGeneralizedForce")
    }
    for target in entry.targets:
        coordinate = target.removeprefix("spring_")
        assert after[coordinate] == pytest.approx(2 * before[coordinate], rel=1e-9)
    assert after["neck_flexion_3"] == before["neck_flexion_3"]
    assert vectors.read_values(tree, "passive")["neck_bending.stiffness"] == pytest.approx(u)
    scaled = next(
        e for e in scale_passive_bounds(meta, {"neck_bending": 2.0}).passive if e.name == entry.name
    )
    assert scaled.profile == entry.profile and scaled.initial == 2 * entry.initial


def test_profile_round_trips_and_is_checked(stiffened, tmp_path):
    path = meta_path(stiffened)
    meta = load_meta(stiffened)
    assert meta.to_dict() == json.loads(path.read_text()) and meta_bytes(meta) == path.read_bytes()
    data = json.loads(path.read_text())
    entry = next(e for e in data["passive"] if e["name"] == "neck_flexion.stiffness")
    entry["profile"] = entry["profile"][:2]
    bad = tmp_path / "m.meta.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(
        ValueError, match=r"^" + re.escape(str(bad)) + r": .*profile: expected one factor per target"
    ):
        load_meta(bad)
    entry["profile"] = [2.0] * len(entry["targets"])
    bad.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"profile: expected positive factors, the first 1"):
        load_meta(bad)
    plain = PassiveEntry.from_dict(
        {"name": "a.stiffness", "kind": "stiffness", "targets": ["s"], "initial": 1.0, "lo": 0.0, "hi": 4.0}
    )
    assert plain.factor(0) is None and "profile" not in plain.to_dict()
