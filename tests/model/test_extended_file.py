"""io_checks.extended_file: the one check of ``extends:`` that objective, task and experiment
files share; each bad header is one error of the caller's type naming the file and the key."""

import pytest

from musclewalk.io_checks import extended_file


class _InputError(ValueError):
    pass


def _named(tmp_path):
    def find(name):
        path = tmp_path / "library" / f"{name}.yaml"
        if not path.is_file():
            raise _InputError(f"thing {name!r}: unknown")
        return path

    return find


def test_a_file_or_a_name_is_the_extended_file_and_the_chain_grows(tmp_path):
    (tmp_path / "library").mkdir()
    (tmp_path / "library" / "walk.yaml").write_text("{}")
    (tmp_path / "base.yaml").write_text("{}")
    (tmp_path / "sub").mkdir()
    child = tmp_path / "sub" / "child.yaml"
    data = {"extends": "../base.yaml", "description": "d"}
    parent, chain = extended_file(child, data, (), _InputError, "thing")
    assert parent.resolve() == (tmp_path / "base.yaml").resolve() and chain == (child.resolve(),)
    assert "extends" not in data  # popped: the rest of the file's values are its own
    parent, chain = extended_file(
        child, {"extends": "walk", "description": "d"}, chain, _InputError, "thing", _named(tmp_path)
    )
    assert parent == tmp_path / "library" / "walk.yaml" and len(chain) == 2


@pytest.mark.parametrize(
    "data, named, message",
    [
        ({"extends": 3, "description": "d"}, False, "extends: expected a thing .yaml file, got 3"),
        ({"extends": "walk", "description": "d"}, False, "extends: expected a thing .yaml file"),
        ({"extends": 3, "description": "d"}, True, "extends: expected a thing name or a .yaml file"),
        ({"extends": "base.yaml"}, False, "description: required in a file that extends another thing"),
        (
            {"extends": "missing.yaml", "description": "d"},
            False,
            "extends: .*missing.yaml: no such thing file",
        ),
        ({"extends": "run", "description": "d"}, True, "extends: thing 'run': unknown"),
        (
            {"extends": "child.yaml", "description": "d"},
            False,
            "extends: 'child.yaml' extends this file again",
        ),
    ],
    ids=[
        "not-a-string",
        "a-name-without-names",
        "not-a-name",
        "no-description",
        "missing",
        "unknown-name",
        "cycle",
    ],
)
def test_a_bad_extends_is_one_error_naming_the_file(tmp_path, data, named, message):
    (tmp_path / "library").mkdir()
    (tmp_path / "base.yaml").write_text("{}")
    child = tmp_path / "child.yaml"
    child.write_text("{}")
    with pytest.raises(_InputError, match=message) as caught:
        extended_file(child, dict(data), (), _InputError, "thing", _named(tmp_path) if named else None)
    assert str(caught.value).startswith(f"{child}: ")
