"""What the analysis/ scripts that read one optimization run folder share: the check that it is
one, and printing a result table that may also go to a file."""

from __future__ import annotations

import argparse
from pathlib import Path


def require_run_folder(ap: argparse.ArgumentParser, run: Path) -> None:
    """A usage error (exit 2) unless ``run`` holds best.json and optimized.osim."""
    for name in ("best.json", "optimized.osim"):
        if not (run / name).is_file():
            ap.error(f"{run / name}: not found (a run folder holds best.json and optimized.osim)")


def emit(text: str, out: Path | None) -> None:
    """Print ``text``; also write it to ``out`` when given."""
    print(text)
    if out:
        out.write_text(text)
