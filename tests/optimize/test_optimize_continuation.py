"""Continuation stages (--scale-passive): a run on a copy of the model whose passive-gain bounds
are scaled, the source model untouched, bad names rejected before anything is written."""

import pytest
from lxml import etree

from musclewalk.cli import main
from musclewalk.model.meta import load_meta, meta_path, scale_passive_bounds
from musclewalk.optimize.driver import scaled_passive_model
from musclewalk.optimize.evaluate import Evaluator


def passive(meta, name):
    return next(e for e in meta.passive if e.name == name)


def test_scale_passive_bounds_scales_initial_and_bounds(humanlegs_osim):
    meta = load_meta(humanlegs_osim)
    scaled = scale_passive_bounds(meta, {"hip_axial": 2.0, "ankle_axial.stiffness": 0.5})
    for name, factor in (
        ("hip_axial.stiffness", 2.0),
        ("hip_axial.damping", 2.0),
        ("ankle_axial.stiffness", 0.5),
        ("ankle_axial.damping", 1.0),
        ("ankle_coronal.stiffness", 1.0),
    ):
        before, after = passive(meta, name), passive(scaled, name)
        for key in ("initial", "lo", "hi"):
            assert getattr(after, key) == pytest.approx(factor * getattr(before, key)), (name, key)
    assert scaled.passive_scale == {"hip_axial": 2.0, "ankle_axial.stiffness": 0.5}
    assert meta.passive_scale is None  # the input is not modified
    with pytest.raises(ValueError, match="already scaled"):
        scale_passive_bounds(scaled, {"hip_axial": 2.0})
    with pytest.raises(ValueError, match="spine_flexion: no such passive gain.*hip_axial"):
        scale_passive_bounds(meta, {"spine_flexion": 2.0})
    with pytest.raises(ValueError, match="factor must be a positive number"):
        scale_passive_bounds(meta, {"hip_axial": 0.0})


def test_scaled_model_is_the_runs_own_copy(humanlegs_osim, tmp_path):
    source_meta = meta_path(humanlegs_osim).read_bytes()
    out = tmp_path / "stage"
    model = scaled_passive_model(humanlegs_osim, out, {"hip_axial": 3.0})
    assert model == out / "model" / humanlegs_osim.name and model.exists()
    assert meta_path(humanlegs_osim).read_bytes() == source_meta
    meta = load_meta(model)
    original = passive(load_meta(humanlegs_osim), "hip_axial.stiffness")
    # the candidate an evaluation builds: the upper end of the normalized range is 3 x the hi
    spring = passive(meta, "hip_axial.stiffness").targets[0]
    path, _ = Evaluator(str(model)).candidate_model({"passive": {"hip_axial.stiffness": 1.0}})
    stiffness = etree.parse(str(path)).find(f".//SpringGeneralizedForce[@name='{spring}']/stiffness")
    assert float(stiffness.text) == pytest.approx(3 * original.hi)
    # a second start of the same stage (no checkpoint yet) does not scale twice
    assert scaled_passive_model(model, out, {"hip_axial": 3.0}) == model
    assert load_meta(model).passive == meta.passive


@pytest.mark.parametrize(
    "spec, message",
    [
        ("spine_flexion=2", "spine_flexion: no such passive gain"),
        ("hip_axial", "expected NAME=FACTOR"),
        ("hip_axial=-1", "factor must be a positive number"),
    ],
)
def test_bad_scale_passive(humanlegs_osim, tmp_path, capsys, spec, message):
    out = tmp_path / "run"
    assert (
        main(["optimize", str(humanlegs_osim), "--speed", "1.3", "--scale-passive", spec, "--out", str(out)])
        == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("musclewalk optimize: error: --scale-passive")
    assert message in err[0]
    assert not out.exists()
