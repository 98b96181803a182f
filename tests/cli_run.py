"""``musclewalk COMMAND ARGS...`` in a subprocess, for the tests of a command's exit code and
output (the CompletedProcess, text output captured)."""

import subprocess
import sys


def run_cli(command: str, *args, timeout: float = 600):
    return subprocess.run(
        [sys.executable, "-m", "musclewalk.cli", command, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
