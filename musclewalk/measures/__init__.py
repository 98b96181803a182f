"""Measures of a simulated gait, written once and used by the optimizer's objective and by the
analysis (pipeline stage between `sim` and `optimize`; pure numpy, never imports OpenSim).

- `events`      touch-downs of alternating feet from the vertical ground reaction force
- `integral`    the time integral of per-control-step samples (one convention everywhere)
- `metabolics`  metabolic energy rate of Wang et al. 2012
- `gait`        one class per measure of a control step (speed, head, slide, effort)
- `objective`   a weighted, thresholded set of measures read from an objective file
                (``models/objectives/*.yaml``) and the simulation observer that scores a run
"""
