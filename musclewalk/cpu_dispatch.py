"""The same simulation, to the last bit, on every x86-64 machine with AVX2.

numpy (>= 2) runs some of its loops, the transcendental functions among them, in AVX-512 code on
CPUs that have it, and OpenBLAS picks its kernels by the CPU it finds; both change the last bits
of a result. A walking gait is chaotic in those bits: on an AVX-512 machine the committed walkers
re-simulate to other objectives, and optimized gaits that walk 10 s elsewhere fall after 5 s.
Every result in the repository was made with numpy's AVX2 loops (X86_V3) and OpenBLAS' Haswell
kernels, so musclewalk pins both on x86-64 CPUs with AVX2 and FMA: importing the package sets the
environment variables numpy and OpenBLAS read when they load (children inherit them), and the
simulator refuses to run in a process whose numpy was loaded before that with AVX-512 loops on.
On other CPUs (without AVX2, or ARM) nothing is pinned and results may differ in their last bits.

This module imports neither numpy nor OpenSim.
"""

from __future__ import annotations

import os
import platform
import sys

# numpy's dispatch targets above X86_V3 (numpy 2.x names; unknown names are ignored by numpy)
NUMPY_DISABLED = ("X86_V4", "AVX512_ICL", "AVX512_SPR", "AVX512_SKX", "AVX512F")
OPENBLAS_CORETYPE = "Haswell"
NUMPY_VARIABLE = "NPY_DISABLE_CPU_FEATURES"
OPENBLAS_VARIABLE = "OPENBLAS_CORETYPE"


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def pinnable(machine: str | None = None, flags: set[str] | None = None) -> bool:
    """True on an x86-64 CPU with AVX2 and FMA, where the pinned code paths exist."""
    machine = (machine or platform.machine()).lower()
    if machine not in ("x86_64", "amd64"):
        return False
    flags = _cpu_flags() if flags is None else flags
    return {"avx2", "fma"} <= flags


def pin_cpu_dispatch(environ=None, machine: str | None = None, flags: set[str] | None = None) -> bool:
    """Set numpy's and OpenBLAS' variables in ``environ`` (default os.environ); True if pinned."""
    environ = os.environ if environ is None else environ
    if not pinnable(machine, flags):
        return False
    environ[OPENBLAS_VARIABLE] = OPENBLAS_CORETYPE
    if environ.get("NPY_ENABLE_CPU_FEATURES"):
        # numpy refuses to load with both set; the simulator's check judges what this one enables
        return False
    disabled = environ.get(NUMPY_VARIABLE, "").replace(",", " ").split()
    environ[NUMPY_VARIABLE] = " ".join(dict.fromkeys(disabled + list(NUMPY_DISABLED)))
    return True


def active_above_avx2(features: dict | None = None) -> list[str]:
    """numpy's dispatch targets above X86_V3 that this process runs (empty when pinned)."""
    if features is None:
        if "numpy" not in sys.modules:
            return []
        from numpy._core import _multiarray_umath

        features = _multiarray_umath.__cpu_features__
    return [name for name in ("X86_V4", "AVX512_SKX", "AVX512_ICL", "AVX512_SPR") if features.get(name)]


class CpuDispatchError(RuntimeError):
    pass


def check_cpu_dispatch(features: dict | None = None) -> None:
    """Refuse to simulate with numpy loops the repository's results were not made with."""
    active = active_above_avx2(features)
    if active:
        raise CpuDispatchError(
            f"numpy was loaded with {', '.join(active)} loops on, before musclewalk could pin them: "
            "simulations would differ from those on other machines (and from the committed results) "
            "in their last bits, and a gait is chaotic in them. Import musclewalk before numpy, or "
            f"start Python with {NUMPY_VARIABLE}='{' '.join(NUMPY_DISABLED)}' "
            f"{OPENBLAS_VARIABLE}={OPENBLAS_CORETYPE} (musclewalk.cpu_dispatch)"
        )


def describe() -> str:
    """One line for logs: the code paths this process's numerics run."""
    active = active_above_avx2()
    numpy_paths = ", ".join(active) if active else "up to X86_V3 (AVX2)"
    coretype = os.environ.get(OPENBLAS_VARIABLE, "chosen by OpenBLAS")
    return f"numpy loops {numpy_paths}; OpenBLAS kernels {coretype}"
