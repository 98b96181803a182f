"""musclewalk: muscle-driven locomotion synthesis for bipedal creatures in OpenSim.

Pipeline stages (imports run one way): model -> control -> sim -> optimize -> analysis.
"""

__version__ = "0.1.0"
