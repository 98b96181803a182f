"""Metabolic rate (Wang et al. 2012) against values computed by hand from the documented
formulas of musclewalk.measures.metabolics."""

import math

import numpy as np
import pytest

from musclewalk.measures.metabolics import fiber_length_factor, metabolic_rate, metabolic_rates, muscle_masses

# muscle A: F_max 1000 N, l_opt 0.10 m; muscle B: F_max 2500 N, l_opt 0.05 m
M_A = 1000.0 / 0.25e6 * 1059.7 * 0.10  # 0.42388 kg
M_B = 2500.0 / 0.25e6 * 1059.7 * 0.05  # 0.529850 kg


def test_muscle_masses():
    m = muscle_masses([1000.0, 2500.0], [0.10, 0.05])
    assert m == pytest.approx([0.42388, 0.52985], rel=1e-12)


def test_fiber_length_factor_pieces():
    l = [0.2, 0.5, 0.75, 1.0, 1.25, 1.5, 1.7]
    #     0.5  0.5  l     l    3-2l  3-2l  0
    assert fiber_length_factor(l) == pytest.approx([0.5, 0.5, 0.75, 1.0, 0.5, 0.0, 0.0])


def test_two_muscles_shortening_and_lengthening_by_hand():
    body_mass = 70.0
    mass = np.array([M_A, M_B])
    u = [0.5, 1.2]  # B's excitation is clipped to 1
    a = [0.3, 0.9]
    l = [0.8, 1.2]  # g = 0.8 (0.5 < l <= 1) and 3 - 2.4 = 0.6 (1 < l <= 1.5)
    v = [-0.2, 0.3]  # A shortens at 0.2 m/s, B lengthens
    F = [600.0, 2000.0]
    F_act = [500.0, 1800.0]

    s45, c45 = math.sqrt(0.5), math.sqrt(0.5)  # sin, cos of pi/2 * 0.5
    a_heat_A = M_A * (40 * 0.5 * s45 + 133 * 0.5 * (1 - c45))
    a_heat_B = M_B * (40 * 0.5 * 1.0 + 133 * 0.5 * (1 - 0.0))  # u = 1: 86.5 m
    m_heat_A = M_A * 0.8 * (74 * 0.5 * math.sin(0.15 * math.pi) + 111 * 0.5 * (1 - math.cos(0.15 * math.pi)))
    m_heat_B = M_B * 0.6 * (74 * 0.5 * math.sin(0.45 * math.pi) + 111 * 0.5 * (1 - math.cos(0.45 * math.pi)))
    s_heat_A = 0.25 * 600.0 * 0.2  # 30 W
    w_A = 500.0 * 0.2  # 100 W
    # B lengthens: no shortening heat and no positive work

    act, maint, short, work = metabolic_rates(mass, u, a, l, v, F, F_act)
    assert act == pytest.approx([a_heat_A, a_heat_B], rel=1e-12)
    assert a_heat_B == pytest.approx(86.5 * M_B)
    assert maint == pytest.approx([m_heat_A, m_heat_B], rel=1e-12)
    assert short == pytest.approx([30.0, 0.0])
    assert work == pytest.approx([100.0, 0.0])

    total = 1.51 * body_mass + a_heat_A + a_heat_B + m_heat_A + m_heat_B + s_heat_A + w_A
    assert metabolic_rate(body_mass, mass, u, a, l, v, F, F_act) == pytest.approx(total, rel=1e-12)
    # numerically: 105.7 basal + 14.251 + 45.832 activation + 7.747 + 26.502 maintenance
    # + 30 shortening + 100 work
    assert total == pytest.approx(330.03184, abs=1e-4)


def test_rest_is_basal_and_negative_active_force_does_no_work():
    mass = np.array([M_A, M_B])
    zero = [0.0, 0.0]
    # no excitation, no activation, no motion: only the basal rate
    assert metabolic_rate(80.0, mass, zero, zero, [1.0, 1.0], zero, [0.0, 0.0], zero) == pytest.approx(
        1.51 * 80.0
    )
    # negative excitation/activation clip to 0; a negative active force gives no positive work
    _, _, short, work = metabolic_rates(
        mass, [-1.0, -1.0], [-1.0, -1.0], [1.0, 1.0], [-1.0, -1.0], [100.0, 100.0], [-50.0, 40.0]
    )
    assert short == pytest.approx([25.0, 25.0])
    assert work == pytest.approx([0.0, 40.0])
    # maximal heat of a fully excited and active muscle at optimal length: (86.5 + 92.5) m
    act, maint, _, _ = metabolic_rates(mass, [1, 1], [1, 1], [1, 1], [0, 0], [0, 0], [0, 0])
    assert act + maint == pytest.approx(179.0 * mass)
    # beyond 1.5 l_opt there is no maintenance heat
    _, maint, _, _ = metabolic_rates(mass, [1, 1], [1, 1], [1.6, 2.0], [0, 0], [0, 0], [0, 0])
    assert maint == pytest.approx([0.0, 0.0])
