"""Touch-down detection of `musclewalk analyze`."""
import numpy as np

from musclewalk.analysis.summary import alternating_strikes


def test_a_bouncing_foot_does_not_start_a_new_step():
    t = np.arange(12) * 0.1
    right = np.array([0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 0], bool)   # touch-downs 0.1, 0.4 (bounce), 0.8
    left = np.array([1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1], bool)    # touch-downs 0.5, 1.0
    r, l = alternating_strikes(t, right, left)
    np.testing.assert_allclose(r, [0.1, 0.8])
    np.testing.assert_allclose(l, [0.5, 1.0])


def test_no_contact_changes_give_no_strikes():
    t = np.arange(5) * 0.1
    r, l = alternating_strikes(t, np.ones(5, bool), np.zeros(5, bool))
    assert r.size == 0 and l.size == 0
