"""The one helper that imports a user's file: what runs, what is said when it fails."""

from __future__ import annotations

import sys

import pytest

from tfperf.core.usercode import UserCodeError, import_file, main_guard_lines, runs_at_import


def test_the_file_runs_as_an_import_with_its_folder_on_the_path(tmp_path):
    (tmp_path / "helper_mod_xyz.py").write_text("VALUE = 41\n")
    target = tmp_path / "user.py"
    target.write_text("import helper_mod_xyz\nANSWER = helper_mod_xyz.VALUE + 1\n"
                      "if __name__ == '__main__':\n    raise SystemExit('must not run')\n")
    module = import_file(target)
    assert module.ANSWER == 42 and module.__name__ != "__main__"
    assert str(tmp_path) not in sys.path  # the folder is on the path only while it runs
    sys.modules.pop("helper_mod_xyz", None)


@pytest.mark.parametrize("text, message", [
    ("x = 1\nraise ValueError('bad input')\n", "ValueError: bad input (line 2)"),
    ("def broken(:\n", "SyntaxError"),
    ("import sys\nsys.exit(3)\n", "SystemExit: 3 (line 2)"),
])
def test_what_the_file_raises_becomes_one_clear_error(tmp_path, text, message):
    target = tmp_path / "bad.py"
    target.write_text(text)
    with pytest.raises(UserCodeError, match="importing it failed") as info:
        import_file(target)
    assert message in str(info.value)


def test_missing_and_non_python_files(tmp_path):
    with pytest.raises(UserCodeError, match="no such file"):
        import_file(tmp_path / "nope.py")
    with pytest.raises(UserCodeError, match="not a Python file"):
        import_file(tmp_path)


def test_main_guard_lines_and_what_runs_at_import(tmp_path):
    target = tmp_path / "script.py"
    target.write_text("a = 1\nif __name__ == '__main__':\n    b = 2\n    c = 3\n"
                      "if '__main__' == __name__:\n    d = 4\n")
    assert main_guard_lines(target) == [(2, 4), (5, 6)]
    assert runs_at_import(target, 1) and not runs_at_import(target, 3)
    assert main_guard_lines(tmp_path / "missing.py") == []
