"""A controller feature beyond the paper (knee_overextension) is data in the search space: off and
out of the CMA-ES vector unless a run's parameters name it; a warm start that uses it is refused by
a run that keeps it off (it would silently change the controller), and a run that frees it starts
from a warm start without it (the feature off)."""

import json
from pathlib import Path

import numpy as np
import pytest

from musclewalk.optimize.driver import Optimization, OptimizationError
from musclewalk.optimize.space import ParameterSpace, without_starts

REPO = Path(__file__).resolve().parents[2]
COMMITTED_BEST = REPO / "models" / "optimized" / "HumanLegs-walk-1.3" / "best.json"
FREE = {"knee_overextension.*": {"free": True}}
NAMES = ["knee_overextension.gain", "knee_overextension.theta_off"]
STANCE_TIBIALIS = [
    "stance_tibialis.stretch_gain",
    "stance_tibialis.theta_off",
    "stance_tibialis.soleus_inhibition",
]


def _features_beyond_the_paper() -> list:
    """Every extension parameter in params.py order (tests/control/test_control_params.py lists them)."""
    from musclewalk.control.params import controller_parameter_specs

    space = ParameterSpace.of_creature("HumanLegs")
    return [s.name for s in controller_parameter_specs(space.control_model) if s.extension]


EXTENSIONS = _features_beyond_the_paper()
# the features beyond the paper listed before and after the knee inhibition (params.py order)
OFF_BEFORE = EXTENSIONS[: EXTENSIONS.index(NAMES[0])]
OTHERS_AFTER = EXTENSIONS[EXTENSIONS.index(NAMES[-1]) + 1 :]


def test_off_by_default_and_optimized_when_freed():
    paper = ParameterSpace.of_creature("HumanLegs")
    freed = ParameterSpace.of_creature("HumanLegs", FREE)
    assert list(paper.off) == [*OFF_BEFORE, *NAMES, *OTHERS_AFTER]
    # the others stay off
    assert list(freed.off) == [*OFF_BEFORE, *OTHERS_AFTER]
    assert len(freed) == len(paper) + 2
    assert paper.values(np.zeros(len(paper)))["knee_overextension.gain"] == 0.0
    assert [e.name for e in freed.optimized if e.extension] == NAMES
    assert not freed.fixed and not freed.narrowed  # free keeps the parameter's own bounds
    assert "controller features beyond the paper, optimized: knee_overextension" in freed.describe_overrides()
    x = np.full(len(freed), 5.0)
    assert freed.values(x)["knee_overextension.gain"] == pytest.approx(2.5)  # half way up [0, 5]
    # narrowing also turns it on (the whole feature)
    narrowed = ParameterSpace.of_creature("HumanLegs", {"knee_overextension.gain": {"lower": 0.5}})
    assert list(narrowed.off) == [*OFF_BEFORE, *OTHERS_AFTER]
    assert narrowed.values(np.zeros(len(narrowed)))["knee_overextension.gain"] == 0.5


def test_a_warm_start_using_the_feature_needs_a_run_that_frees_it(small_settings, tmp_path):
    best = json.loads(COMMITTED_BEST.read_text())
    assert "knee_overextension.gain" not in best["parameters"]["controller"]  # made before it existed
    freed = Optimization(
        small_settings(init=str(COMMITTED_BEST), parameters=FREE), tmp_path / "a", progress=False
    )
    x0 = freed._warm_start(COMMITTED_BEST).x
    values = freed.space.values(x0)
    assert values["knee_overextension.gain"] == 0.0  # a warm start without it: off
    assert values["knee.theta"] == pytest.approx(best["parameters"]["controller"]["knee.theta"])

    best["parameters"]["controller"].update(
        {"knee_overextension.gain": 1.5, "knee_overextension.theta_off": 0.2}
    )
    using = tmp_path / "using.json"
    using.write_text(json.dumps(best))
    x0 = freed._warm_start(using).x
    assert freed.space.values(x0)["knee_overextension.gain"] == pytest.approx(1.5)
    with pytest.raises(
        OptimizationError, match=r"using.json: the warm start uses knee_overextension .*free: true"
    ):
        Optimization(small_settings(init=str(using)), tmp_path / "b", progress=False)


def test_naming_one_parameter_turns_the_whole_feature_on():
    space = ParameterSpace.of_creature("HumanLegs", {"knee_overextension.theta_off": {"lower": 0.2}})
    assert list(space.off) == [*OFF_BEFORE, *OTHERS_AFTER]
    assert [e.name for e in space.optimized if e.extension] == NAMES  # the gain within its own bounds


def test_free_is_only_for_a_feature_beyond_the_paper():
    from musclewalk.optimize.space import OverrideError

    with pytest.raises(
        OverrideError, match=r"parameters\[knee.theta\].free: knee.theta is a parameter of the paper"
    ):
        ParameterSpace.of_creature("HumanLegs", {"knee.theta": {"free": True}})


def test_a_warm_start_with_the_feature_off_fits_a_paper_run(small_settings, tmp_path):
    best = json.loads(COMMITTED_BEST.read_text())
    best["parameters"]["controller"].update(
        {"knee_overextension.gain": 0.0, "knee_overextension.theta_off": 0.6}
    )
    off = tmp_path / "off.json"
    off.write_text(json.dumps(best))
    opt = Optimization(small_settings(init=str(off)), tmp_path / "run", progress=False)
    assert opt.space.values(opt._warm_start(off).x)["knee_overextension.gain"] == 0.0


