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
    with pytest.raises(UserCodeError, match="a folder, not a file"):
        import_file(tmp_path)
    (tmp_path / "notes.txt").write_text("x = 1\n")
    with pytest.raises(UserCodeError, match="not a Python file"):
        import_file(tmp_path / "notes.txt")


def test_main_guard_lines_and_what_runs_at_import(tmp_path):
    target = tmp_path / "script.py"
    target.write_text("a = 1\nif __name__ == '__main__':\n    b = 2\n    c = 3\n"
                      "if '__main__' == __name__:\n    d = 4\n")
    assert main_guard_lines(target) == [(2, 4), (5, 6)]
    assert runs_at_import(target, 1) and not runs_at_import(target, 3)
    assert main_guard_lines(tmp_path / "missing.py") == []


# --- checking a file before anything runs (issue 24: bad input first) ---------------------

from tfperf.core.usercode import (  # noqa: E402
    check_module,
    check_output_path,
    check_user_file,
)


def _user_file(tmp_path, text, name="user.py"):
    path = tmp_path / name
    path.write_text(text)
    return check_user_file(path)


@pytest.mark.parametrize(("content", "message"), [
    (b"", "the file is empty"),
    (b"# only a comment\n\n", "the file is empty"),
    (b"\x7fELF\x00\x01", "a binary file, not Python source"),
    (b"x = '\xe9'\n", r"not UTF-8 text \(byte 0xe9 at offset 5\)"),
    (b"# -*- coding: no-such-codec -*-\nx = 1\n", "cannot decode it"),
    (b"x = 1\n  y = 2\n", "syntax error at line 2: unexpected indent"),
    (b"def f(:\n", "syntax error at line 1"),
])
def test_a_file_that_cannot_run_is_one_line_and_nothing_runs(tmp_path, content, message):
    path = tmp_path / "user.py"
    path.write_bytes(content)
    with pytest.raises(UserCodeError, match=message) as info:
        check_user_file(path)
    assert "\n" not in str(info.value) and str(info.value).startswith(str(path))


def test_a_coding_line_is_honoured(tmp_path):
    path = tmp_path / "old.py"
    path.write_bytes(b"# -*- coding: latin-1 -*-\nname = '\xe9'\ndef f(x):\n    return x\n")
    check_user_file(path).require_function("f")


def test_paths_that_lead_to_no_file(tmp_path):
    (tmp_path / "a.py").symlink_to("b.py")
    (tmp_path / "b.py").symlink_to("a.py")
    (tmp_path / "dangling.py").symlink_to("gone.py")
    (tmp_path / "pkg.py").mkdir()
    for name, message in [("missing.py", "no such file"), ("a.py", "a symlink loop"),
                          ("dangling.py", "a symlink to a missing file"),
                          ("pkg.py", "a folder, not a file")]:
        with pytest.raises(UserCodeError, match=message):
            check_user_file(tmp_path / name)
    import os

    os.mkfifo(tmp_path / "pipe.py")  # reading it would block: refused unopened
    with pytest.raises(UserCodeError, match="not a regular file"):
        check_user_file(tmp_path / "pipe.py")


def test_a_function_is_found_however_the_module_binds_it(tmp_path):
    uf = _user_file(tmp_path, (
        "import tensorflow as tf\nfrom math import sqrt as root\n"
        "def plain(x):\n    return x\n"
        "class Model:\n    def step(self):\n        pass\n"
        "fast = tf.function(plain)\n"
        "if True:\n    def later():\n        pass\n"
        "try:\n    from numpy import mean\nexcept ImportError as missing:\n    pass\n"
        "for looped in range(2):\n    pass\n"
        "@tf.function\n@__import__('tfperf').variant(name='renamed')\ndef impl(x):\n"
        "    return x\n"
        "def setter():\n    global made_later\n    made_later = 1\n"))
    for name in ("plain", "Model.step", "fast", "later", "mean", "missing", "looped",
                 "renamed", "root", "made_later", "tf"):
        uf.require_function(name)
    with pytest.raises(UserCodeError, match=r"no function 'nope' at module level \(it "
                                            r"defines plain, Model, impl, setter\)"):
        uf.require_function("nope")
    with pytest.raises(UserCodeError, match="no function 'inner'"):
        _user_file(tmp_path, "def outer():\n    def inner():\n        pass\n") \
            .require_function("inner")


