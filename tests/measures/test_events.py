"""Touch-downs of alternating feet, the one step detector of the objective and `analyze`."""

import numpy as np
import pytest

from musclewalk.measures.events import StepDetector, contact_threshold, gait_pattern, touch_downs

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


def _feet(t, period, duty, left_shift):
    """Vertical GRF (n, 2) of feet on the ground for ``duty`` of each ``period``, the left one
    ``left_shift`` of a period after the right."""
    phase_r = (t / period) % 1.0
    phase_l = (t / period - left_shift) % 1.0
    return np.column_stack([(phase_r < duty) * 800.0, (phase_l < duty) * 800.0])


@pytest.mark.parametrize(
    "duty, shift, pattern, flight, double",
    [
        (0.6, 0.5, "walk", False, True),  # 60 % stance: double support, no flight
        (0.35, 0.5, "run", True, False),  # 35 % stance: flight twice per stride
        (0.4, 0.0, "hop", True, True),  # both feet together
    ],
)
def test_gait_pattern_tells_walking_running_and_hopping_apart(duty, shift, pattern, flight, double):
    t = np.arange(0.0, 6.0, 0.005)
    result = gait_pattern(t, _feet(t, 1.0, duty, shift), 40.0)
    assert result["pattern"] == pattern
    assert result["strides"] >= 4
    assert (result["strides_with_flight"] == result["strides"]) is flight
    assert (result["strides_with_double_support"] == result["strides"]) is double
    assert (result["flight_fraction"] > 0) is flight
    if pattern == "run":
        assert result["flight_fraction"] == pytest.approx(0.3, abs=0.02)  # 2 x (0.5 - 0.35)
    if pattern == "walk":
        assert result["double_support_fraction"] == pytest.approx(0.2, abs=0.02)
        assert result["left_touch_down_phase"] == pytest.approx(0.5, abs=0.01)


def test_gait_pattern_needs_two_right_touch_downs():
    t = np.arange(0.0, 1.0, 0.005)
    assert gait_pattern(t, np.zeros((len(t), 2)), 40.0) == {"pattern": None, "strides": 0}
