import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
PRESETS = ["HumanLegs", "Human", "Ostrich", "LongNeck", "LongLegs"]


@pytest.fixture(scope="session")
def built_models(tmp_path_factory):
    """All presets built once per test session: name -> .osim path."""
    from musclewalk.model.build import build_creature
    out = tmp_path_factory.mktemp("models")
    paths = {}
    for name in PRESETS:
        path = out / f"{name}.osim"
        build_creature(name, None, path)
        paths[name] = path
    return paths


@pytest.fixture
def models_copy(tmp_path, monkeypatch):
    """A private copy of models/ (creatures + templates) that a test may break."""
    import shutil
    dst = tmp_path / "models"
    shutil.copytree(REPO / "models" / "creatures", dst / "creatures")
    shutil.copytree(REPO / "models" / "templates", dst / "templates")
    monkeypatch.setenv("MUSCLEWALK_MODELS", str(dst))
    return dst
