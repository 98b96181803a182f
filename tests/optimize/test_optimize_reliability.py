"""Issue 10: an optimization's result does not depend on machine load, a run never overwrites
another's results, and every setting the optimizer cannot use is refused before the first
evaluation (one line, exit 2, nothing written)."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from musclewalk.cli import main
from musclewalk.optimize.driver import (
    CHECKPOINT,
    LOCK,
    Optimization,
    acquire_run_lock,
    load_checkpoint,
    release_run_lock,
)
from musclewalk.optimize.evaluate import EvaluationTask, Evaluator
from musclewalk.sim.engine import OpenSimEngine

SHARED = Path(__file__).resolve().parents[2].parent / "shared"


def error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("musclewalk optimize: error: "), err
    return err[0]


def optimize(model, out, *extra):
    return main(
        [
            "optimize",
            str(model),
            "--speed",
            "1.3",
            "--duration",
            "0.1",
            "--generations",
            "1",
            "--evaluator",
            "serial",
            "--quiet",
            "--out",
            str(out),
            *extra,
        ]
    )


# ---------------------------------------------------------------- 1. load-independent limits


def test_the_evaluation_limit_is_cpu_time_not_wall_time(humanlegs_osim, monkeypatch):
    """A simulation slowed down in wall time (here by sleeping between control steps, as on a
    busy core) is not penalized; one that burns CPU beyond the limit is, with the reason."""
    evaluator = Evaluator(humanlegs_osim)
    real_advance = OpenSimEngine.advance

    def slow_advance(self, t):
        time.sleep(0.15)  # 20 steps: 3 s of wall time for 0.1 s simulated
        return real_advance(self, t)

    monkeypatch.setattr(OpenSimEngine, "advance", slow_advance)
    t0 = time.perf_counter()
    # 2 CPU s per simulated s: a wall-clock limit of the same size (2 s for the first simulated
    # second) would have ended this evaluation
    result = evaluator.evaluate(EvaluationTask(str(humanlegs_osim), 1.3, 0.1, cpu_limit=2.0), {})
    assert time.perf_counter() - t0 > 3.0
    assert result.error is None and result.simulated_time == pytest.approx(0.1)
    monkeypatch.setattr(OpenSimEngine, "advance", real_advance)

    def burn(self, t):
        end = time.thread_time() + 0.05
        while time.thread_time() < end:
            pass
        return real_advance(self, t)

    monkeypatch.setattr(OpenSimEngine, "advance", burn)
    result = evaluator.evaluate(EvaluationTask(str(humanlegs_osim), 1.3, 0.1, cpu_limit=0.5), {})
    assert result.error.startswith("EvaluationTimeout: CPU time")
    assert "over the limit of 0.5 CPU s per simulated s" in result.error


def _warm_started_run(small_settings, out, init):
    settings = small_settings(
        generations=1, duration=0.3, evaluator="process", workers=2, init=str(init), sigma=0.3
    )
    state = Optimization(settings, out, progress=False).run()
    return state, json.loads((out / "best.json").read_text())


@pytest.fixture(scope="module")
def warm_start_file(small_settings, tmp_path_factory):
    out = tmp_path_factory.mktemp("warm")
    Optimization(small_settings(generations=1, duration=0.3), out, progress=False).run()
    return out / "best.json"


def test_a_busy_machine_gives_the_same_best(small_settings, warm_start_file, tmp_path):
    idle_state, idle_best = _warm_started_run(small_settings, tmp_path / "idle", warm_start_file)
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)
    ]
    try:
        busy_state, busy_best = _warm_started_run(small_settings, tmp_path / "busy", warm_start_file)
    finally:
        for p in burners:
            p.kill()
            p.wait()
    assert busy_state.failures == idle_state.failures == 0
    assert busy_best["parameters"] == idle_best["parameters"]
    assert busy_best["objective"] == idle_best["objective"]
    assert [r["generation_best"] for r in busy_state.history] == [
        r["generation_best"] for r in idle_state.history
    ]


def test_a_stuck_worker_is_killed_by_the_wall_clock_backstop(monkeypatch):
    """A call that never returns (no control step, so no CPU check) is ended by the backstop:
    the stuck candidate is a failure with its reason, the others are evaluated normally."""
    import stuck_worker

    from musclewalk.optimize import evaluators

    monkeypatch.setattr(evaluators, "evaluate_task", stuck_worker.maybe_hang)
    pool = evaluators.ProcessEvaluator(2, backstop=5.0)
    try:
        values = [{"x": 1.0}, {"x": 2.0, "hang": True}, {"x": 3.0}, {"x": 4.0}]
        t0 = time.perf_counter()
        results = pool.map(None, values)
        assert time.perf_counter() - t0 < 60
    finally:
        pool.close()
    assert [r.score for r in results[:1] + results[2:]] == [1.0, 3.0, 4.0]
    assert "wall-clock backstop of 5 s" in results[1].error


# ---------------------------------------------------------------- 2. no overwritten results


def test_a_non_empty_out_is_refused(humanlegs_osim, tmp_path, capsys):
    out = tmp_path / "someone_elses_run"
    out.mkdir()
    (out / "best.json").write_text('{"objective": 15.89}')
    (out / "history.csv").write_text("generation\n1\n")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert optimize(humanlegs_osim, out) == 2
    line = error_line(capsys)
    assert f"{out}: --out is not empty (best.json, history.csv)" in line
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    # a file as --out
    f = tmp_path / "a_file"
    f.write_text("x")
    assert optimize(humanlegs_osim, f) == 2
    assert "--out exists and is not a directory" in error_line(capsys)
    assert f.read_text() == "x"


def test_two_optimizers_never_share_a_run_directory(humanlegs_osim, tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time; "
            f"fd = os.open({str(out / LOCK)!r}, os.O_RDWR | os.O_CREAT); "
            "fcntl.flock(fd, fcntl.LOCK_EX); os.write(fd, str(os.getpid()).encode()); "
            "print('locked', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert optimize(humanlegs_osim, out) == 2
        line = error_line(capsys)
        assert f"another optimization (pid {holder.pid}) is running" in line
        assert main(["optimize", str(humanlegs_osim), "--resume", "--quiet", "--out", str(out)]) == 2
        assert "another optimization" in error_line(capsys)
    finally:
        holder.kill()
        holder.wait()
    assert sorted(p.name for p in out.iterdir()) == [LOCK]
    # the holder died: its flock went with it, the directory is free again
    acquire_run_lock(out)
    release_run_lock(out)
    assert not (out / LOCK).exists()


# ---------------------------------------------------------------- 3. settings checked up front


@pytest.mark.parametrize(
    "args, message",
    [
        (["--duration", "nan"], "duration: expected a number > 0 and <= 600, got nan"),
        (["--duration", "1e6"], "duration: expected a number > 0 and <= 600"),
        (["--generations", "0"], "--generations: expected an integer >= 1, got 0"),
        (["--generations", "-1"], "--generations: expected an integer >= 1, got -1"),
        (["--sigma", "0"], "sigma: expected a number > 0, got 0.0"),
        (["--sigma", "inf"], "sigma: expected a number > 0, got inf"),
        (["--seed", "0"], "seed: expected an integer > 0, got 0"),
        (["--workers", "-2"], "workers: expected an integer >= 0, got -2"),
        (["--cpu-limit", "0"], "cpu_limit: expected a number > 0"),
        (["--stagnation", "0"], "stagnation: expected an integer > 0"),
    ],
)
def test_settings_the_optimizer_cannot_use(humanlegs_osim, tmp_path, capsys, args, message):
    out = tmp_path / "run"
    assert main(["optimize", str(humanlegs_osim), "--speed", "1.3", "--quiet", "--out", str(out), *args]) == 2
    assert message in error_line(capsys)
    assert not out.exists()


def test_a_foreign_osim_is_refused_before_any_evaluation(humanlegs_osim, tmp_path, capsys):
    reference = SHARED / "reference" / "opensim-gait10dof18musc" / "gait10dof18musc.osim"
    if not reference.exists():
        pytest.skip("../shared/reference not present")
    foreign = tmp_path / "foreign.osim"
    shutil.copy(reference, foreign)
    shutil.copy(humanlegs_osim.with_suffix(".meta.json"), tmp_path / "foreign.meta.json")
    out = tmp_path / "run"
    t0 = time.perf_counter()
    assert optimize(foreign, out) == 2
    line = error_line(capsys)
    assert (
        f"{foreign}: cannot be optimized: {foreign}: the model does not match its metadata " in line
        and "no muscle hip_flexor_medial_r" in line
    )
    assert time.perf_counter() - t0 < 20
    assert not out.exists()


def test_resume_refuses_settings_that_differ(small_settings, tmp_path, capsys):
    out = tmp_path / "run"
    Optimization(small_settings(generations=1, duration=0.1), out, progress=False).run()
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    model = small_settings().model
    for args, message in [
        (["--speed", "5"], "speed: the run was started with 1.3, not 5.0"),
        (["--duration", "3"], "duration: the run was started with 0.1, not 3.0"),
        (["--seed", "2"], "seed: the run was started with 7, not 2"),
        (["--sigma", "0.5"], "sigma: the run was started with 1.0, not 0.5"),
    ]:
        assert main(["optimize", model, "--resume", "--quiet", "--out", str(out), *args]) == 2
        assert message in error_line(capsys)
    assert main(["optimize", "Human", "--resume", "--quiet", "--out", str(out)]) == 2
    assert "the run optimizes 'HumanLegs', not 'Human'" in error_line(capsys)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    # the same settings, a larger budget and another worker count resume
    assert (
        main(
            [
                "optimize",
                model,
                "--resume",
                "--speed",
                "1.3",
                "--generations",
                "2",
                "--evaluator",
                "serial",
                "--quiet",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    _, state = load_checkpoint(out / CHECKPOINT)
    assert state.generation == 2


# ---------------------------------------------------------------- 4. parameter files


@pytest.fixture(scope="module")
def best_file(small_settings, tmp_path_factory):
    out = tmp_path_factory.mktemp("best")
    Optimization(small_settings(generations=1, duration=0.1), out, progress=False).run()
    return json.loads((out / "best.json").read_text())


def test_an_incomplete_init_file_is_refused(humanlegs_osim, best_file, tmp_path, capsys):
    data = json.loads(json.dumps(best_file))
    controller = data["parameters"]["controller"]
    for name in list(controller)[::2]:
        del controller[name]
    init = tmp_path / "half.json"
    init.write_text(json.dumps(data))
    assert optimize(humanlegs_osim, tmp_path / "run", "--init", str(init)) == 2
    line = error_line(capsys)
    assert f"{init}: parameters: " in line and "parameters missing" in line
    assert "--init-from-other-creature" in line
    assert optimize(humanlegs_osim, tmp_path / "run2", "--init", str(init), "--init-from-other-creature") == 0


def test_init_values_outside_the_bounds_are_reported(humanlegs_osim, best_file, tmp_path, capsys):
    data = json.loads(json.dumps(best_file))
    data["parameters"]["model"]["properties"][next(iter(data["parameters"]["model"]["properties"]))] = 1.7
    init = tmp_path / "outside.json"
    init.write_text(json.dumps(data))
    assert optimize(humanlegs_osim, tmp_path / "run", "--init", str(init)) == 2
    line = error_line(capsys)
    assert "1.7 is outside the bounds [0, 1]" in line and "--clip-init" in line
    assert not (tmp_path / "run").exists()
    capsys.readouterr()
    assert optimize(humanlegs_osim, tmp_path / "run", "--init", str(init), "--clip-init") == 0


def test_the_log_lists_the_best_muscles_standing_outside_their_working_range(humanlegs_osim, tmp_path):
    """log.txt names each of the best's muscles whose fibre stands outside 0.5-1.2 optimal
    lengths in the base pose, a passive spring or a slack muscle the paper's independent
    properties allow: warm-started from the committed paper-objective HumanLegs (σ 1e-9, so the
    best is the warm start to the shown digits), its stretched hamstrings and slack rectus
    femoris."""
    init = Path(__file__).resolve().parents[2] / "models/optimized/HumanLegs-walk-1.3/best.json"
    assert optimize(humanlegs_osim, tmp_path / "run", "--init", str(init), "--sigma", "1e-9") == 0
    line = next(
        x for x in (tmp_path / "run" / "log.txt").read_text().splitlines()
        if x.startswith("best's fibres standing outside 0.5-1.2 optimal lengths (base pose; right side): ")
    )  # fmt: skip
    listed = dict(item.rsplit(" ", 1) for item in line.split(": ", 2)[2].split(", "))
    assert line.split(": ")[1] == str(len(listed)) and "hamstrings_l" not in listed
    assert listed["hamstrings_r"] == "1.48" and listed["rectus_femoris_r"] == "-1.10"
    assert "vasti_r" not in listed
