"""What the analysis/ scripts that read one optimization run folder (or built models) share: the
check that it is one, and printing result tables that may also go to a file."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Callable


def runs_parser(description: str, runs_help: str = "run folders (best.json + optimized.osim)"):
    """The command line of a script over run folders that it re-simulates: RUN [RUN ...],
    --out FILE.md (the tables also written there), --work DIR (the simulations kept there)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("runs", type=Path, nargs="+", help=runs_help)
    ap.add_argument("--work", type=Path, help="keep the simulations here (default: a temp folder)")
    ap.add_argument("--out", type=Path, help="also write the tables to this Markdown file")
    return ap


def require_run_folder(ap: argparse.ArgumentParser, run: Path) -> None:
    """A usage error (exit 2) unless ``run`` holds best.json and optimized.osim."""
    for name in ("best.json", "optimized.osim"):
        if not (run / name).is_file():
            ap.error(f"{run / name}: not found (a run folder holds best.json and optimized.osim)")


def run_objective(run: Path, best: dict):
    """The objective the run was optimized with: as its settings.json stored it, else by name."""
    import json

    from musclewalk.measures.objective import Objective

    settings = run / "settings.json"
    if settings.is_file():
        stored = json.loads(settings.read_text())
        if stored.get("objective_definition"):
            return Objective.from_dict(
                stored["objective_definition"], Path(stored["objective"]).stem, source=str(settings)
            )
    return Objective.load(best.get("objective_name") or "geijtenbeek2013")


class BestScorer:
    """A run folder's best as an optimization evaluates a candidate: simulated straight at the run's
    speed for ``duration`` s and scored by ``objective`` (the run's own when None). ``values`` are
    the best's controller and initial-state values; ``score(values)`` scores any such set."""

    def __init__(self, run: Path, duration: float, objective=None):
        import json

        from musclewalk.sim.runner import Simulator
        from musclewalk.sim.scenario import Scenario

        self.best = json.loads((run / "best.json").read_text())
        params = self.best["parameters"]
        self.values = {**params["controller"], **params["initial_state"]}
        self.objective = objective or run_objective(run, self.best)
        self.scenario = Scenario(speed=self.best["speed"], duration=duration)
        self._simulator = Simulator(run / "optimized.osim")

    def score(self, values: dict | None = None):
        """The ScoredRun of ``values`` (the best's own when None)."""
        from musclewalk.measures.objective import scored_run

        return scored_run(
            self._simulator, self.scenario, self.values if values is None else values, self.objective
        )


def emit(text: str, out: Path | None) -> None:
    """Print ``text``; also write it to ``out`` when given (`write_whole`)."""
    print(text)
    if out:
        write_whole(text, out)


def write_whole(text: str, out: Path) -> None:
    """Write ``text`` to ``out`` whole or not at all (a temporary file renamed)."""
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(out)


def model_tables(
    script: str, models: list[Path], table: Callable[[Path], list[str]], out: Path | None
) -> int:
    """Exit status of a script over built .osim models: each model's table (``table(path)``, its
    lines) `emit`-ted together; a missing model file is one error naming it (2)."""
    lines = []
    for path in models:
        if not path.is_file():
            print(f"{script}: error: {path}: no such model file", file=sys.stderr)
            return 2
        lines += [*table(path), ""]
    emit("\n".join(lines), out)
    return 0


def tables_of_runs(
    ap: argparse.ArgumentParser, args: argparse.Namespace, table: Callable[[Path, Path], str], prefix: str
) -> int:
    """Exit status of a script over run folders it re-simulates: each run checked
    (`require_run_folder`), then its table (``table(run, work)``, simulating into ``work``: --work or
    a temporary folder named with ``prefix``) printed as it comes and all of them written to --out
    together."""
    for run in args.runs:
        require_run_folder(ap, run)
    with tempfile.TemporaryDirectory(prefix=prefix) as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        out = []
        for run in args.runs:
            out.append(table(run, work))
            print(out[-1], flush=True)
    if args.out:
        write_whole("\n".join(out), args.out)
    return 0
