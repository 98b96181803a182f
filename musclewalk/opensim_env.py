"""Import OpenSim quietly: warnings only, and no ``opensim.log`` in the working directory."""

from __future__ import annotations

_osim = None


def import_opensim():
    global _osim
    if _osim is None:
        import opensim

        opensim.Logger.setLevelString("warn")
        opensim.Logger.removeFileSink()
        _osim = opensim
    return _osim
