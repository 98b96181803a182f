"""Each muscle's normalized fibre length standing (base pose, tendon at its slack length) in one
or more built or optimized models: where a model's muscle properties put its fibres before any
motion. A working_range model (models/physics.yaml ``muscle_properties``) holds these within its
bounds; a model with the paper's independent properties may put a fibre far past the
force-length curve (a passive spring) or leave it slack (below 0: its tendon longer than its
path). Muscles outside the bounds are marked.

    python3.11 analysis/standing_lengths.py MODEL.osim [MODEL.osim ...] [--all] [--bounds LO,HI]

MODEL.osim needs its .meta.json beside it (musclewalk build and every optimizer stage write
both). By default only the right side's muscles of each mirrored pair are listed, chain muscles
(neck, tail, spine) as their first segment's; --all lists every muscle.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import musclewalk  # noqa: F401  (pins numpy's CPU dispatch before numpy loads)
from musclewalk.model.meta import STANDING_FIBER_LENGTH_BOUNDS, load_meta, meta_path, one_side
from musclewalk.model.vectors import ModelVectors, parse_osim


def standing_table(model: Path, every: bool = False) -> list[tuple[str, float]]:
    """(muscle, standing normalized fibre length) of ``model``, in the model's muscle order."""
    meta = load_meta(meta_path(model))
    lengths = ModelVectors(meta).standing_lengths(parse_osim(model))
    if every:
        return list(lengths.items())
    return [(n, lengths[n]) for n in one_side(lengths, first_segment_only=True)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", type=Path)
    ap.add_argument("--all", action="store_true", help="every muscle, both sides and every segment")
    ap.add_argument(
        "--bounds",
        default=",".join(map(str, STANDING_FIBER_LENGTH_BOUNDS)),
        help="the working range marked, optimal lengths (default: working_range's)",
    )
    a = ap.parse_args(argv)
    try:
        lo, hi = (float(x) for x in a.bounds.split(","))
    except ValueError:
        print(f"--bounds {a.bounds!r}: expected LO,HI", file=sys.stderr)
        return 2
    for model in a.models:
        try:
            rows = standing_table(model, a.all)
        except (OSError, ValueError, KeyError) as exc:
            print(f"{model}: {exc}", file=sys.stderr)
            return 1
        outside = [n for n, v in rows if not lo <= v <= hi]
        print(
            f"{model}: {len(outside)} of {len(rows)} listed muscles outside {lo:g}-{hi:g} "
            "optimal lengths standing"
        )
        for n, v in rows:
            print(f"  {n:28s} {v:6.2f}{'  outside' if n in outside else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
