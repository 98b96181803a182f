"""ruff (configured in pyproject.toml) finds nothing and the code is formatted as `ruff format`
writes it: lint and the format check run with the tests, in CI too."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _need_ruff():
    try:
        import ruff  # noqa: F401
    except ImportError:
        if shutil.which("ruff") is None:
            pytest.skip("ruff is not installed (pip install -e '.[test]' installs it)")


def test_ruff_finds_nothing():
    _need_ruff()
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--output-format", "concise", str(REPO)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-1000:]


def test_the_code_is_formatted():
    _need_ruff()
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", str(REPO)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, (
        result.stdout[-3000:] + result.stderr[-1000:] + "\nrun `ruff format .` to format"
    )
