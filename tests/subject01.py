"""OpenSim's subject01 walking trial (../shared/reference, beside the repository): the lab trial
that the comparison tests read."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SUBJECT = REPO.parent / "shared" / "reference" / "opensim-gait10dof18musc"
TRIAL = [
    SUBJECT / "subject01.osim",
    SUBJECT / "subject01_walk_IK.mot",
    SUBJECT / "subject01_walk_grf.mot",
    SUBJECT / "subject01_walk_grf.xml",
]
needs_subject = pytest.mark.skipif(not SUBJECT.is_dir(), reason="../shared/reference missing")
