"""The driver's warning when an objective ranks a fall above a walker (driver
Optimization._fall_ranked_first): CMA-ES ranks by the objective alone, so an objective whose terms
charge walking more than a fall's charge for the time lost moves the search toward falls (issue
14's fifty-ninth try). history.csv counts each generation's walkers and marks such generations;
log.txt says in how many."""

import pandas as pd
import pytest

from musclewalk.optimize.driver import Optimization
from musclewalk.optimize.evaluate import EvaluationResult


class FirstFalls:
    """A stand-in evaluator: candidate 0 of every generation falls after 2 s with ``fall_score``,
    the others walk their t_max with 60 + their index."""

    def __init__(self, terms, fall_score, walkers=True):
        self.terms, self.fall_score, self.walkers = terms, fall_score, walkers

    def map(self, task, values):
        out = []
        for i, _ in enumerate(values):
            falls = i == 0 or not self.walkers
            score = self.fall_score + i if falls else 60.0 + i
            terms = dict.fromkeys(self.terms, score / len(self.terms))
            out.append(EvaluationResult(score, terms, dict(terms), 2.0 if falls else 0.3, falls, None, 0.0))
        return out

    def close(self):
        pass


def run(small_settings, out, monkeypatch, evaluator_args):
    import musclewalk.optimize.driver as driver

    terms = driver.Objective.load("geijtenbeek2013").term_names
    monkeypatch.setattr(driver, "make_evaluator", lambda *a, **k: FirstFalls(terms, *evaluator_args))
    Optimization(small_settings(generations=3, seed=5, popsize=6), out, progress=False).run()
    return pd.read_csv(out / "history.csv"), (out / "log.txt").read_text()


def test_a_fall_scoring_below_the_walkers_is_counted_and_warned_of(small_settings, tmp_path, monkeypatch):
    history, log = run(small_settings, tmp_path / "r", monkeypatch, (50.0,))
    assert list(history["walkers"]) == [5, 5, 5]
    assert list(history["fall_ranked_first"]) == [1, 1, 1]
    assert list(history["best"]) == [61.0] * 3  # the reported best is still a walker
    assert "falls ranked above walkers: in 3 of 3 generations (the last: 1, 2, 3)" in log


@pytest.mark.parametrize(
    ("args", "walkers"),
    [((90.0,), [5, 5, 5]), ((50.0, False), [0, 0, 0])],
    ids=["falls score above the walkers", "nothing walks"],
)
def test_no_warning_when_the_falls_score_above_the_walkers_or_none_walks(
    small_settings, tmp_path, monkeypatch, args, walkers
):
    history, log = run(small_settings, tmp_path / "r", monkeypatch, args)
    assert list(history["walkers"]) == walkers
    assert list(history["fall_ranked_first"]) == [0, 0, 0]
    assert "falls ranked above walkers" not in log
