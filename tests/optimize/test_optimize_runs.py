"""Short real CMA-ES optimizations of HumanLegs (population 4, 0.3 s evaluations, 2
generations): run outputs with worker processes and with a Dask cluster, reproducibility of a
seed across evaluators, resume from a checkpoint (also after SIGKILL), and failing simulations
as penalized evaluations."""

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from musclewalk.cli import main
from musclewalk.model.meta import load_meta
from musclewalk.model.vectors import KINDS, ModelVectors, parse_osim
from musclewalk.opensim_env import import_opensim
from musclewalk.optimize.driver import CHECKPOINT, Optimization, OptimizationError, Settings, load_checkpoint
from musclewalk.optimize.evaluate import (
    FAILURE_SCORE,
    EvaluationResult,
    EvaluationTask,
    Evaluator,
    evaluate_task,
)
from musclewalk.sim.runner import Simulator

WALL_COLUMNS = ["wall_time", "generation_wall"]


def run_opt(settings, out, resume=False):
    return Optimization(settings, out, resume=resume, progress=False).run()


@pytest.fixture(scope="module")
def serial_run(small_settings, tmp_path_factory):
    out = tmp_path_factory.mktemp("serial")
    return out, run_opt(small_settings(), out)


@pytest.fixture(scope="module")
def process_run(small_settings, tmp_path_factory):
    out = tmp_path_factory.mktemp("process")
    return out, run_opt(small_settings(evaluator="process", workers=2), out)


@pytest.fixture(scope="module")
def dask_run(small_settings, tmp_path_factory):
    from dask.distributed import Client, LocalCluster

    out = tmp_path_factory.mktemp("dask")
    with (
        LocalCluster(processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        state = run_opt(small_settings(evaluator="dask", scheduler=client, workers=2), out)
        # the evaluations ran in the cluster's worker processes (each loads the model once)
        loaded = client.run(
            lambda: len(__import__("musclewalk.optimize.evaluate", fromlist=["x"])._EVALUATORS)
        )
        assert len(loaded) == 2 and sum(loaded.values()) >= 1, loaded
    return out, state


def check_outputs(out, state, evaluator):
    """best.json, optimized.osim (opens in OpenSim), history.csv with 2 rows, log.txt."""
    hist = pd.read_csv(out / "history.csv")
    assert list(hist["generation"]) == [1, 2]
    assert list(hist["evaluations"]) == [4, 8]
    # the reported best never gets worse: (fell before t_max, objective) does not increase, and
    # while it is a candidate that fell, it is the lowest objective seen
    duration = json.loads((out / "best.json").read_text())["duration"]
    fell = hist["best_simulated_time"] < duration - 1e-9
    key = list(zip(fell, hist["best"]))
    assert key[1] <= key[0]
    assert (hist["best"][fell] <= hist["generation_best"][fell] * (1 + 1e-6)).all()
    assert list(hist["failures"]) == [0, 0]
    for k in ("speed", "headori", "headvel", "slide", "effort"):
        assert f"term_{k}" in hist and f"avg_{k}" in hist

    best = json.loads((out / "best.json").read_text())
    assert best["creature"] == "HumanLegs" and best["seed"] == 7 and best["speed"] == 1.3
    assert best["objective"] == state.best_score
    assert best["objective"] == pytest.approx(hist["best"].iloc[-1], rel=1e-5)
    assert best["generation"] == state.best_generation in (1, 2)
    assert best["objective"] == pytest.approx(sum(best["terms"].values()))
    assert best["objective"] < FAILURE_SCORE

    meta = load_meta(out / "optimized.osim")  # its metadata was written beside it
    assert meta.creature == "HumanLegs" and meta.optimized_from
    osim = import_opensim()
    model = osim.Model(str(out / "optimized.osim"))
    model.initSystem()
    assert model.getMuscles().getSize() == len(meta.muscles)
    mv = ModelVectors(meta)
    tree = parse_osim(out / "optimized.osim")
    for kind in KINDS:
        assert mv.read_values(tree, kind) == pytest.approx(best["parameters"]["model"][kind], abs=1e-9), kind

    log = (out / "log.txt").read_text()
    assert "generations: 2, evaluations: 8, failed evaluations: 0" in log
    assert "seed: 7, population: 4" in log and f"evaluator: {evaluator}" in log
    assert "stop: generation limit (2)" in log
    assert "opensim 4." in log
    saved_settings, saved = load_checkpoint(out / CHECKPOINT)
    assert saved.generation == 2 and saved.evaluations == 8
    assert saved.best_score == state.best_score
    return best, hist


def test_process_workers_run_writes_outputs(process_run, humanlegs_osim):
    out, state = process_run
    best, _ = check_outputs(out, state, "process")
    # best.json describes the scored candidate: evaluating its parameters again gives its score
    from musclewalk.optimize.space import ParameterSpace
    from musclewalk.sim.bridge import control_model_from_meta

    meta = load_meta(humanlegs_osim)
    space = ParameterSpace(meta, control_model_from_meta(meta, 0.005))
    again = evaluate_task(
        EvaluationTask(str(humanlegs_osim.resolve()), 1.3, 0.3), space.flatten(best["parameters"])
    )
    assert again.error is None
    assert again.score == pytest.approx(best["objective"], rel=1e-9)


def test_dask_cluster_run_writes_outputs(dask_run):
    out, state = dask_run
    check_outputs(out, state, "dask")
    # the checkpoint keeps the scheduler's address, not the (unpicklable) Client
    saved_settings, _ = load_checkpoint(out / CHECKPOINT)
    assert isinstance(saved_settings.scheduler, str)
    assert saved_settings.scheduler.startswith("tcp://")


def test_same_seed_same_best_whatever_the_evaluator(serial_run, process_run, dask_run):
    results = {}
    for name, (out, _) in (("serial", serial_run), ("process", process_run), ("dask", dask_run)):
        best = json.loads((out / "best.json").read_text())
        hist = pd.read_csv(out / "history.csv").drop(columns=WALL_COLUMNS)
        results[name] = (best, hist)
    best_s, hist_s = results["serial"]
    for name in ("process", "dask"):
        best, hist = results[name]
        assert best["parameters"] == best_s["parameters"], name  # exactly
        assert best["objective"] == best_s["objective"], name
        pd.testing.assert_frame_equal(hist, hist_s)


def test_the_seed_decides_the_candidates(small_settings, tmp_path):
    def first_candidates(seed):
        np.random.seed(999)  # whatever the global random state was before
        return np.array(Optimization(small_settings(seed=seed), tmp_path, progress=False).state.es.ask())

    a, b, c = first_candidates(7), first_candidates(7), first_candidates(8)
    assert a.shape == (4, b.shape[1])
    assert np.array_equal(a, b) and not np.allclose(a, c)


def test_resume_continues_from_the_checkpoint(small_settings, serial_run, tmp_path):
    out = tmp_path / "resumed"
    first = run_opt(small_settings(generations=1), out)
    assert first.generation == 1 and first.evaluations == 4
    row1 = pd.read_csv(out / "history.csv")
    assert len(row1) == 1
    np.random.seed(12345)  # a new process starts with another global random state
    # only the generation budget comes from the resuming call; the rest from the checkpoint
    state = run_opt(Settings(model="", speed=9.9, generations=2), out, resume=True)
    assert state.generation == 2 and state.evaluations == 8
    hist = pd.read_csv(out / "history.csv")
    assert list(hist["generation"]) == [1, 2] and list(hist["evaluations"]) == [4, 8]
    pd.testing.assert_frame_equal(hist.iloc[:1], row1, check_dtype=False)
    saved_settings, saved = load_checkpoint(out / CHECKPOINT)
    assert saved.generation == 2 and saved_settings.speed == 1.3 and saved_settings.duration == 0.3
    assert "generations: 2, evaluations: 8" in (out / "log.txt").read_text()
    # interrupted + resumed is the same run as the uninterrupted one
    serial_out, serial_state = serial_run
    assert (
        json.loads((out / "best.json").read_text())["parameters"]
        == json.loads((serial_out / "best.json").read_text())["parameters"]
    )
    pd.testing.assert_frame_equal(
        hist.drop(columns=WALL_COLUMNS), pd.read_csv(serial_out / "history.csv").drop(columns=WALL_COLUMNS)
    )
    # a finished run resumed without a larger budget does nothing more, its log left as it was
    log = (out / "log.txt").read_bytes()
    again = run_opt(Settings(model="", speed=1.3, generations=1), out, resume=True)
    assert again.generation == 2 and again.evaluations == 8
    assert (out / "log.txt").read_bytes() == log


def test_sigkill_mid_generation_loses_at_most_that_generation(humanlegs_osim, tmp_path, capsys):
    out = tmp_path / "killed"
    errors = tmp_path / "stderr.txt"
    cmd = [
        sys.executable,
        "-m",
        "musclewalk",
        "optimize",
        str(humanlegs_osim),
        "--speed",
        "1.3",
        "--duration",
        "0.05",
        "--generations",
        "3",
        "--evaluator",
        "serial",
        "--seed",
        "3",
        "--quiet",
        "--out",
        str(out),
    ]
    with open(errors, "wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        try:
            deadline = time.monotonic() + 180
            while not (out / CHECKPOINT).exists():
                assert proc.poll() is None, errors.read_text()
                assert time.monotonic() < deadline, "no checkpoint after 180 s"
                time.sleep(0.02)
            os.kill(proc.pid, signal.SIGKILL)  # in the middle of the next generation
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == -signal.SIGKILL
    _, saved = load_checkpoint(out / CHECKPOINT)
    done = saved.generation
    assert 1 <= done < 3 and saved.evaluations == 20 * done  # the CLI's population is 20
    before = pd.read_csv(out / "history.csv")
    assert len(before) >= done
    assert "stop: running" in (out / "log.txt").read_text()  # it never finished
    assert (
        main(
            [
                "optimize",
                str(humanlegs_osim),
                "--speed",
                "1.3",
                "--resume",
                "--generations",
                "3",
                "--quiet",
                "--out",
                str(out),
            ]
        )
        == 0
    ), capsys.readouterr().err
    _, resumed = load_checkpoint(out / CHECKPOINT)
    assert resumed.generation == 3 and resumed.evaluations == 60
    hist = pd.read_csv(out / "history.csv")
    assert list(hist["generation"]) == [1, 2, 3]
    assert list(hist["evaluations"]) == [20, 40, 60]
    pd.testing.assert_frame_equal(hist.iloc[:done], before.iloc[:done], check_dtype=False)
    assert json.loads((out / "best.json").read_text())["duration"] == 0.05
    log = (out / "log.txt").read_text()
    assert "generations: 3, evaluations: 60" in log and "stop: generation limit (3)" in log
    assert not list(out.glob(".*.tmp"))


# ------------------------------------------------------------------ failing simulations
@pytest.fixture
def evaluator(humanlegs_osim):
    return Evaluator(humanlegs_osim)


def assert_penalized(result, error_start):
    assert result.score == FAILURE_SCORE
    assert result.error is not None and result.error.startswith(error_start), result.error
    assert result.terminated and not result.thresholds_met
    assert all(math.isnan(v) for v in result.terms.values())


def test_failing_simulation_is_a_penalized_evaluation(evaluator, humanlegs_osim, monkeypatch):
    task = EvaluationTask(str(humanlegs_osim), 1.3, 0.1)

    def boom(self, *args, **kwargs):
        raise RuntimeError("SimTK Exception thrown at Integrator.cpp: step failed")

    with monkeypatch.context() as m:
        m.setattr(Simulator, "run", boom)
        result = evaluator.evaluate(task, {})
        assert_penalized(result, "RuntimeError: SimTK Exception")
        assert result.reason == "RuntimeError"
        # what worker processes return is the same EvaluationResult
        assert evaluate_task(task, {}).score == FAILURE_SCORE

    # OpenSim itself throws: the candidate model file is unreadable
    real_candidate = Evaluator.candidate_model

    def truncated(self, model_values):
        path, meta = real_candidate(self, model_values)
        path.write_bytes(path.read_bytes()[:5000])
        return path, meta

    with monkeypatch.context() as m:
        m.setattr(Evaluator, "candidate_model", truncated)
        result = evaluator.evaluate(task, {})
        assert_penalized(result, "EngineError")
        assert "OpenSim cannot read the model" in result.error

    meta = load_meta(humanlegs_osim)
    lopt = next(e.name for e in meta.properties if e.kind == "optimal_fiber_length")
    # absurd model values (a negative optimal fibre length, NaN) are penalized before OpenSim
    # sees them (such a model used to crash the whole process)
    for absurd in (-50.0, 1.5, float("nan")):
        result = evaluator.evaluate(task, {f"properties.{lopt}": absurd})
        assert_penalized(result, f"ParameterError: model: properties.{lopt}: ")
        assert ("is outside the bounds [0, 1]" if absurd == absurd else "is not finite") in result.error
    # a controller parameter outside its bounds
    result = evaluator.evaluate(task, {"fsm.d_lift": 99.0})
    assert_penalized(result, "ParameterError")
    assert "fsm.d_lift" in result.error
    # the wall-time limit
    result = evaluator.evaluate(EvaluationTask(str(humanlegs_osim), 1.3, 0.1, cpu_limit=1e-9), {})
    assert_penalized(result, "EvaluationTimeout")
    # the evaluator is still usable afterwards
    result = evaluator.evaluate(task, {})
    assert result.error is None and result.score < FAILURE_SCORE
    assert math.isfinite(result.score) and result.simulated_time == pytest.approx(0.1)


def test_driver_keeps_going_past_failed_evaluations(small_settings, tmp_path, monkeypatch):
    real_run = Simulator.run
    calls = {"n": 0}

    def flaky(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] % 2 == 0:
            raise RuntimeError("simulated OpenSim failure")
        return real_run(self, *args, **kwargs)

    monkeypatch.setattr(Simulator, "run", flaky)
    out = tmp_path / "flaky"
    state = run_opt(small_settings(duration=0.1), out)
    assert calls["n"] == 8
    assert state.generation == 2 and state.evaluations == 8 and state.failures == 4
    hist = pd.read_csv(out / "history.csv")
    assert list(hist["failures"]) == [2, 4]
    assert state.best_score < FAILURE_SCORE and state.best_result.error is None
    assert "failed evaluations: 4" in (out / "log.txt").read_text()
    assert (out / "best.json").exists() and (out / "optimized.osim").exists()

    log = (out / "log.txt").read_text()
    assert "failed evaluations (generation, candidate, why):" in log
    assert "  1, 1: RuntimeError: simulated OpenSim failure" in log

    # every candidate of the first generation failing is an error naming the first failure,
    # with no result written (not a "result" made of failures)
    monkeypatch.setattr(Simulator, "run", lambda self, *a, **k: 1 / 0)
    out2 = tmp_path / "all_failed"
    with pytest.raises(
        OptimizationError,
        match="every evaluation of the first generation failed; the first: ZeroDivisionError",
    ):
        run_opt(small_settings(generations=1), out2)
    assert not any(out2.iterdir())

    # a later generation in which every evaluation fails (the run's surroundings broke, e.g. its
    # working directory was deleted) stops the run before CMA-ES is told: the checkpoint, history
    # and best stay those of the generation before, the log says why, and it resumes from there
    monkeypatch.setattr(Simulator, "run", real_run)
    out3 = tmp_path / "broke_later"
    run_opt(small_settings(duration=0.1, generations=1), out3)
    checkpoint = (out3 / "checkpoint.pkl").read_bytes()
    monkeypatch.setattr(Simulator, "run", lambda self, *a, **k: 1 / 0)
    with pytest.raises(OptimizationError, match="every evaluation of generation 2 failed"):
        run_opt(small_settings(duration=0.1, generations=3), out3, resume=True)
    assert (out3 / "checkpoint.pkl").read_bytes() == checkpoint
    assert len(pd.read_csv(out3 / "history.csv")) == 1
    log = (out3 / "log.txt").read_text()
    assert "stop: every evaluation of generation 2 failed (the first: ZeroDivisionError" in log
    assert "the checkpoint is of generation 1: resume once the cause is fixed" in log
    monkeypatch.setattr(Simulator, "run", real_run)
    assert run_opt(small_settings(duration=0.1, generations=2), out3, resume=True).generation == 2


def test_concurrent_evaluations_in_one_process(evaluator, humanlegs_osim):
    """A dask worker may run several evaluations at once in threads of one process: each
    candidate model must be its own file, so every thread simulates its own candidate."""
    from concurrent.futures import ThreadPoolExecutor

    meta = load_meta(humanlegs_osim)
    fmax = [f"properties.{e.name}" for e in meta.properties if e.kind == "max_isometric_force"]
    task = EvaluationTask(str(humanlegs_osim), 1.3, 0.1)
    candidates = [{name: u for name in fmax} for u in (0.1, 0.9, 0.3, 0.7)]
    serial = [evaluator.evaluate(task, c).score for c in candidates]
    assert len(set(serial)) == 4  # the candidates really differ
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(lambda c: evaluator.evaluate(task, c).score, candidates * 2))
    assert threaded == serial * 2


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
def test_a_busy_worker_does_not_outlive_a_killed_optimizer(tmp_path):
    """A worker in the middle of a long evaluation (here: a 60 s sleep) dies with its parent;
    without the initializer it would keep computing a result nobody waits for."""
    pidfile = tmp_path / "worker.pid"
    script = f"""
import os, time
from musclewalk.optimize.evaluators import ProcessEvaluator
def busy(_):
    open({str(pidfile)!r}, "w").write(str(os.getpid()))
    time.sleep(60)
if __name__ == "__main__":
    ProcessEvaluator(1).pool.submit(busy, 0)
    time.sleep(60)
"""
    (tmp_path / "parent.py").write_text(script)
    proc = subprocess.Popen([sys.executable, str(tmp_path / "parent.py")], cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not pidfile.exists() or not pidfile.read_text():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        worker = int(pidfile.read_text())
        assert _running(worker)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _running(worker):
            assert time.monotonic() < deadline, "the worker outlived the optimizer"
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_moved_run_directory_resumes_with_its_own_model_copy(tmp_path, capsys):
    """Committed runs move from where they ran to models/optimized/: resume must not need the old
    path."""
    import shutil

    first = tmp_path / "ran_here"
    assert (
        main(
            [
                "optimize",
                "HumanLegs",
                "--speed",
                "1.3",
                "--duration",
                "0.05",
                "--generations",
                "1",
                "--evaluator",
                "serial",
                "--quiet",
                "--out",
                str(first),
            ]
        )
        == 0
    ), capsys.readouterr().err
    moved = tmp_path / "committed"
    shutil.move(str(first), str(moved))
    assert (
        main(
            [
                "optimize",
                "HumanLegs",
                "--speed",
                "1.3",
                "--resume",
                "--generations",
                "2",
                "--quiet",
                "--out",
                str(moved),
            ]
        )
        == 0
    ), capsys.readouterr().err
    _, state = load_checkpoint(moved / CHECKPOINT)
    assert state.generation == 2
    assert f"model: {moved / 'model' / 'HumanLegs.osim'}" in (moved / "log.txt").read_text()


def test_a_candidate_that_walks_the_full_t_max_is_the_reported_best(small_settings, tmp_path, monkeypatch):
    """§5 charges a fall only E_speed = 1 for the time left, so a candidate falling just before
    t_max can score lower than one that walks; the reported best is the walker (CMA-ES itself
    still ranks by objective)."""
    import musclewalk.optimize.driver as driver

    terms = [t.name for t in driver.Objective.load("geijtenbeek2013").terms]

    # per generation (popsize 4): (score, terminated)
    plan = iter(
        [
            [(10.0, True), (20.0, False), (30.0, False), (90.0, True)],
            [(5.0, True), (15.0, False), (50.0, True), (60.0, True)],
            [(1.0, True), (16.0, False), (70.0, True), (80.0, True)],
        ]
    )
    told = []

    class Scripted:
        def map(self, task, values):
            rows = next(plan)
            return [
                EvaluationResult(
                    score=s,
                    terms=dict.fromkeys(terms, s / 5),
                    averages=dict.fromkeys(terms, s / 500),
                    simulated_time=0.3,
                    terminated=t,
                    reason="com_height" if t else None,
                    wall_time=0.0,
                )
                for s, t in rows
            ]

        def close(self):
            pass

    monkeypatch.setattr(driver, "make_evaluator", lambda *a, **k: Scripted())
    out = tmp_path / "walker"
    opt = Optimization(small_settings(generations=3), out, progress=False)
    es_class = type(opt.state.es)
    real_tell = es_class.tell
    monkeypatch.setattr(
        es_class,
        "tell",
        lambda self, X, f, *a, **k: (told.append(list(f)), real_tell(self, X, f, *a, **k))[1],
    )
    state = opt.run()
    assert told[0] == [10.0, 20.0, 30.0, 90.0]  # CMA-ES sees the objective
    hist = pd.read_csv(out / "history.csv")
    assert list(hist["best"]) == [20.0, 15.0, 15.0]
    assert list(hist["generation_best"]) == [10.0, 5.0, 1.0]
    assert state.best_generation == 2 and not state.best_result.terminated
    best = json.loads((out / "best.json").read_text())
    assert best["objective"] == 15.0 and best["terminated"] is False


def test_a_committed_checkpoint_from_before_objective_files_resumes(tmp_path):
    """The committed checkpoints were pickled before objectives became files: they resume with
    the default objective (the paper's, whose terms they were scored with)."""
    import shutil

    from musclewalk.optimize.driver import Optimization, Settings, release_run_lock

    src = Path(__file__).resolve().parents[2] / "models" / "optimized" / "HumanLegs-walk-1.3"
    run = tmp_path / "run"
    shutil.copytree(src, run, ignore=shutil.ignore_patterns("earlier", ".musclewalk.lock"))
    opt = Optimization(Settings(model="", speed=1.0, generations=0), run, resume=True, progress=False)
    try:
        assert opt.settings.objective == "geijtenbeek2013"
        assert opt.objective.term_names == ("speed", "headori", "headvel", "slide", "effort")
        assert opt.task.objective == opt.objective
        best = json.loads((src / "best.json").read_text())
        assert opt.state.best_score == best["objective"]
        assert opt.objective.combine(best["averages"])[0] == pytest.approx(best["objective"])
    finally:
        release_run_lock(run)


def test_a_checkpoint_holds_no_musclewalk_class(tmp_path, capsys):
    """Settings and state are stored as plain data (and settings.json beside them), so that a
    renamed or moved class does not break --resume; a checkpoint of the earlier format (pickled
    objects) still loads."""
    import io
    import pickle

    out = tmp_path / "run"
    assert (
        main(
            [
                "optimize",
                "HumanLegs",
                "--speed",
                "1.3",
                "--duration",
                "0.05",
                "--generations",
                "1",
                "--evaluator",
                "serial",
                "--quiet",
                "--out",
                str(out),
            ]
        )
        == 0
    ), capsys.readouterr().err
    data = (out / CHECKPOINT).read_bytes()
    classes = []

    class Recording(pickle.Unpickler):
        def find_class(self, module, name):
            classes.append(f"{module}.{name}")
            return super().find_class(module, name)

    Recording(io.BytesIO(data)).load()
    assert classes and not [c for c in classes if c.startswith("musclewalk")], classes
    settings = json.loads((out / "settings.json").read_text())
    assert settings["speed"] == 1.3 and settings["objective"] == "geijtenbeek2013"
    saved_settings, state = load_checkpoint(out / CHECKPOINT)
    assert isinstance(saved_settings, Settings) and state.generation == 1
    # the earlier format: the objects themselves
    old = pickle.loads(data)
    legacy = {"settings": saved_settings, "state": state}
    (out / CHECKPOINT).write_bytes(pickle.dumps(legacy))
    again_settings, again = load_checkpoint(out / CHECKPOINT)
    assert again_settings.speed == 1.3 and again.generation == 1 and old["format"] == 2
    assert (
        main(["optimize", "HumanLegs", "--resume", "--generations", "2", "--quiet", "--out", str(out)]) == 0
    ), capsys.readouterr().err
    assert load_checkpoint(out / CHECKPOINT)[1].generation == 2
