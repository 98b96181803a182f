"""Scratch folders of evaluating processes (musclewalk-eval-<pid>-*): a killed worker cannot remove
its own (atexit does not run on SIGKILL); the next evaluator removes it."""

import os
import signal
import subprocess
import sys
import tempfile

import pytest

from musclewalk.optimize.evaluate import Evaluator
from musclewalk.optimize.scratch import PREFIX, remove_stale_scratch


@pytest.fixture
def scratch_root(tmp_path, monkeypatch):
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_folders_of_dead_processes_are_removed(built_models, scratch_root):
    dead = _dead_pid()
    stale = scratch_root / f"{PREFIX}{dead}-abc123"
    stale.mkdir()
    (stale / "candidate-1.osim").write_text("<OpenSimDocument/>")
    live = scratch_root / f"{PREFIX}{os.getpid()}-live"
    live.mkdir()
    parent = scratch_root / f"{PREFIX}{os.getppid()}-parent"
    parent.mkdir()
    odd = scratch_root / f"{PREFIX}notapid-x"
    odd.mkdir()
    a_file = scratch_root / f"{PREFIX}{dead}-file"
    a_file.write_text("not a folder")
    ev = Evaluator(str(built_models["HumanLegs"]))
    assert not stale.exists()
    assert live.is_dir() and parent.is_dir() and odd.is_dir() and a_file.is_file()
    assert ev.tmpdir.parent == scratch_root and ev.tmpdir.name.startswith(f"{PREFIX}{os.getpid()}-")
    assert remove_stale_scratch(scratch_root) == []


def test_folder_of_a_killed_worker_is_removed(built_models, scratch_root):
    code = (
        "import os, signal, sys\n"
        "from musclewalk.optimize.evaluate import Evaluator\n"
        "ev = Evaluator(sys.argv[1])\n"
        "print(ev.tmpdir, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(built_models["HumanLegs"])],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(scratch_root)},
        timeout=300,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    killed = scratch_root / os.path.basename(proc.stdout.strip())
    assert killed.is_dir()  # atexit did not run
    Evaluator(str(built_models["HumanLegs"]))
    assert not killed.exists()
    assert [p.name.split("-")[2] for p in scratch_root.iterdir()] == [str(os.getpid())]