@pytest.mark.parametrize("text", [
    "from helpers import *\n",
    "globals()['made'] = len\n",
    "def __getattr__(name):\n    return len\n",
])
def test_a_module_that_binds_names_dynamically_is_left_to_the_import(tmp_path, text):
    _user_file(tmp_path, text).require_function("made")  # cannot be judged: no error


def test_what_the_file_may_declare(tmp_path):
    assert _user_file(tmp_path, "import tfperf\n@tfperf.inputs\ndef make():\n    pass\n") \
        .may_declare("inputs")
    assert _user_file(tmp_path, "from tfperf import inputs as i\n").may_declare("inputs")
    assert not _user_file(tmp_path, "import tensorflow\ndef f(x):\n    pass\n") \
        .may_declare("inputs")
    (tmp_path / "shared.py").write_text("")  # a neighbour may declare it when imported
    assert _user_file(tmp_path, "import shared\n").may_declare("inputs")
    assert _user_file(tmp_path, "from . import shared\n").may_declare("inputs")


def test_the_parameters_a_call_must_be_given(tmp_path):
    uf = _user_file(tmp_path, "def f(a, b=1, *rest, c, d=2, **kw):\n    pass\n"
                              "g = f\nclass C:\n    pass\n")
    assert uf.required_parameters("f") == ["a", "c"]
    assert uf.required_parameters("g") is None and uf.required_parameters("C") is None


def test_a_module_name_is_found_without_importing_it(tmp_path, monkeypatch):
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("raise SystemExit('imported')\n")
    (tmp_path / "mypkg" / "steps.py").write_text("def train():\n    pass\n")
    monkeypatch.chdir(tmp_path)
    found = check_module("mypkg.steps")
    assert found is not None and found.path.name == "steps.py"
    with pytest.raises(UserCodeError, match=r"mypkg\.steps: no function 'nope'"):
        found.require_function("nope")
    assert "mypkg" not in sys.modules
    with pytest.raises(UserCodeError, match="no module named 'no_such_module_xyz'"):
        check_module("no_such_module_xyz")
    assert check_module("sys") is None  # built in: the import decides


def test_output_paths_that_cannot_be_written(tmp_path):
    (tmp_path / "file").write_text("x")
    (tmp_path / "loop").symlink_to("loop")
    check_output_path(tmp_path / "new" / "deeper" / "run.json", "--save")  # made on write
    check_output_path(tmp_path / "file", "--save")  # replaced on write
    with pytest.raises(UserCodeError, match=r"--save .*file/run\.json: .*file is a file, "
                                            "not a folder"):
        check_output_path(tmp_path / "file" / "run.json", "--save")
    with pytest.raises(UserCodeError, match=r"--plot .*loop: a symlink loop"):
        check_output_path(tmp_path / "loop", "--plot")


def test_a_report_is_never_written_over_a_folder_or_a_users_source(tmp_path):
    # found before the run, not after minutes of timing (the run would be lost), and a
    # mistyped `--html train.py` never replaces the script by a report
    (tmp_path / "d").mkdir()
    (tmp_path / "train.py").write_text("print(1)\n")
    (tmp_path / "nb.ipynb").write_text("{}")
    (tmp_path / "old.html").write_text("<html></html>")
    for option in ("--html", "--save", "--plot"):
        with pytest.raises(UserCodeError, match=rf"^{option} .*d: is a folder; give a file "
                                                "name$"):
            check_output_path(tmp_path / "d", option)
    for name in ("train.py", "nb.ipynb"):
        with pytest.raises(UserCodeError, match=rf"--html .*{name}: an existing Python "
                                                "source or notebook; tfperf writes no report "
                                                "over it"):
            check_output_path(tmp_path / name, "--html")
    check_output_path(tmp_path / "old.html", "--html")  # a report of an earlier run: replaced
    for option in ("--store", "--logdir"):  # these name folders
        check_output_path(tmp_path / "d", option)
    check_output_path(tmp_path / "d", "--plot", folder=True)  # the suite's plots: a folder
