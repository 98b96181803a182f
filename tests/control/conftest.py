import pytest
from control_synth import build_creature


@pytest.fixture
def creature():
    return build_creature()
