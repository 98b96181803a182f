"""Issue 10 item 4: a parameter file must fit the model it drives (creature, the routing and
muscle properties its optimization wrote, every controller parameter), or `simulate` refuses
it in one line before simulating."""

import json
from pathlib import Path

from musclewalk.cli import main

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "models" / "optimized" / "HumanLegs-walk-1.3"


def simulate(model, params, out, *extra):
    return main(
        [
            "simulate",
            str(model),
            "--speed",
            "1.3",
            "--duration",
            "0.02",
            "--params",
            str(params),
            "--out",
            str(out),
            *extra,
        ]
    )


def error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("musclewalk simulate: error: "), err
    return err[0]


def test_a_best_json_on_the_template_it_started_from(built_models, tmp_path, capsys):
    """The committed best.json on a freshly built HumanLegs: its routing and muscle properties
    would be ignored (it fell at 0.38 s); refused, naming the parameter and the model."""
    out = tmp_path / "run"
    assert simulate(built_models["HumanLegs"], COMMITTED / "best.json", out) == 2
    line = error_line(capsys)
    assert f"{COMMITTED / 'best.json'}: model.routing." in line
    assert f"differs from {built_models['HumanLegs']}" in line and "optimized.osim" in line
    assert not out.exists()
    # on its own optimized.osim it is accepted
    assert simulate(COMMITTED / "optimized.osim", COMMITTED / "best.json", out) == 0


def test_a_file_of_another_creature(built_models, tmp_path, capsys):
    data = json.loads((COMMITTED / "best.json").read_text())
    data["creature"] = "Ostrich"
    del data["parameters"]["model"]
    params = tmp_path / "ostrich.json"
    params.write_text(json.dumps(data))
    assert simulate(built_models["HumanLegs"], params, tmp_path / "run") == 2
    assert "creature: the parameters are of 'Ostrich', the model is 'HumanLegs'" in error_line(capsys)


def test_missing_parameters_need_fill_defaults(built_models, tmp_path, capsys):
    data = json.loads((COMMITTED / "best.json").read_text())["parameters"]
    del data["model"]
    for name in list(data["controller"])[::2]:
        del data["controller"][name]
    params = tmp_path / "half.json"
    params.write_text(json.dumps(data))
    assert simulate(built_models["HumanLegs"], params, tmp_path / "run") == 2
    line = error_line(capsys)
    assert f"{params}: " in line and "missing" in line and "--fill-defaults" in line
    assert not (tmp_path / "run").exists()
    assert simulate(built_models["HumanLegs"], params, tmp_path / "run", "--fill-defaults") == 0
