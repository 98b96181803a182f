"""Where each muscle's excitation comes from, and what it costs: each run folder re-simulated
(its speed, 10 s by default) and `musclewalk analyze`d, then per muscle with a right and a left
side (both sides averaged, in the model's order: legs, and arms or spine halves where the
creature has them) its metabolic rate (W per muscle) and, in its leg's stance (stance and
lift-off) and swing (swing and stance preparation), the mean excitation, the constant part
(eq 30-31, with the lift-off terms of eq 24-25), the feedback terms that deliver at least --min
on average (`musclewalk analyze`'s ``feedback_by_source``: trunk = eq 21 through the stance hip,
upper_leg = eq 26-27, lower_leg = eq 28, foot = eq 29, each by the plane of its torque in the
trunk's frame; force_feedback = eq 23's F+, and the laws beyond the paper) and what the clipping
to [0, 1] added (negative where the terms asked for more than full excitation, positive where
they drove it below 0).

    python3.11 analysis/excitation_sources.py RUN_DIR [RUN_DIR ...] [--min 0.05] [--duration S]
                                              [--out FILE.md] [--work DIR]

A muscle whose mean excitation comes from a feedback term pushed far past 1 (large negative
clipping) is driven by a feature its muscles cannot reach: co-contraction and heat the optimizer
pays for, and a controller cause a constraint on that feature's target or gain can address.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from committed_comparison import simulate_and_analyze  # noqa: E402
from run_folders import runs_parser, tables_of_runs  # noqa: E402

from musclewalk.analysis.sources import table  # noqa: E402


def main(argv=None) -> int:
    ap = runs_parser(__doc__.splitlines()[0])
    ap.add_argument(
        "--min", type=float, default=0.05, help="the smallest mean feedback term shown (default 0.05)"
    )
    ap.add_argument("--duration", type=float, default=10.0, help="simulated time, s (default 10)")
    args = ap.parse_args(argv)

    def run_table(run: Path, work: Path) -> str:
        analysis, _ = simulate_and_analyze(run, work, args.duration)
        return table(str(run), analysis, args.min)

    return tables_of_runs(ap, args, run_table, "musclewalk-sources-")


if __name__ == "__main__":
    sys.exit(main())
