"""The analysis/ scripts behind the README's tables run (shrunk: short evaluations)."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_spine_stiffness_sweep_writes_its_table(tmp_path):
    out = tmp_path / "sweep.md"
    r = subprocess.run(
        [
            sys.executable,
            str(REPO / "analysis/spine_stiffness_sweep.py"),
            "--stiffness",
            "60",
            "420",
            "--duration",
            "0.2",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    lines = out.read_text().splitlines()
    assert lines[0].startswith("| spine flexion/bending springs") and len(lines) == 4
    assert lines[2].startswith("| 60 |") and lines[3].startswith("| 420 |")
