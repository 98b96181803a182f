"""Which bodies human reference data referees."""

from pathlib import Path


def test_only_the_human_templates_make_a_human_body():
    from musclewalk.analysis.reference import human_bodied

    optimized = Path(__file__).resolve().parents[2] / "models" / "optimized"
    bodies = {
        run: human_bodied(optimized / run / "optimized.meta.json")
        for run in ("Human-walk-1.3", "HumanLegs-walk-1.3", "Ostrich-walk-1.2", "LongLegs-walk-2.0")
    }
    assert bodies == {
        "Human-walk-1.3": True,
        "HumanLegs-walk-1.3": True,
        "Ostrich-walk-1.2": False,
        "LongLegs-walk-2.0": False,
    }
