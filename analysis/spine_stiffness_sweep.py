"""How stiff must the Human's passive spine be for the HumanLegs walking controller to carry over?
(README, "Why a chain".)

Evaluates one parameter file (default: the chain's start, HumanLegs' walking controller, routing
and muscle properties carried over to the Human with the spine flexion/bending gains at the top
of their normalized range) once per spine stiffness, with the optimizer's own Evaluator, on a
Human model whose spine flexion/bending passive bounds are scaled as `--scale-passive` scales
them: the same normalized gain (the top of the range, 240 N m/rad in the template) is a stiffer
or softer spring. Prints a Markdown table (stiffness, survival, objective) and writes it with
--out.

    python3.11 analysis/spine_stiffness_sweep.py [--params FILE] [--stiffness 60 240 ...] [--out F]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

# musclewalk first: importing it pins numpy's CPU dispatch before numpy loads (musclewalk.cpu_dispatch)
import musclewalk  # noqa: E402, F401, I001
import numpy as np  # noqa: E402

from musclewalk.model.build import build_creature  # noqa: E402
from musclewalk.model.meta import load_meta, meta_path, scale_passive_bounds, write_meta  # noqa: E402
from musclewalk.optimize.evaluate import EvaluationTask, Evaluator  # noqa: E402
from musclewalk.optimize.space import ParameterSpace  # noqa: E402
from musclewalk.sim.bridge import control_model_from_meta  # noqa: E402
from musclewalk.sim.parameters import read_parameter_sections  # noqa: E402

DEFAULT_PARAMS = REPO / "models/optimized/Human-walk-1.3/earlier/smooth-contact/warm_start.json"
TOP_OF_RANGE = 240.0  # N m/rad: the template's upper bound of the spine flexion/bending gains
GAINS = ("spine_flexion", "spine_bending")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--params", type=Path, default=DEFAULT_PARAMS)
    ap.add_argument(
        "--stiffness", type=float, nargs="+", default=[60, 240, 330, 390, 420, 480], help="N m/rad"
    )
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--out", type=Path, help="write the Markdown table here too")
    args = ap.parse_args(argv)
    _, params = read_parameter_sections(args.params)
    rows = ["| spine flexion/bending springs, N m/rad | survives, s | objective |", "|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "Human.osim"
        build_creature("Human", None, base)
        for k in args.stiffness:
            factor = k / TOP_OF_RANGE
            model = Path(tmp) / f"Human-{k:g}.osim"
            model.write_bytes(base.read_bytes())
            write_meta(meta_path(model), scale_passive_bounds(load_meta(base), {g: factor for g in GAINS}))
            meta = load_meta(model)
            space = ParameterSpace(meta, control_model_from_meta(meta, 0.005))
            values = space.values(np.zeros(len(space)))
            values.update({n: v for n, v in space.flatten(params).items() if n in values})
            result = Evaluator(str(model), meta).evaluate(
                EvaluationTask(str(model), 1.3, args.duration), values
            )
            survived = (
                f"{result.simulated_time:.2f}" if result.terminated else f"{args.duration:g} (no termination)"
            )
            rows.append(f"| {k:g} | {survived} | {result.score:.2f} |")
            print(rows[-1], flush=True)
    table = "\n".join(rows) + "\n"
    print(table)
    if args.out:
        args.out.write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
