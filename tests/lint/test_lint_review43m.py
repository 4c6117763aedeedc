"""Review 43 of branch lint43m: broken symlinks and the lazily imported default rules.

* A run whose only paths are broken symlinks linted nothing: it must not pass as clean code
  (exit 0). Its twin, a broken symlink beside a real file, stays a note and the file is
  linted.
* A walked symlink in a loop or through a file (``x.py -> real.py/x.py``) was dropped without
  a word, while a dangling one got a note: each is now a note too.
* ``registry.default_rules`` reads each rule module's ``group =`` line: a line that is not a
  plain string literal (a conditional, a name) must not be read as the group.
"""

from __future__ import annotations

from pathlib import Path

from tfperf.cli import main
from tfperf.lint import registry

REAL = "import tensorflow as tf\n\nfor x in tf.data.Dataset.range(3):\n    print(x.numpy())\n"


def test_only_broken_symlinks_given_is_an_error_not_a_clean_run(tmp_path, capsys):
    gone = tmp_path / "gone.py"
    gone.symlink_to(tmp_path / "moved" / "gone.py")
    gone_dir = tmp_path / "pkg"
    gone_dir.symlink_to(tmp_path / "moved")
    for argv in ([str(gone)], [str(gone_dir)], [str(gone), str(gone_dir)]):
        assert main(["lint", "--no-cache", *argv]) == 2, argv
        err = capsys.readouterr().err
        assert f"tfperf lint: error: {argv[0]}: broken symlink" in err, argv
        assert "Traceback" not in err
    # Twin: beside a real file it is a note, the file is linted, no error.
    real = tmp_path / "real.py"
    real.write_text(REAL)
    assert main(["lint", "--no-cache", str(gone), str(real)]) == 0
    err = capsys.readouterr().err
    assert f"tfperf lint: {gone}: broken symlink, skipped" in err and "error" not in err


def test_a_walked_symlink_loop_or_link_through_a_file_is_said(tmp_path, capsys):
    (tmp_path / "real.py").write_text(REAL)
    (tmp_path / "loop.py").symlink_to("loop.py")
    (tmp_path / "through.py").symlink_to(tmp_path / "real.py" / "x.py")
    (tmp_path / "notes.txt").symlink_to("notes.txt")  # not a lintable name: nothing said
    assert main(["lint", "--no-cache", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert f"tfperf lint: {tmp_path / 'loop.py'}: symlink loop, skipped" in err
    assert f"tfperf lint: {tmp_path / 'through.py'}: broken symlink, skipped" in err
    assert "notes.txt" not in err and "in 1 file" in err and "error" not in err


def test_only_a_plain_string_group_line_is_read():
    assert registry.group_written('class R(Rule):\n    group = "perf"\n') == "perf"
    assert registry.group_written('class R(Rule):\n    group = "perf"  # measured\n') == "perf"
    for text in ('class R(Rule):\n    group = "preview" if OLD else "perf"\n',
                 'class R(Rule):\n    group = "perf" + SUFFIX\n',
                 'class R(Rule):\n    group = GROUP\n',
                 'class R(Rule):\n    code = "TFP999"\n',
                 'class R(Rule):\n    group = "perf"\n\nclass S(Rule):\n    group = "perf"\n'):
        assert registry.group_written(text) is None, text


def test_every_rule_class_has_its_modules_written_group():
    """Per class, not per module: a module with a second class of another group (inherited
    from elsewhere) would be imported, or not, by its line alone."""
    written = registry.written_groups()
    assert written is not None
    for cls in registry.rule_classes():
        module = cls.__module__.rsplit(".", 1)[1]
        assert written[module] == cls.group, (cls.code, module)
    assert Path(registry.__file__).is_file()
