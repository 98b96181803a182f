"""musclewalk pins numpy's and OpenBLAS' CPU-dependent code paths so that a simulation gives the
same bits on every x86-64 machine with AVX2 (an AVX-512 machine re-simulated the committed walkers
to other objectives before), and refuses to simulate when numpy was loaded unpinned."""

import os
import subprocess
import sys

import pytest

from musclewalk.cpu_dispatch import (
    NUMPY_DISABLED,
    CpuDispatchError,
    active_above_avx2,
    check_cpu_dispatch,
    pin_cpu_dispatch,
)

AVX2 = {"sse2", "avx", "avx2", "fma"}


def test_pinning_sets_numpy_and_openblas_and_keeps_what_the_user_disabled():
    environ = {"NPY_DISABLE_CPU_FEATURES": "AVX2,FOO", "OPENBLAS_CORETYPE": "SkylakeX"}
    assert pin_cpu_dispatch(environ, machine="x86_64", flags=AVX2)
    disabled = environ["NPY_DISABLE_CPU_FEATURES"].split()
    assert disabled[:2] == ["AVX2", "FOO"] and set(NUMPY_DISABLED) <= set(disabled)
    assert environ["OPENBLAS_CORETYPE"] == "Haswell"
    # idempotent: a child process that imports musclewalk again adds nothing
    again = dict(environ)
    pin_cpu_dispatch(again, machine="x86_64", flags=AVX2)
    assert again == environ


def test_a_user_enabled_feature_list_is_left_to_numpy_and_the_check():
    """numpy refuses to load with both NPY_ENABLE_ and NPY_DISABLE_CPU_FEATURES set."""
    environ = {"NPY_ENABLE_CPU_FEATURES": "X86_V3"}
    assert not pin_cpu_dispatch(environ, machine="x86_64", flags=AVX2)
    assert "NPY_DISABLE_CPU_FEATURES" not in environ and environ["OPENBLAS_CORETYPE"] == "Haswell"


@pytest.mark.parametrize(
    "machine, flags", [("aarch64", set()), ("arm64", set()), ("x86_64", {"sse2", "avx"})]
)
def test_nothing_is_pinned_where_the_pinned_paths_do_not_exist(machine, flags):
    environ = {}
    assert not pin_cpu_dispatch(environ, machine=machine, flags=flags)
    assert environ == {}


def test_the_simulator_refuses_numpy_with_avx512_loops_on():
    with pytest.raises(CpuDispatchError, match="X86_V4.*Import musclewalk before numpy"):
        check_cpu_dispatch({"X86_V4": True, "AVX512_SKX": True, "AVX2": True})
    check_cpu_dispatch({"X86_V4": False, "AVX2": True})
    assert active_above_avx2({"AVX512_ICL": True}) == ["AVX512_ICL"]


def test_importing_musclewalk_first_leaves_numpy_at_avx2_and_children_inherit_it():
    code = (
        "import musclewalk, os, numpy\n"
        "from musclewalk.cpu_dispatch import active_above_avx2, pinnable\n"
        "print(active_above_avx2(), pinnable(), os.environ.get('OPENBLAS_CORETYPE'))"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("NPY_DISABLE_CPU_FEATURES", "OPENBLAS_CORETYPE")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    active, pinnable, coretype = out.stdout.split()
    assert active == "[]"
    assert coretype == ("Haswell" if pinnable == "True" else "None")
