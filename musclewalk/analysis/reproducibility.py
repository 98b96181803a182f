"""Whether a simulation reproduces a committed one to the last bit: what a `musclewalk simulate`
folder produced (its end, distance and a SHA-256 of its recorded states), compared field by field
with a record of the committed walkers (docs/tables/reproducibility.json, written by
analysis/reproducibility.py). The results do not change with machine load; this is how that is
checked, by the script beside CPU burners and by the workflow's report on every `snakemake all`."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

COMPARED = ("simulated_time", "terminated", "termination_reason", "distance", "states_sha256")


def states_digest(states_sto: Path) -> str:
    """SHA-256 of a states.sto's column names and rows (the part after ``endheader``), so that the
    header's bookkeeping does not enter it."""
    text = Path(states_sto).read_bytes()
    marker = b"endheader\n"
    at = text.find(marker)
    if at < 0:
        raise ValueError(f"{states_sto}: no 'endheader' line: not an OpenSim storage file")
    return hashlib.sha256(text[at + len(marker) :]).hexdigest()


def record_of(sim: Path) -> dict:
    """What one `musclewalk simulate` folder produced: the compared fields and its wall time."""
    sim = Path(sim)
    summary = json.loads((sim / "summary.json").read_text())
    return {
        "simulated_time": summary["simulated_time"],
        "terminated": summary["terminated"],
        "termination_reason": summary["termination_reason"],
        "distance": summary["distance"],
        "states_sha256": states_digest(sim / "states.sto"),
        "wall_per_simulated_second": summary["wall_per_simulated_second"],
    }


def differences(expected: dict, found: dict) -> list[str]:
    """Per run of ``expected`` (run name -> record), each compared field that ``found`` does not
    give equal to the last bit, as 'run: field expected X, found Y'; a run missing from ``found``
    is one line."""
    lines = []
    for run, want in expected.items():
        got = found.get(run)
        if got is None:
            lines.append(f"{run}: not re-simulated")
            continue
        for field in COMPARED:
            if want.get(field) != got.get(field):
                lines.append(f"{run}: {field} expected {want.get(field)!r}, found {got.get(field)!r}")
    return lines


def parameter_defaults(model: Path) -> dict:
    """Each controller and initial-state parameter's default for the model (an .osim with its
    .meta.json): what a parameter file that leaves out a controller feature beyond the paper
    runs with."""
    from ..optimize.space import ParameterSpace

    return {e.name: e.default for e in ParameterSpace.of_creature(str(model)).entries}


def controller_values(best: Path, defaults: dict) -> tuple:
    """The values a best.json runs with: its controller and initial state over ``defaults`` (a
    parameter it leaves out is at its default; a newer optimizer writes every feature's), and
    its model section as it is."""
    parameters = json.loads(Path(best).read_text())["parameters"]
    values = {**defaults, **parameters["controller"], **parameters["initial_state"]}
    return {k: v for k, v in values.items() if k in defaults}, parameters.get("model")


def reproduction_status(sim: Path, best: Path, committed: Path, record: dict | None) -> str:
    """One line on whether the simulation in ``sim`` of the controller ``best`` (a best.json)
    reproduces the committed run folder ``committed`` (models/optimized/<run>) as ``record``
    (the committed record's entry for it, None when it has none) has it: identical, the fields
    that differ, or why there is nothing to compare (no record, another controller than the
    committed one, another duration)."""
    committed = Path(committed)
    if record is None or not (committed / "best.json").is_file():
        return "no committed record"
    defaults = parameter_defaults(committed / "optimized.osim")
    if controller_values(best, defaults) != controller_values(committed / "best.json", defaults):
        return "another controller than the committed one (the run's search found a better best)"
    found = record_of(sim)
    if found["simulated_time"] != record["simulated_time"] and not found["terminated"]:
        return (
            f"another duration ({found['simulated_time']:g} s; the record's {record['simulated_time']:g} s)"
        )
    lines = differences({"run": record}, {"run": found})
    if lines:
        return "DIFFERS from the committed record: " + "; ".join(line.removeprefix("run: ") for line in lines)
    return (
        f"identical to the last bit (distance {found['distance']!r} m, states {found['states_sha256'][:16]})"
    )
