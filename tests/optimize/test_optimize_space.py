"""The optimized parameter vector (Table 1): normalized x <-> named values round trips, the
best.json layout, the model part written into an .osim and the controller part driving a
simulation."""

import json

import numpy as np
import pytest

from musclewalk.control.controller import Controller
from musclewalk.control.params import controller_parameter_specs
from musclewalk.model.meta import load_meta
from musclewalk.model.vectors import KINDS, ModelVectors, parse_osim, write_model_with
from musclewalk.opensim_env import import_opensim
from musclewalk.optimize.space import SCALE_DIVISOR, ParameterSpace
from musclewalk.sim.bridge import control_model_from_meta
from musclewalk.sim.runner import Simulator
from musclewalk.sim.scenario import INITIAL_STATE_SPECS, Scenario


@pytest.fixture(scope="module")
def space_meta(humanlegs_osim):
    meta = load_meta(humanlegs_osim)
    return ParameterSpace(meta, control_model_from_meta(meta, 0.005)), meta


@pytest.fixture(scope="module")
def random_x(space_meta):
    space, _ = space_meta
    rng = np.random.default_rng(3)
    return rng.uniform(space.lower_x, space.upper_x)


def test_space_layout(space_meta):
    space, meta = space_meta
    counts = space.group_counts()
    mv = ModelVectors(meta)
    assert counts["initial_state"] == len(INITIAL_STATE_SPECS)
    assert counts["muscle_geometry"] == len(mv.names("routing"))
    assert counts["muscle_physiology"] == len(mv.names("properties"))
    assert counts["passive_control"] == len(mv.names("passive"))
    assert {"state_transition", "target_features", "feedback", "constant_excitation"} <= set(counts)
    # every parameter is named; the paper's are optimized, a feature beyond it is kept off
    assert sum(counts.values()) == len(space) == len(set(space.names)) - len(space.off)
    # exactly the features beyond the paper (test_control_params lists them)
    specs = controller_parameter_specs(control_model_from_meta(meta, 0.005))
    assert set(space.off) == {s.name for s in specs if s.extension}
    assert "ankle_fplus.onset" in space.off and "fsm.d_prep" not in space.off
    # sigma = 1 explores a tenth of each range: x spans SCALE_DIVISOR units between the bounds
    assert space.upper_x - space.lower_x == pytest.approx(np.full(len(space), SCALE_DIVISOR))
    assert np.all(space.lower_x <= 0) and np.all(space.upper_x >= 0)


def test_x_zero_is_the_template_model(space_meta, humanlegs_osim):
    """x = 0 gives the template defaults; its model part is what the base .osim holds."""
    space, meta = space_meta
    values = space.values(np.zeros(len(space)))
    optimized = [values[e.name] for e in space.optimized]
    assert optimized == pytest.approx(space.initial.tolist(), abs=0)
    assert {n: values[n] for n in space.off} == space.held
    _, model = space.split(values)
    tree = parse_osim(humanlegs_osim)
    mv = ModelVectors(meta)
    for kind in KINDS:
        assert model[kind] == pytest.approx(mv.read_values(tree, kind), abs=1e-12), kind


def test_values_round_trip(space_meta, random_x):
    space, _ = space_meta
    values = space.values(random_x)
    assert list(values) == space.names
    lo = np.array([e.lower for e in space.entries])
    hi = np.array([e.upper for e in space.entries])
    v = np.array(list(values.values()))
    assert np.all(lo <= v) and np.all(v <= hi)
    assert space.x_from_values(values) == pytest.approx(random_x, abs=1e-9)
    # outside the bounds x is clipped to them
    far = random_x + 100 * np.sign(random_x - 0.5 * (space.lower_x + space.upper_x))
    assert space.values(far) == pytest.approx(space.values(np.clip(far, space.lower_x, space.upper_x)))
    assert space.x_from_values(space.values(far)) == pytest.approx(
        np.where(far > 0, space.upper_x, space.lower_x), abs=1e-9
    )
    # a partial set of values leaves the other coordinates at the template default (x = 0)
    some = {e.name: values[e.name] for e in space.optimized[:5]}
    x = space.x_from_values(some)
    assert x[:5] == pytest.approx(random_x[:5], abs=1e-9) and not np.any(x[5:])


def test_structured_flatten_round_trip_through_json(space_meta, random_x):
    space, meta = space_meta
    values = space.values(random_x)
    structured = space.structured(values)
    assert set(structured) == {"controller", "initial_state", "model"}
    assert set(structured["initial_state"]) == {s.name for s in INITIAL_STATE_SPECS}
    assert not any(k.startswith("init.") for k in structured["controller"])
    assert set(structured["model"]) == set(KINDS)
    assert list(structured["model"]["routing"]) == ModelVectors(meta).names("routing")
    reread = json.loads(json.dumps({"parameters": structured}))["parameters"]
    flat = space.flatten(reread)
    assert flat == values  # JSON floats round-trip exactly
    assert space.x_from_values(flat) == pytest.approx(random_x, abs=1e-9)


