"""Tests for the model picture (musclewalk.analysis.render)."""

from pathlib import Path

import numpy as np
import pytest

from musclewalk.analysis.render import DPI, FIGSIZE, _extract, render_model

REFERENCE = Path("/work/shared/reference/opensim-gait10dof18musc/gait10dof18musc.osim")


def _check_png(path: Path):
    import matplotlib.image as mpimg

    assert path.is_file()
    assert path.stat().st_size > 20_000
    img = mpimg.imread(path)
    h, w = img.shape[:2]
    assert (w, h) == (round(FIGSIZE[0] * DPI), round(FIGSIZE[1] * DPI))
    gray = img[..., :3].mean(axis=-1)
    assert gray.var() > 1e-3  # not blank
    assert (gray < 0.5).mean() > 0.005  # there are dark strokes
    # no temporary files left beside the picture
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


@pytest.fixture(scope="module")
def human_legs(tmp_path_factory):
    from musclewalk.model.meta import build_meta, write_meta
    from musclewalk.model.osim import model_xml, write_atomic, xml_bytes
    from musclewalk.model.template import load_creature

    d = tmp_path_factory.mktemp("render")
    spec = load_creature("HumanLegs")
    osim_path = d / "HumanLegs.osim"
    write_atomic(osim_path, xml_bytes(model_xml(spec)))
    write_meta(d / "HumanLegs.meta.json", build_meta(spec))
    return osim_path


def test_render_generated_model(human_legs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "pics" / "human_legs.png"
    assert render_model(human_legs, out) == out
    _check_png(out)
    assert not (tmp_path / "opensim.log").exists()


def test_scene_uses_metadata(human_legs):
    from musclewalk.model.meta import load_meta

    meta = load_meta(human_legs)
    scene = _extract(human_legs, meta)
    assert scene.name == "HumanLegs"
    assert scene.n_muscles == len(meta.muscles) and len(scene.muscles) == scene.n_muscles
    assert {m[1] for m in scene.muscles} == {"r", "l"}
    assert scene.regions and scene.contacts and scene.segments and scene.joints
    # every region is anchored near its muscle's path (same body, default pose)
    assert all(np.isfinite(r[0]).all() for r in scene.regions)
    # without metadata: no regions, sides guessed from names
    bare = _extract(human_legs, None)
    assert bare.regions == [] and {m[1] for m in bare.muscles} == {"r", "l"}


@pytest.mark.skipif(not REFERENCE.is_file(), reason="shared reference model not available")
def test_render_reference_model(tmp_path):
    out = tmp_path / "gait10dof18musc.png"
    render_model(REFERENCE, out)
    _check_png(out)
    scene = _extract(REFERENCE, None)
    assert scene.n_muscles == 18 and scene.regions == []
    assert all(len(m[2]) >= 2 for m in scene.muscles)


def test_missing_model_raises(tmp_path):
    missing = tmp_path / "nope.osim"
    with pytest.raises(FileNotFoundError, match="nope.osim"):
        render_model(missing, tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_unreadable_model_raises(tmp_path):
    bad = tmp_path / "bad.osim"
    bad.write_text("this is not an OpenSim model")
    with pytest.raises(ValueError, match="bad.osim"):
        render_model(bad, tmp_path / "x.png")
    with pytest.raises(ValueError, match="not a file"):
        render_model(tmp_path, tmp_path / "x.png")  # a directory
    assert not (tmp_path / "x.png").exists()
