"""musclewalk: muscle-driven locomotion synthesis for bipedal creatures in OpenSim.

Pipeline stages (imports run one way): model -> control -> sim -> optimize -> analysis.
"""

from .cpu_dispatch import pin_cpu_dispatch

# before numpy and OpenSim load: the same numerics on every x86-64 machine (cpu_dispatch)
pin_cpu_dispatch()

__version__ = "0.1.0"
