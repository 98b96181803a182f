import json
import math

import pytest
from control_synth import build_creature

from musclewalk.control import (
    GROUPS,
    Controller,
    ControlModel,
    controller_parameter_specs,
    default_parameters,
    format_group_counts,
    group_counts,
    validate_parameters,
)


def test_parameter_list_structure(creature):
    all_specs = controller_parameter_specs(creature.model)
    assert [s.group for s in all_specs] == sorted((s.group for s in all_specs), key=GROUPS.index)
    # beyond the paper, off at their defaults
    extensions = [s for s in all_specs if s.extension]
    assert [s.name for s in extensions] == [
        "fsm.prep_touchdown_ahead",
        "swing.toe_out",
        "swing_foot.follow_shank",
        "swing_foot.heading_share",
        "swing_foot.toe_out",
        "swing_foot.release_time",
        "gain.knee.kw",
        "gain.stance_knee.kq",
        "stance_knee.theta",
        "gain.ankle.kw",
        "prep_foot.kv",
        "prep_foot.ahead",
        "ankle_fplus.onset",
        "ankle_fplus.ramp",
        "lift.ankle",
        "knee_overextension.gain",
        "knee_overextension.theta_off",
        "stance_tibialis.stretch_gain",
        "stance_tibialis.theta_off",
        "stance_tibialis.soleus_inhibition",
        "angular_velocity_filter.time_constant",
        "jt_equal_activation.weight",
    ]
    defaults = default_parameters(creature.model)
    for gain in (
        "swing.toe_out",
        "swing_foot.heading_share",
        "swing_foot.toe_out",
        "prep_foot.kv",
        "knee_overextension.gain",
        "swing_foot.follow_shank",
        "stance_tibialis.stretch_gain",
        "stance_tibialis.soleus_inhibition",
        "angular_velocity_filter.time_constant",
        "gain.knee.kw",
        "gain.stance_knee.kq",
        "gain.ankle.kw",
        "jt_equal_activation.weight",
        "swing_foot.release_time",
    ):
        assert defaults[gain] == 0.0
    assert defaults["fsm.prep_touchdown_ahead"] == -1.0  # off: every stance-preparation contact
    specs = [s for s in all_specs if not s.extension]
    names = [s.name for s in all_specs]
    assert len(names) == len(set(names))
    counts = group_counts(specs)
    # Table 1: 3 state-transition and 14 target-feature parameters
    assert counts["state_transition"] == 3
    assert counts["target_features"] == 14
    # trunk 2 + head 4 + swing 1 + prep 2 + knee 1 + ankle 1 + fplus (vasti, gastrocnemius, soleus) 3 + lift 2
    assert counts["feedback"] == 16
    assert {n for n in names if n.startswith("fplus.")} == {
        "fplus.vasti",
        "fplus.gastrocnemius",
        "fplus.soleus",
    }
    # 10 unique muscles x {stance, swing}
    assert counts["constant_excitation"] == 20
    assert format_group_counts(specs).endswith("(total 53)")
    for s in specs:
        assert s.lower <= s.default <= s.upper, s.name
        assert s.lower < s.upper, s.name
        assert s.doc


def test_base_pose_angles_set_target_defaults():
    creature = build_creature()
    d = creature.model.to_dict()
    d.update(trunk_pitch0=0.2, upper_leg_pitch0=0.1, knee0=0.3, ankle0=-0.1)
    defaults = default_parameters(ControlModel.from_dict(d))
    assert defaults["trunk.theta0"] == pytest.approx(0.2)
    assert defaults["swing.theta0"] == pytest.approx(0.1 + 0.4)
    assert defaults["knee.theta"] == pytest.approx(0.3)
    assert defaults["ankle.theta"] == pytest.approx(-0.1)


def test_validation_errors_name_the_parameter(creature):
    specs = controller_parameter_specs(creature.model)
    with pytest.raises(ValueError, match="fsm.d_lfit"):
        validate_parameters({"fsm.d_lfit": -0.2}, specs)
    with pytest.raises(ValueError, match="gain.trunk.kq"):
        validate_parameters({"gain.trunk.kq": math.nan}, specs)
    with pytest.raises(ValueError, match="lift.knee"):
        validate_parameters({"lift.knee": 0.5}, specs)  # must be <= 0
    with pytest.raises(ValueError, match="const.swing.soleus"):
        validate_parameters({"const.swing.soleus": -0.01}, specs)
    with pytest.raises(ValueError, match="fplus.vasti"):
        validate_parameters({"fplus.vasti": "high"}, specs)
    full = default_parameters(creature.model)
    assert validate_parameters(full, specs, strict=True) == full
    partial = dict(full)
    del partial["coronal.kd"]
    with pytest.raises(ValueError, match="coronal.kd"):
        validate_parameters(partial, specs, strict=True)
    assert validate_parameters(partial, specs)["coronal.kd"] == full["coronal.kd"]
    with pytest.raises(ValueError, match="trunk.k_speed"):
        Controller(creature.model, params={"trunk.k_speed": 99.0})


def test_model_without_head_has_no_head_gains():
    creature = build_creature()
    d = creature.model.to_dict()
    d["bodies"]["head"] = None
    model = ControlModel.from_dict(d)
    names = [s.name for s in controller_parameter_specs(model)]
    assert not any(n.startswith("gain.head.") for n in names)


def test_control_model_dict_round_trip_and_names():
    creature = build_creature()
    d = json.loads(json.dumps(creature.model.to_dict()))
    again = ControlModel.from_dict(d)
    assert again.to_dict() == d
    # names instead of indices
    d["pairs"] = [[d["muscles"][m]["name"], d["joints"][j]["name"]] for m, j in d["pairs"]]
    d["bodies"] = {
        "trunk": "trunk",
        "head": "head",
        "upper": ["upper_r", "upper_l"],
        "lower": ["lower_r", "lower_l"],
        "foot": ["foot_r", "foot_l"],
    }
    by_name = ControlModel.from_dict(d)
    assert by_name.to_dict()["pairs"] == again.to_dict()["pairs"]
    assert by_name.upper_body == (3, 6)
    assert list(by_name.delay_steps) == list(creature.model.delay_steps)


def test_control_model_rejects_inconsistent_descriptions():
    d = build_creature().model.to_dict()
    bad = json.loads(json.dumps(d))
    bad["muscles"][0]["roles"].append("ankle")  # hip_flexor_r spans no ankle
    with pytest.raises(ValueError, match="hip_flexor_r"):
        ControlModel.from_dict(bad)
    bad = json.loads(json.dumps(d))
    bad["muscles"][0]["roles"].append("hip_flexr")
    with pytest.raises(ValueError, match="unknown roles"):
        ControlModel.from_dict(bad)
    bad = json.loads(json.dumps(d))
    bad["joints"][4]["kind"] = "other"  # knee_l
    with pytest.raises(ValueError, match="missing knee joint on side 'l'"):
        ControlModel.from_dict(bad)
    bad = json.loads(json.dumps(d))
    bad["muscles"][1]["delay"] = 0.0075
    with pytest.raises(ValueError, match="hip_extensor_r"):
        ControlModel.from_dict(bad)
