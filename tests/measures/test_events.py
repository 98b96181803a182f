"""Touch-downs of alternating feet, the one step detector of the objective and `analyze`."""

import numpy as np

from musclewalk.measures.events import StepDetector, contact_threshold, touch_downs

W = 400.0  # N of a loaded foot; the contact threshold below is 20 N


def test_a_bouncing_foot_does_not_start_a_new_step():
    t = np.arange(12) * 0.1
    right = np.array([0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 0], bool)  # touch-downs 0.1, 0.4 (bounce), 0.8
    left = np.array([1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1], bool)  # touch-downs 0.5, 1.0
    r, l = touch_downs(t, np.column_stack([right, left]) * W, 20.0)
    np.testing.assert_allclose(r, [0.1, 0.8])
    np.testing.assert_allclose(l, [0.5, 1.0])


def test_no_contact_changes_give_no_strikes():
    t = np.arange(5) * 0.1
    r, l = touch_downs(t, np.column_stack([np.ones(5), np.zeros(5)]) * W, 20.0)
    assert r.size == 0 and l.size == 0


def test_a_force_at_the_threshold_is_no_contact_and_both_feet_landing_together_count_in_order():
    detector = StepDetector(contact_threshold(50.0))
    assert contact_threshold(50.0) == 0.05 * 50.0 * 9.80665
    assert detector.update([0.0, 0.0]) == []  # the starting state
    assert detector.update([contact_threshold(50.0)] * 2) == []  # not above the threshold
    assert detector.update([W, W]) == [0, 1]  # right first, then left
    assert detector.update([0.0, W]) == []
    assert detector.update([W, W]) == [0]  # alternates with the left
