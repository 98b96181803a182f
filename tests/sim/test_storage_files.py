"""OpenSim Storage text files (.sto / .mot): what `write_storage` writes, `read_storage` reads."""

import numpy as np
import pytest

from musclewalk.sim.outputs import read_storage, write_storage


@pytest.mark.parametrize("in_degrees", [True, False])
def test_storage_round_trip(tmp_path, in_degrees):
    time = np.array([0.0, 0.005, 0.01])
    data = np.array([[1.5, -2.25e-7], [3.0, 12345.678], [-0.125, 0.0]])
    path = tmp_path / "kinematics.mot"
    write_storage(path, "kinematics", ["hip_flexion_r", "knee_angle_r"], time, data, in_degrees)
    table = read_storage(path)
    assert list(table.columns) == ["time", "hip_flexion_r", "knee_angle_r"]
    assert table.attrs["degrees"] is in_degrees
    np.testing.assert_array_equal(table["time"], time)
    np.testing.assert_allclose(table[["hip_flexion_r", "knee_angle_r"]].to_numpy(), data, rtol=1e-8)


def test_a_file_without_header_end_is_refused(tmp_path):
    path = tmp_path / "broken.sto"
    path.write_text("states\nversion=1\ntime\ta\n0\t1\n")
    with pytest.raises(ValueError, match="endheader"):
        read_storage(path)