def test_model_part_in_osim_and_controller_part_in_simulation(space_meta, random_x, humanlegs_osim, tmp_path):
    space, meta = space_meta
    # a moderate candidate (within 1.5 sigma of the defaults) so that the model stays sane
    x = np.clip(0.3 * random_x, space.lower_x, space.upper_x)
    structured = space.structured(space.values(x))
    out = tmp_path / "candidate.osim"
    write_model_with(humanlegs_osim, meta, structured["model"], out)
    tree = parse_osim(out)
    mv = ModelVectors(meta)
    for kind in KINDS:
        back = mv.read_values(tree, kind)
        assert back == pytest.approx(structured["model"][kind], abs=1e-9), kind
    # values other than the base model's really were written
    base = parse_osim(humanlegs_osim)
    assert mv.read(tree, "routing") != pytest.approx(mv.read(base, "routing"))
    osim = import_opensim()
    model = osim.Model(str(out))
    model.initSystem()
    assert model.getMuscles().getSize() == len(meta.muscles)
    # the controller part builds a Controller with exactly these values ...
    sim = Simulator(out, meta=meta)
    controller_part = structured["controller"]
    ctl = Controller(sim.control_model, controller_part, speed=1.3)
    for name, value in controller_part.items():
        assert ctl.params[name] == pytest.approx(value, abs=0), name
    # ... and the simulator accepts controller + initial-state parameters and runs them
    params = {**controller_part, **structured["initial_state"]}
    ctl_params, init_params = sim.split(params)
    assert ctl_params == controller_part and init_params == structured["initial_state"]
    result = sim.run(Scenario(speed=1.3, duration=0.05), params)
    assert result.steps == 10 or result.terminated
    assert np.all(np.isfinite(result.final_com))


def test_candidate_metadata_follows_the_written_model(humanlegs_osim):
    """The controller (moment arms from attachment points, F_max) and the effort model (muscle
    masses) must see the candidate's routing and properties, not the template's."""
    from musclewalk.model.vectors import ModelVectors
    from musclewalk.optimize.evaluate import Evaluator
    from musclewalk.sim.bridge import control_model_from_meta

    ev = Evaluator(str(humanlegs_osim))
    names = ModelVectors(ev.meta)
    values = {
        "properties": {n: 0.9 for n in names.names("properties")},
        "routing": {n: 0.05 for n in names.names("routing")},
    }
    path, meta = ev.candidate_model(values)
    base = {m.name: m for m in ev.meta.muscles}
    for m in meta.muscles:
        assert m.max_isometric_force > 1.5 * base[m.name].max_isometric_force
    moved = [p.location != q.location for m in meta.muscles for p, q in zip(m.points, base[m.name].points)]
    assert any(moved)
    cm = control_model_from_meta(meta, 0.005)
    assert cm.muscles[0].fmax == pytest.approx(meta.muscles[0].max_isometric_force)


def test_one_spec_and_one_validator_for_every_parameter(space_meta):
    """Controller, initial-state and model parameters are the same ParamSpec, checked by the same
    rule with the same message (the simulation parameter files, the optimizer's warm start and
    the evaluator's model values all go through ParamSpec.check)."""
    from musclewalk.control.params import ParameterError, ParamSpec
    from musclewalk.optimize.evaluate import check_model_values
    from musclewalk.sim.parameters import split_parameters

    space, meta = space_meta
    assert all(type(e) is ParamSpec for e in space.entries)
    by_group = {e.group: e for e in space.entries}
    for group in ("feedback", "initial_state", "muscle_geometry"):
        spec = by_group[group]
        with pytest.raises(ParameterError, match=rf"src: {spec.name}: .* is outside the bounds"):
            spec.check(spec.upper + 1.0, "src")
        with pytest.raises(ParameterError, match="not finite"):
            spec.check(float("nan"), "src")
        assert spec.check(spec.default, "src") == spec.default
    cm = control_model_from_meta(meta, 0.005)
    with pytest.raises(ParameterError, match=r"f.json: init.lean: 9 is outside the bounds"):
        split_parameters({"init.lean": 9.0}, cm, "f.json")
    with pytest.raises(ParameterError, match=r"model: routing\.\S+: 1.5 is outside the bounds"):
        check_model_values({"routing": {by_group["muscle_geometry"].name.split(".", 1)[1]: 1.5}})


def test_moved_moves_each_value_by_the_fraction_of_its_range(space_meta, random_x):
    """The further trials' move (driver): +-fraction of each parameter's own range, whatever
    its units, in the given directions."""
    space, _ = space_meta
    inside = 0.5 * (random_x + 0.5 * (space.lower_x + space.upper_x))  # away from the bounds
    directions = np.where(np.arange(len(space)) % 3 == 0, -1.0, 1.0)
    before = space.values(inside)
    after = space.values(space.moved(inside, directions, 1e-3))
    ranges = np.array([e.upper - e.lower for e in space.optimized])
    change = np.array([after[e.name] - before[e.name] for e in space.optimized])
    assert change == pytest.approx(1e-3 * ranges * directions, rel=1e-6)
    assert np.array_equal(space.moved(inside, directions, 0.0), inside)


def test_values_against_their_bounds_are_listed_by_side(space_meta):
    """at_bounds: the optimized parameters within 1 % of their range from a bound, with the side
    and the bound (log.txt's "best at a bound" line); values inside are not listed."""
    space, _ = space_meta
    speed = next(e for e in space.optimized if e.name == "init.forward_speed")
    lean = next(e for e in space.optimized if e.name == "init.lean")
    values = space.values(np.zeros(len(space)))
    assert all(name not in ("init.forward_speed", "init.lean") for name, *_ in space.at_bounds(values))
    values["init.forward_speed"] = speed.upper - 0.005 * (speed.upper - speed.lower)
    values["init.lean"] = lean.lower
    listed = {name: (side, bound) for name, _, side, bound in space.at_bounds(values)}
    assert listed["init.forward_speed"] == ("upper", speed.upper)
    assert listed["init.lean"] == ("lower", lean.lower)
    values["init.forward_speed"] = speed.upper - 0.02 * (speed.upper - speed.lower)
    assert "init.forward_speed" not in {name for name, *_ in space.at_bounds(values)}
