"""The Snakemake workflow parses and plans the whole chain; analyze works on a simulation."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from musclewalk.cli import main

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("budget", ["quick", "paper"])
def test_snakemake_plans_the_chain(tmp_path, budget):
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "2", "all", "--directory",
         str(tmp_path), "--snakefile", str(REPO / "Snakefile"), "--configfile",
         str(REPO / "config" / "config.yaml"), "--config", f"budget={budget}"],
        capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    for rule in ("build_model", "render_model", "optimize", "simulate_best", "analyze", "report"):
        assert rule in out


def test_analyze_summary(built_models, tmp_path, capsys):
    sim_dir = tmp_path / "sim"
    assert main(["simulate", str(built_models["HumanLegs"]), "--speed", "1.3", "--duration", "0.5",
                 "--out", str(sim_dir)]) == 0
    out = tmp_path / "analysis.json"
    assert main(["analyze", str(sim_dir), "-o", str(out)]) == 0
    result = json.loads(out.read_text())
    summary = json.loads((sim_dir / "summary.json").read_text())
    assert result["distance"] == pytest.approx(summary["distance"])
    # basal metabolism alone is 1.51 W/kg; muscles add to it
    assert result["mean_metabolic_rate_W"] > 1.51 * result["body_mass_kg"]
    assert main(["analyze", str(tmp_path / "nothing"), "-o", str(out)]) == 2


def test_filmstrip_places_the_feet_on_the_ground(built_models, tmp_path):
    from musclewalk.analysis.filmstrip import render_filmstrip, skeleton_frames
    sim_dir = tmp_path / "sim"
    assert main(["simulate", str(built_models["HumanLegs"]), "--speed", "1.3", "--duration", "0.3",
                 "--out", str(sim_dir)]) == 0
    frames = skeleton_frames(sim_dir, every=0.1)
    assert list(frames["time"][:3]) == pytest.approx([0.0, 0.1, 0.2])
    # the first frame is the initial state: the lowest contact point touches the ground and the
    # COM is where summary/controller say it starts (about the root height)
    lowest = frames["segments"][0][..., 1].min()
    assert lowest == pytest.approx(0.02, abs=0.02)          # sphere centres, radius 2 cm
    assert 0.8 < frames["com"][0][1] < 1.1
    png = render_filmstrip(sim_dir, tmp_path / "strip.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["analyze", str(sim_dir), "-o", str(tmp_path / "a.json"), "--picture",
                 str(tmp_path / "b.png")]) == 0
    assert (tmp_path / "b.png").stat().st_size > 1000
    assert list(skeleton_frames(sim_dir, 0.1, window=(0.1, 0.2))["time"]) == pytest.approx([0.1, 0.2])
    with pytest.raises(SystemExit) as bad:
        main(["analyze", str(sim_dir), "-o", str(tmp_path / "c.json"), "--picture",
              str(tmp_path / "c.png"), "--window", "0.3,0.1"])
    assert bad.value.code == 2 and not (tmp_path / "c.png").exists()


def test_snakemake_lint_has_no_findings():
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--lint"], capture_output=True,
                          text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0 and "Lints for" not in proc.stdout + proc.stderr, \
        (proc.stdout + proc.stderr)[-3000:]


def test_the_tiny_test_config_runs_the_whole_chain(tmp_path):
    """.test/config/config.yaml: build, render, optimize (1 generation of 0.2 s), simulate,
    analyze and report, for real."""
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", "all", "--directory", str(tmp_path),
         "--snakefile", str(REPO / "Snakefile"), "--configfile",
         str(REPO / ".test" / "config" / "config.yaml")],
        capture_output=True, text=True, cwd=REPO, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = (tmp_path / "results" / "report.md").read_text()
    assert "| HumanLegs-walk-1.3 |" in report and "tiny (1 generations" in report
    best = json.loads((tmp_path / "results/optimize/HumanLegs-walk-1.3/best.json").read_text())
    assert best["evaluations"] == 20 and best["duration"] == 0.2
    # 0.2 s hold no gait cycle: the comparison says so and the workflow goes on
    comparison = json.loads((tmp_path / "results/compare/HumanLegs-walk-1.3/comparison.json")
                            .read_text())
    assert "no complete gait cycle after 2 s" in comparison["error"]
    assert "no complete gait cycle" in report
    # where the knee's and ankle's error lies: n/a without a gait cycle
    assert "| HumanLegs-walk-1.3 | n/a | n/a | n/a | n/a |" in report
    # where each leg muscle's excitation comes from, per run
    assert "Where each muscle's excitation comes from" in report
    assert "| vasti |" in report and "force_feedback" in report
    # whether each run reproduces its committed controller's record (none here: a tiny run)
    assert "Reproduced on this machine" in report and "- HumanLegs-walk-1.3: no committed record" in report
    assert (tmp_path / "results/compare/HumanLegs-walk-1.3/kinematics.png").stat().st_size > 0
    assert (tmp_path / "results/compare/HumanLegs-walk-1.3/kinetics.png").stat().st_size > 0
    # the Snakemake HTML report of the run, with the figures and their captions
    html = tmp_path / "report.html"
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "all", "--directory", str(tmp_path), "--snakefile",
         str(REPO / "Snakefile"), "--configfile", str(REPO / ".test" / "config" / "config.yaml"),
         "--report", str(html)], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = html.read_text()
    assert "Against human data" in text and "Gaits" in text
