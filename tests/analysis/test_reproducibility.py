"""musclewalk.analysis.reproducibility: a simulation against the committed record, field by field
(the record itself is written and checked for real in tests/test_analysis_scripts.py)."""

import json

import pytest

from musclewalk.analysis import reproducibility as rep

ROWS = "time\tq\n0\t1\n0.005\t2\n"
RECORD = {"simulated_time": 10.0, "terminated": False, "termination_reason": None,
          "distance": 12.27800216835705, "states_sha256": "ab",
          "wall_per_simulated_second": 1.0}  # fmt: skip


def _simulation(folder, distance=12.27800216835705, simulated_time=10.0, header="States\nnRows=2\n"):
    folder.mkdir(parents=True)
    (folder / "states.sto").write_text(header + "endheader\n" + ROWS)
    summary = {"simulated_time": simulated_time, "terminated": simulated_time < 10.0,
               "termination_reason": None if simulated_time >= 10.0 else "com_height",
               "distance": distance, "wall_per_simulated_second": 2.5}  # fmt: skip
    (folder / "summary.json").write_text(json.dumps(summary))
    return folder


def _best(path, parameters):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"parameters": parameters}))
    return path


def test_the_states_digest_skips_the_header(tmp_path):
    a = _simulation(tmp_path / "a")
    b = _simulation(tmp_path / "b", header="Other\nversion=1\nnRows=2\n")
    assert rep.states_digest(a / "states.sto") == rep.states_digest(b / "states.sto")
    (tmp_path / "c.sto").write_text("no header\n" + ROWS)
    with pytest.raises(ValueError, match="endheader"):
        rep.states_digest(tmp_path / "c.sto")


def test_differences_name_each_field_but_the_wall_time():
    assert rep.differences({"r": RECORD}, {"r": {**RECORD, "wall_per_simulated_second": 3.0}}) == []
    moved = {**RECORD, "distance": 12.278002168357052}
    assert rep.differences({"r": RECORD, "gone": RECORD}, {"r": moved}) == [
        "r: distance expected 12.27800216835705, found 12.278002168357052",
        "gone: not re-simulated",
    ]


def test_reproduction_status_compares_only_the_committed_controller(tmp_path, monkeypatch):
    """A best.json that leaves out a feature's parameter (written before the feature existed) runs
    with its default: the same controller as one that writes the default."""
    monkeypatch.setattr(rep, "parameter_defaults", lambda model: {"a": 0.0, "feature": 0.0})
    committed = tmp_path / "models/optimized/Run"
    _best(committed / "best.json", {"controller": {"a": 1.0}, "initial_state": {}})
    same = _best(
        tmp_path / "results/optimize/Run/best.json",
        {"controller": {"a": 1.0, "feature": 0.0}, "initial_state": {}},
    )
    other = _best(
        tmp_path / "other/best.json", {"controller": {"a": 1.0, "feature": 1e-15}, "initial_state": {}}
    )
    sim = _simulation(tmp_path / "sim")
    record = {**rep.record_of(sim), "wall_per_simulated_second": 0.9}
    assert rep.reproduction_status(sim, same, committed, record).startswith("identical to the last bit")
    assert rep.reproduction_status(sim, same, committed, None) == "no committed record"
    assert rep.reproduction_status(sim, other, committed, record).startswith("another controller")
    moved = _simulation(tmp_path / "moved", distance=12.278002168357052)
    status = rep.reproduction_status(moved, same, committed, record)
    assert status.startswith("DIFFERS") and "distance expected 12.27800216835705" in status
    short = _simulation(tmp_path / "short", simulated_time=20.0)
    assert rep.reproduction_status(short, same, committed, record).startswith("another duration (20 s")
    fell = _simulation(tmp_path / "fell", simulated_time=4.2)
    assert "simulated_time expected 10.0, found 4.2" in rep.reproduction_status(fell, same, committed, record)
