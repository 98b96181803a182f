"""Routing / property / passive vectors: exact round trips that change nothing else."""

import numpy as np
import pytest

from musclewalk.model.meta import load_meta
from musclewalk.model.osim import write_atomic, xml_bytes
from musclewalk.model.vectors import KINDS, ModelVectors, parse_osim
from musclewalk.opensim_env import import_opensim


def _texts(tree, skip):
    """(path, text) of every element whose tag is not in skip."""
    return [
        (tree.getpath(el), el.text) for el in tree.iter() if isinstance(el.tag, str) and el.tag not in skip
    ]


@pytest.mark.parametrize("name", ["Human", "Ostrich"])
def test_defaults_read_back(built_models, name):
    meta = load_meta(built_models[name])
    vectors = ModelVectors(meta)
    tree = parse_osim(built_models[name])
    for kind in KINDS:
        np.testing.assert_allclose(vectors.read(tree, kind), vectors.defaults(kind), atol=1e-12)
        assert np.all((vectors.defaults(kind) >= 0) & (vectors.defaults(kind) <= 1))


@pytest.mark.parametrize("name", ["HumanLegs", "Human", "Ostrich"])
def test_round_trip_exact_and_nothing_else_changes(built_models, name, tmp_path):
    meta = load_meta(built_models[name])
    vectors = ModelVectors(meta)
    tree = parse_osim(built_models[name])
    before = _texts(
        tree,
        {
            "location",
            "max_isometric_force",
            "optimal_fiber_length",
            "tendon_slack_length",
            "stiffness",
            "viscosity",
        },
    )
    rng = np.random.default_rng(1)
    values = {kind: rng.uniform(0, 1, len(vectors.names(kind))) for kind in KINDS}
    vectors.write(tree, values)
    out = tmp_path / "edited.osim"
    write_atomic(out, xml_bytes(tree))
    reread = parse_osim(out)
    for kind in KINDS:
        np.testing.assert_allclose(vectors.read(reread, kind), values[kind], rtol=0, atol=1e-12)
    after = _texts(
        reread,
        {
            "location",
            "max_isometric_force",
            "optimal_fiber_length",
            "tendon_slack_length",
            "stiffness",
            "viscosity",
        },
    )
    assert before == after
    # only components that are free moved: fixed components of every point are untouched
    for m in meta.muscles:
        for p in m.points:
            loc = [
                float(v)
                for v in reread.xpath(
                    f"//Millard2012EquilibriumMuscle[@name='{m.name}']//PathPoint[@name='{p.name}']/location"
                )[0].text.split()
            ]
            for i, axis in enumerate("xyz"):
                if axis not in p.ranges:
                    assert loc[i] == p.location[i]
                else:
                    lo, hi = p.ranges[axis]
                    assert lo - 1e-12 <= loc[i] <= hi + 1e-12


def test_mirrored_points_stay_mirrored(built_models):
    meta = load_meta(built_models["Human"])
    vectors = ModelVectors(meta)
    tree = parse_osim(built_models["Human"])
    vectors.write(tree, {"routing": np.full(len(vectors.names("routing")), 0.9)})
    for m in meta.muscles:
        if m.side != "r" or not m.name.endswith("_r"):
            continue
        left = m.name[:-2] + "_l"
        for _k, p in enumerate(m.points):
            r = tree.xpath(f"//*[@name='{m.name}']//PathPoint[@name='{p.name}']/location")[0]
            l_name = p.name.replace(m.name, left)
            l_el = tree.xpath(f"//*[@name='{left}']//PathPoint[@name='{l_name}']/location")[0]
            rx, ry, rz = map(float, r.text.split())
            lx, ly, lz = map(float, l_el.text.split())
            assert (rx, ry) == pytest.approx((lx, ly)) and rz == pytest.approx(-lz)


def test_written_model_loads_and_derives_tendon_slack(built_models, tmp_path):
    """An edited Human loads in OpenSim; spine tendon slack follows the new routing."""
    osim = import_opensim()
    meta = load_meta(built_models["Human"])
    vectors = ModelVectors(meta)
    tree = parse_osim(built_models["Human"])
    vectors.write(
        tree,
        {
            "routing": np.zeros(len(vectors.names("routing"))),
            "properties": {"spine_posterior.optimal_fiber_length": 0.2},
        },
    )
    out = tmp_path / "edited.osim"
    write_atomic(out, xml_bytes(tree))
    model = osim.Model(str(out))
    state = model.initSystem()
    for name in ("spine_posterior_upper_r", "spine_anterior_neck_l"):
        mus = osim.Millard2012EquilibriumMuscle.safeDownCast(model.getMuscles().get(name))
        length = mus.getLength(state)
        derived = length - mus.get_optimal_fiber_length() * np.cos(mus.get_pennation_angle_at_optimal())
        assert mus.get_tendon_slack_length() == pytest.approx(derived, abs=1e-9)


def test_bad_vectors_raise(built_models):
    vectors = ModelVectors(load_meta(built_models["HumanLegs"]))
    tree = parse_osim(built_models["HumanLegs"])
    with pytest.raises(ValueError):
        vectors.write(tree, {"routing": np.zeros(3)})
    with pytest.raises(KeyError):
        vectors.write(tree, {"routing": {"no_such.P1.x": 0.5}})
    with pytest.raises(ValueError):
        vectors.write(tree, {"routing": {vectors.names("routing")[0]: float("nan")}})
