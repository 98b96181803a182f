"""io_checks.read_json / read_json_object: every JSON input (parameter files, optimizer bests,
simulation summaries) fails in one line naming the file, with the caller's error type."""

import pytest

from musclewalk.io_checks import read_json, read_json_object


class _InputError(ValueError):
    pass


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: None, "best.json: result file not found"),
        (lambda p: p.write_text("{not json"), "best.json: not valid JSON"),
        (lambda p: p.write_bytes(b"\xff\xfe{"), "best.json: not valid JSON"),
        (lambda p: p.mkdir(), "best.json: a folder, not a result file"),
    ],
    ids=["missing", "not-json", "not-utf8", "a-folder"],
)
def test_a_bad_json_file_is_one_error_naming_it(tmp_path, make, message):
    path = tmp_path / "best.json"
    make(path)
    for read in (read_json, read_json_object):
        with pytest.raises(_InputError, match=message) as caught:
            read(path, _InputError, "result file")
        assert str(caught.value).startswith(str(path))


def test_only_read_json_object_requires_an_object(tmp_path):
    path = tmp_path / "list.json"
    path.write_text("[1, 2]")
    assert read_json(path, _InputError, "file") == [1, 2]
    with pytest.raises(_InputError, match="list.json: expected a JSON object"):
        read_json_object(path, _InputError, "file")
    path.write_text('{"speed": 1.3}')
    assert read_json_object(path, _InputError, "file") == {"speed": 1.3}


def test_an_unreadable_file_is_one_error_naming_it(tmp_path, monkeypatch):
    path = tmp_path / "best.json"
    path.write_text("{}")

    def refuse(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(type(path), "read_text", refuse)
    for read in (read_json, read_json_object):
        with pytest.raises(_InputError, match="best.json: cannot read the result file .Permission denied."):
            read(path, _InputError, "result file")
