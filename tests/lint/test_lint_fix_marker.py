"""`[*]` and the `fixable` column promise what plain `--fix` does: a finding whose only fix is
unsafe (TFP602 on a stateful map) was marked `[*]` and counted fixable, then `--fix` left it
as it was and the closing line said "1 more with --unsafe-fixes"."""

from __future__ import annotations

from pathlib import Path

from tfperf.cli import main

UNSAFE_ONLY = ("import tensorflow as tf\n"
               "ds = tf.data.Dataset.range(10).map(\n"
               "    lambda v: tf.numpy_function(abs, [v], tf.int64))\n")
SAFE = ("import tensorflow as tf\n"  # TFP401 on a plain tensor: a safe fix
        "x = tf.ones([2, 3, 4, 5])\n"
        "z = tf.transpose(tf.transpose(x, [0, 2, 3, 1]), [0, 3, 1, 2])\n")


def _lint(capsys, *argv: str) -> str:
    main(["lint", "--no-cache", *argv])
    return capsys.readouterr().out


def _row(out: str, code: str) -> list[str]:
    """The closing table's row: count, code, name, files, fixable."""
    return next(cells for cells in map(str.split, out.splitlines())
                if len(cells) == 5 and cells[0].isdigit() and cells[1] == code)


def test_an_unsafe_only_fix_is_not_marked_fixable(tmp_path: Path, capsys):
    f = tmp_path / "pipe.py"
    f.write_text(UNSAFE_ONLY)
    out = _lint(capsys, str(f))
    assert "TFP602 Dataset.map" in out and "[*]" not in out
    assert _row(out, "TFP602")[-1] == "0"
    assert out.rstrip().endswith("1 fixable with --unsafe-fixes.")
    fixed = _lint(capsys, "--fix", str(f))
    assert f.read_text() == UNSAFE_ONLY and "TFP602" in fixed  # plain --fix: as promised
    _lint(capsys, "--fix", "--unsafe-fixes", str(f))
    assert "num_parallel_calls" in f.read_text()


def test_a_safe_fix_keeps_its_mark_and_count(tmp_path: Path, capsys):
    f = tmp_path / "pipe.py"
    f.write_text(SAFE)
    out = _lint(capsys, "--preview", "--select", "TFP401", str(f))
    assert "TFP401 [*]" in out
    assert _row(out, "TFP401")[-1] == "1"
    assert "1 fixable with --fix" in out and "--unsafe-fixes" not in out
    _lint(capsys, "--preview", "--select", "TFP401", "--fix", str(f))
    assert "z = x\n" in f.read_text()


def test_a_fix_refused_by_the_file_is_not_offered_again(tmp_path: Path, capsys):
    """`--fix` on a read-only file: refused (one error line, file untouched), and the closing
    line used to offer the same fix again: "1 fixable with --fix"."""
    f = tmp_path / "pipe.py"
    f.write_text(SAFE)
    f.chmod(0o444)
    assert main(["lint", "--no-cache", "--preview", "--select", "TFP401", "--fix", str(f)]) == 2
    out = capsys.readouterr()
    assert "1 fix not applied (the errors below say why)." in out.out
    assert "fixable with --fix" not in out.out and "read-only file" in out.err
    assert f.read_text() == SAFE
