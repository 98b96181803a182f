"""Constants shared by the pipeline stages (one place, imported everywhere)."""

GRAVITY = 9.80665  # m/s^2, standard gravity: the models' gravity and body weight
# the controller's unit of its normalized parameters (speeds in sqrt(g L), times in sqrt(L / g));
# 9.81 as the committed parameter files were optimized with it
CONTROL_NORMALIZATION_GRAVITY = 9.81
CONTROL_INTERVAL = 0.005  # s: excitations are computed every 5 ms (paper §4), also the
# longest control interval allowed
# s: a fixed integrator step lies in this range (within one control step)
FIXED_STEP_RANGE = (1e-5, CONTROL_INTERVAL)
