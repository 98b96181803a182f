import musclewalk  # noqa: F401, I001  first, before numpy loads: it pins numpy's CPU dispatch (musclewalk.cpu_dispatch)
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
PRESETS = ["HumanLegs", "Human", "Ostrich", "LongNeck", "LongLegs"]

# `pytest -m "not slow"`: the tests that need neither OpenSim, nor Snakemake, nor a subprocess
# (pure numpy: controller, measures, objective arithmetic) run in seconds. Every other test is
# marked slow: those outside the pure modules, and those inside that use a built model.
PURE_MODULES = (
    "tests/control",
    "tests/measures/test_events.py",
    "tests/measures/test_metabolics.py",
    "tests/measures/test_objective.py",
)
MODEL_FIXTURES = {"built_models", "humanlegs_osim", "small_settings", "models_copy", "ideal_human_osim"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        rel = Path(str(item.fspath)).resolve().relative_to(REPO).as_posix()
        pure = any(rel == m or rel.startswith(m + "/") for m in PURE_MODULES)
        if not pure or MODEL_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.slow)


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
def one_error(capfd):
    """one_error(exit_code, expected=2): the one line a command printed on stderr for bad input,
    after checking the exit code, that it is one line and no traceback."""

    def read(code, expected=2):
        err = capfd.readouterr().err
        assert code == expected, err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in err, err
        return lines[0]

    return read


@pytest.fixture(scope="session")
def humanlegs_osim(built_models):
    return built_models["HumanLegs"]


@pytest.fixture(scope="session")
def ideal_human_osim(tmp_path_factory):
    """The Human with ideal muscles (models/creatures/human_ideal_muscles.yaml), built once."""
    from musclewalk.model.build import build_creature

    path = tmp_path_factory.mktemp("ideal") / "HumanIdealMuscles.osim"
    build_creature("HumanIdealMuscles", None, path)
    return path


@pytest.fixture
def models_copy(tmp_path, monkeypatch):
    """A private copy of models/ (creatures, templates, physics) that a test may break."""
    import shutil

    dst = tmp_path / "models"
    shutil.copytree(REPO / "models" / "creatures", dst / "creatures")
    shutil.copytree(REPO / "models" / "templates", dst / "templates")
    shutil.copytree(REPO / "models" / "objectives", dst / "objectives")
    shutil.copy(REPO / "models" / "physics.yaml", dst / "physics.yaml")
    monkeypatch.setenv("MUSCLEWALK_MODELS", str(dst))
    return dst


@pytest.fixture
def make_read_only():
    """make_read_only(folder): no file can be created in the folder, also for root (chmod 555,
    plus the immutable attribute when root ignores the mode); undone after the test. Skips the
    test where neither works."""
    import shutil
    import subprocess

    made = []

    def make(folder):
        folder = Path(folder)
        folder.chmod(0o555)
        made.append((folder, False))
        if os.access(folder, os.W_OK) and shutil.which("chattr"):
            if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0:
                made.append((folder, True))
        if os.access(folder, os.W_OK):
            pytest.skip("cannot make a read-only folder here")
        return folder

    yield make
    for folder, immutable in reversed(made):
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], capture_output=True)
        else:
            folder.chmod(0o755)
