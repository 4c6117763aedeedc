"""TFP106 through a parameter (issue 25: `tf.map_fn(h, X)` with `h` a parameter): the mapped
function is judged at the callers, here across three modules (the map in one, the function
in another, the call in a third). The examples' spellings run in test_lint_rule_examples.py;
here the cache: editing the mapped function in its module changes the finding on a warm run
exactly as on a cold one, and one caller that maps what only a loop can do keeps it quiet."""

from __future__ import annotations

from project_files import found, write_project

from tfperf.lint.session import LintRequest, run

MAPLIB = """
    import tensorflow as tf
    def apply(h, X):
        return tf.map_fn(h, X)
"""
ROWS = """
    import tensorflow as tf
    def per_row(r):
        return {body}
"""
TRAIN = """
    import tensorflow as tf
    from lib.maplib import apply
    from lib.rows import per_row
    X = tf.ones([64, 8])
    for epoch in range(10):
        y = apply(per_row, X)
"""
BATCHABLE = "tf.reduce_sum(r * 2.0)"
HOST = "tf.py_function(lambda v: v * 2, [r], tf.float32)"


def _files(body: str) -> dict[str, str]:
    return {"train.py": TRAIN, "lib/__init__.py": "", "lib/maplib.py": MAPLIB,
            "lib/rows.py": ROWS.format(body=body)}


def _cold(root):
    return found(run(LintRequest(paths=[str(root)], cache=False, select=["TFP106"])),
                 root, "TFP106")


def test_the_map_over_a_parameter_is_judged_at_its_caller_in_another_module(tmp_path):
    write_project(tmp_path, _files(BATCHABLE))
    got = _cold(tmp_path)
    assert [(p, line) for _, p, line, _ in got] == [("lib/maplib.py", 4)]
    assert "per_row passed in as h at train.py:7" in got[0][3]
    write_project(tmp_path, _files(HOST))  # the VALID twin: a host call per row
    assert _cold(tmp_path) == []


def test_one_caller_mapping_a_host_call_keeps_the_map(tmp_path):
    files = _files(BATCHABLE)
    files["serve.py"] = """
        import tensorflow as tf
        from lib.maplib import apply
        def to_text(r):
            return tf.py_function(lambda v: v, [r], tf.float32)
        y = apply(to_text, tf.ones([4, 8]))
    """
    write_project(tmp_path, files)
    assert _cold(tmp_path) == []


def test_warm_run_after_the_mapped_function_changed_equals_a_cold_run(tmp_path):
    root = tmp_path / "proj"
    write_project(root, _files(BATCHABLE))
    req = LintRequest(paths=[str(root)], cache_dir=tmp_path / "cache", select=["TFP106"])
    assert len(found(run(req), root, "TFP106")) == 1
    write_project(root, {"lib/rows.py": ROWS.format(body=HOST)})
    warm = found(run(req), root, "TFP106")
    assert warm == _cold(root) == []
    write_project(root, {"lib/rows.py": ROWS.format(body=BATCHABLE)})
    warm = found(run(req), root, "TFP106")
    assert warm == _cold(root) and len(warm) == 1
