"""Scratch folders of evaluating processes (``musclewalk-eval-<pid>-*`` in the temporary
directory), where each writes its candidate models. A process removes its own at exit (atexit);
one that is killed (SIGKILL: a stuck worker, the kernel killing a worker whose optimizer died)
cannot, so every new folder first removes the folders of processes that no longer exist: killed
workers' folders do not accumulate, and the worker that replaces a killed one cleans up after it.

Removing a folder whose process still lives elsewhere (another PID namespace sharing the
directory) is harmless: the candidate model is written with write_atomic, which creates the
folder again."""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import tempfile
from pathlib import Path

PREFIX = "musclewalk-eval-"


def _alive(pid: int) -> bool:
    """True unless the process certainly no longer exists (or is a zombie, killed but not yet
    reaped by its parent)."""
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. PermissionError: another user's process
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


def remove_stale_scratch(root=None) -> list[Path]:
    """Remove this user's scratch folders in ``root`` (default: the temporary directory) whose
    process no longer exists; returns the removed folders."""
    root = Path(root if root is not None else tempfile.gettempdir())
    removed = []
    for folder in root.glob(PREFIX + "*"):
        pid = folder.name[len(PREFIX) :].split("-", 1)[0]
        if not pid.isdigit():
            continue
        try:
            st = folder.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or _alive(int(pid)):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            removed.append(folder)
    return removed


def new_scratch_folder() -> Path:
    """A scratch folder of this process, removed at exit; stale ones of dead processes go
    first."""
    remove_stale_scratch()
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder
