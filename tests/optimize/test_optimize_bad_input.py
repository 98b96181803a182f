"""Bad input to `musclewalk optimize`: exit code 2 with one clear error line naming the file or
key, and nothing lost (an existing checkpoint is left exactly as it was)."""

import json

import numpy as np
import pytest

from musclewalk.cli import main
from musclewalk.optimize import driver
from musclewalk.optimize.driver import CHECKPOINT, Optimization, load_checkpoint
from musclewalk.optimize.evaluators import SerialEvaluator


def error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("musclewalk optimize: error: ")
    return err[0]


@pytest.fixture(scope="module")
def finished_run(small_settings, tmp_path_factory):
    """A one-generation run: its folder with checkpoint.pkl and best.json."""
    out = tmp_path_factory.mktemp("finished")
    Optimization(small_settings(generations=1, duration=0.1), out, progress=False).run()
    return out


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


def test_unknown_creature(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["optimize", "NoSuchBeast", "--speed", "1.3", "--out", str(out)]) == 2
    line = error_line(capsys)
    assert "unknown creature 'NoSuchBeast'" in line and "HumanLegs" in line
    assert not out.exists()
    assert optimize(tmp_path / "missing.osim", out) == 2
    assert "missing.osim: model file not found" in error_line(capsys)
    assert not out.exists()


@pytest.mark.parametrize("speed", ["0", "-1.3", "nan", "inf"])
def test_speed_must_be_positive(humanlegs_osim, tmp_path, capsys, speed):
    out = tmp_path / "run"
    assert main(["optimize", str(humanlegs_osim), "--speed", speed, "--out", str(out)]) == 2
    assert "speed: expected a number > 0" in error_line(capsys)
    assert not (out / CHECKPOINT).exists()


def test_failed_calls_leave_the_checkpoint_alone(finished_run, humanlegs_osim, capsys):
    ckpt = finished_run / CHECKPOINT
    before = {p.name: p.read_bytes() for p in finished_run.iterdir()}
    # a new run into a folder with a checkpoint
    assert optimize(humanlegs_osim, finished_run) == 2
    line = error_line(capsys)
    assert str(ckpt) in line and "a checkpoint exists; use --resume" in line
    # bad speed with --resume
    assert (
        main(["optimize", str(humanlegs_osim), "--speed", "-1", "--resume", "--out", str(finished_run)]) == 2
    )
    line = error_line(capsys)
    assert "speed: the run was started with 1.3, not -1.0" in line
    # bad --init into the same folder
    bad = finished_run.parent / "bad_init.json"
    bad.write_text("[]")
    assert optimize(humanlegs_osim, finished_run, "--init", str(bad)) == 2
    error_line(capsys)
    assert {p.name: p.read_bytes() for p in finished_run.iterdir()} == before
    # and the checkpoint still resumes
    _, state = load_checkpoint(ckpt)
    assert state.generation == 1 and state.evaluations == 4


def test_corrupt_checkpoint(finished_run, humanlegs_osim, tmp_path, capsys):
    out = tmp_path / "corrupt"
    out.mkdir()
    good = (finished_run / CHECKPOINT).read_bytes()
    for garbage in (b"not a pickle at all", good[: len(good) // 2], b""):
        (out / CHECKPOINT).write_bytes(garbage)
        assert main(["optimize", str(humanlegs_osim), "--speed", "1.3", "--resume", "--out", str(out)]) == 2
        line = error_line(capsys)
        assert f"{out / CHECKPOINT}: corrupt checkpoint" in line
        assert (out / CHECKPOINT).read_bytes() == garbage  # not overwritten or removed
        assert sorted(p.name for p in out.iterdir()) == [CHECKPOINT]


def test_resume_without_checkpoint(humanlegs_osim, tmp_path, capsys):
    out = tmp_path / "never_ran"
    assert main(["optimize", str(humanlegs_osim), "--speed", "1.3", "--resume", "--out", str(out)]) == 2
    assert f"{out / CHECKPOINT}: no checkpoint to resume from" in error_line(capsys)
    assert not out.exists()


def test_init_from_another_creature(finished_run, humanlegs_osim, small_settings, tmp_path, capsys):
    best = json.loads((finished_run / "best.json").read_text())
    assert best["creature"] == "HumanLegs"
    best["creature"] = "Ostrich"
    init = tmp_path / "ostrich_best.json"
    init.write_text(json.dumps(best))
    out = tmp_path / "run"
    assert optimize(humanlegs_osim, out, "--init", str(init)) == 2
    line = error_line(capsys)
    assert str(init) in line and "creature: parameters of 'Ostrich'" in line
    assert "--init-from-other-creature" in line
    assert not (out / CHECKPOINT).exists()
    # allowed on request: the parameters both share start the search
    opt = Optimization(
        small_settings(init=str(init), init_other_creature=True), tmp_path / "ok", progress=False
    )
    x0 = opt._warm_start(init).x
    assert x0 == pytest.approx(opt.space.x_from_values(opt.space.flatten(best["parameters"])))
    assert np.any(x0 != 0)


@pytest.mark.parametrize(
    "content, key",
    [
        ("[1, 2]", "expected a JSON object"),
        ('{"parameters": [1]}', "parameters: expected an object"),
        ('{"parameters": {"controller": 5}}', "parameters.controller: expected an object"),
        ('{"parameters": {"model": {"routing": 3}}}', "parameters.model.routing: expected an object"),
        (
            '{"parameters": {"controller": {"fsm.d_lift": "abc"}}}',
            "fsm.d_lift: expected a finite number, got 'abc'",
        ),
        (
            '{"parameters": {"controller": {"fsm.d_lift": NaN}}}',
            "fsm.d_lift: expected a finite number, got nan",
        ),
        (
            '{"parameters": {"controller": {"no.such": 1.0}}}',
            "parameters: none of them belongs to this model",
        ),
        ("{not json", "not valid JSON"),
    ],
)
def test_bad_init_file(humanlegs_osim, tmp_path, capsys, content, key):
    init = tmp_path / "init.json"
    init.write_text(content)
    out = tmp_path / "run"
    assert optimize(humanlegs_osim, out, "--init", str(init)) == 2
    line = error_line(capsys)
    assert f"{init}: " in line and key in line, line
    assert not (out / CHECKPOINT).exists()


def test_init_file_missing(humanlegs_osim, tmp_path, capsys):
    assert optimize(humanlegs_osim, tmp_path / "run", "--init", str(tmp_path / "nope.json")) == 2
    assert "nope.json: --init file not found" in error_line(capsys)


def test_a_warm_start_never_reports_a_worse_best(finished_run, small_settings, tmp_path, monkeypatch):
    """The warm start is evaluated in the first generation (same task, deterministic simulation),
    so even one generation around it keeps a best at least as good (the quick budget)."""
    start = json.loads((finished_run / "best.json").read_text())
    state = Optimization(
        small_settings(generations=1, duration=0.1, sigma=2.0, seed=11, init=str(finished_run / "best.json")),
        tmp_path / "warm",
        progress=False,
    ).run()
    assert state.best_score <= start["objective"] + 1e-9
    # the injected candidate is the warm start exactly, also where it sits on a bound
    opt = Optimization(
        small_settings(generations=1, duration=0.1, init=str(finished_run / "best.json")),
        tmp_path / "exact",
        progress=False,
    )
    x0 = opt._warm_start(finished_run / "best.json").x
    first = opt.state.es.ask()[0]
    assert np.max(np.abs(first - np.clip(x0, opt.space.lower_x, opt.space.upper_x))) < 1e-12
    # ... and is simulated with the warm start's values to the last bit (decoding its CMA-ES
    # vector moves some by an ulp, and a gait is chaotic in them), the others decoded as usual
    flat = opt.space.flatten(start["parameters"])
    values = opt._values(first)
    assert all(
        values[e.name] == flat[e.name] for e in opt.space.optimized if e.lower <= flat[e.name] <= e.upper
    )
    other = opt.state.es.ask()[1]
    assert opt._values(other) == opt.space.values(other)
    # a warm-start value whose CMA-ES coordinate does not decode back to itself
    space, i = opt.space, 0
    name = space.optimized[i].name
    for v in np.linspace(space.optimized[i].lower, space.optimized[i].upper, 1001)[1:-1]:
        if space.initial[i] + (v - space.initial[i]) / space.scale[i] * space.scale[i] != v:
            break
    else:
        pytest.fail("every value decoded exactly")
    changed = dict(start, parameters=space.structured({**flat, name: float(v)}))
    (tmp_path / "inexact.json").write_text(json.dumps(changed))
    opt = Optimization(
        small_settings(generations=1, duration=0.1, sigma=2.0, init=str(tmp_path / "inexact.json")),
        tmp_path / "inexact",
        progress=False,
    )
    assert opt.space.values(opt.state.start_x)[name] != v
    # what the evaluator is given, and what best.json says when the warm start stays the best
    received = []

    class Recording(SerialEvaluator):
        def map(self, task, values):
            received.extend(values)
            return super().map(task, values)

    monkeypatch.setattr(driver, "make_evaluator", lambda *args, **kwargs: Recording())
    state = opt.run()
    assert received[0][name] == v and all(r[name] != v for r in received[1:])
    assert np.max(np.abs(state.best_x - state.start_x)) <= driver.START_MATCH  # sigma 2: the rest fall
    best = json.loads((tmp_path / "inexact" / "best.json").read_text())
    assert opt.space.flatten(best["parameters"])[name] == v


@pytest.mark.parametrize(
    "text, message",
    [
        ("{a: [", "--parameters: not a YAML mapping"),
        ("[1]", "--parameters: expected a mapping"),
        ("{kne.theta: {lower: 0}}", "--parameters: parameters[kne.theta]: matches no parameter"),
        ("{knee.theta: {start: 9}}", "--parameters: parameters[knee.theta].start: 9 is outside the bounds"),
        (
            "{'knee_overextension.*': {free: yes please}}",
            "--parameters: parameters[knee_overextension.*].free: expected true",
        ),
    ],
)
def test_bad_parameters_option(humanlegs_osim, tmp_path, capsys, text, message):
    out = tmp_path / "run"
    assert optimize(humanlegs_osim, out, "--parameters", text) == 2
    assert message in error_line(capsys)
    assert not out.exists()


def test_parameters_option_sets_the_search_space(humanlegs_osim, tmp_path):
    out = tmp_path / "run"
    assert optimize(humanlegs_osim, out, "--parameters", "{'knee_overextension.*': {free: true}}") == 0
    log = (out / "log.txt").read_text()
    assert "controller features beyond the paper, optimized: knee_overextension" in log
    best = json.loads((out / "best.json").read_text())["parameters"]["controller"]
    assert 0.0 <= best["knee_overextension.gain"] <= 5.0