def test_a_start_value_begins_the_search_there_with_or_without_a_warm_start(small_settings, tmp_path):
    started = {
        "stance_tibialis.*": {"free": True},
        "stance_tibialis.stretch_gain": {"start": 1.0},
    }
    from musclewalk.optimize.space import OverrideError

    with pytest.raises(OverrideError, match=r"also matched"):
        ParameterSpace.of_creature("HumanLegs", started)
    started = {
        "stance_tibialis.stretch_gain": {"start": 1.0},
        "stance_tibialis.theta_off": {"lower": -0.3, "start": -0.1},
    }
    space = ParameterSpace.of_creature("HumanLegs", started)
    assert [e.name for e in space.optimized if e.extension] == STANCE_TIBIALIS  # the feature is on
    at_start = space.values(np.zeros(len(space)))
    assert at_start["stance_tibialis.stretch_gain"] == 1.0
    assert at_start["stance_tibialis.theta_off"] == -0.1
    assert at_start["stance_tibialis.soleus_inhibition"] == 0.0
    # the bounds and the scale stay the parameter's own (or narrowed) ones
    gain = next(e for e in space.optimized if e.name == "stance_tibialis.stretch_gain")
    assert (gain.lower, gain.upper) == (0.0, 5.0)
    assert "start values (in place of the defaults and a warm start's): 2" in "\n".join(
        space.describe_overrides()
    )

    best = json.loads(COMMITTED_BEST.read_text())
    best["parameters"]["controller"]["knee.theta"] += 0.01
    best["parameters"]["controller"]["stance_tibialis.stretch_gain"] = 3.0
    warm = tmp_path / "warm.json"
    warm.write_text(json.dumps(best))
    overrides = {**started, "knee.theta": {"start": best["parameters"]["controller"]["knee.theta"] - 0.01}}
    opt = Optimization(small_settings(init=str(warm), parameters=overrides), tmp_path / "run", progress=False)
    start = opt._warm_start(warm)
    values = opt.space.values(start.x)
    assert values["stance_tibialis.stretch_gain"] == pytest.approx(1.0)  # not the warm start's 3
    assert values["knee.theta"] == pytest.approx(overrides["knee.theta"]["start"])
    assert values["lift.hip"] == pytest.approx(best["parameters"]["controller"]["lift.hip"])
    assert any("start values replace the warm start's: 2" in n for n in start.notes)
    # a later stage of an experiment continues the stage before it: its space has no start values
    # (Experiment's stage spaces, optimize.space.without_starts), and the warm start's values stay
    later_space = without_starts(overrides, ParameterSpace.of_creature("HumanLegs").entries)
    assert later_space == {
        "stance_tibialis.stretch_gain": {"free": True},
        "stance_tibialis.theta_off": {"lower": -0.3},
    }
    later = Optimization(
        small_settings(init=str(warm), parameters=later_space), tmp_path / "stage2", progress=False
    )
    later_start = later._warm_start(warm)
    later_values = later.space.values(later_start.x)
    assert later_values["stance_tibialis.stretch_gain"] == pytest.approx(3.0)
    assert later_values["knee.theta"] == pytest.approx(best["parameters"]["controller"]["knee.theta"])
    assert not any("start values" in n for n in later_start.notes)


@pytest.mark.parametrize(
    "override, message",
    [
        ({"stance_tibialis.stretch_gain": {"start": 9.0}}, r"start: 9 is outside the bounds \[0, 5\]"),
        (
            {"stance_tibialis.stretch_gain": {"upper": 2.0, "start": 3.0}},
            r"start: 3 is outside the narrowed bounds \[0, 2\]",
        ),
        ({"knee.theta": {"fixed": 0.1, "start": 0.1}}, r"takes no other field"),
    ],
)
def test_a_bad_start_value_names_the_key(override, message):
    from musclewalk.optimize.space import OverrideError

    with pytest.raises(OverrideError, match=message):
        ParameterSpace.of_creature("HumanLegs", override)


def test_the_ankle_onset_is_searched_with_its_ramp_fixed_as_the_pushoff_try_does():
    """Naming ankle_fplus.onset turns the feature on, ramp included; the pushoff experiment fixes the
    ramp, so that only the onset is searched (a long ramp would undo the gate)."""
    named = ParameterSpace.of_creature("HumanLegs", {"ankle_fplus.onset": {"upper": 0.25, "start": 0.25}})
    assert [e.name for e in named.optimized if e.extension] == ["ankle_fplus.onset", "ankle_fplus.ramp"]
    fixed = ParameterSpace.of_creature(
        "HumanLegs", {"ankle_fplus.onset": {"upper": 0.25}, "ankle_fplus.ramp": {"fixed": 0.1}}
    )
    assert [e.name for e in fixed.optimized if e.extension] == ["ankle_fplus.onset"]
    values = fixed.values(np.zeros(len(fixed)))
    assert values["ankle_fplus.ramp"] == 0.1
    assert -0.5 <= values["ankle_fplus.onset"] <= 0.25
