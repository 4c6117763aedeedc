"""TFP602 from TF 2.6: a map whose function is stateful only through another module of the
project (recall round 5's F006: a parser class whose augmentation, in another module, draws
random numbers). The examples' five spellings run in test_lint_rule_examples.py; here the
cache: editing the callee in the other module changes the finding on a warm run exactly as
on a cold one."""

from __future__ import annotations

from project_files import found, write_project

from tfperf.lint.session import LintRequest, run

LOADER = """
    import tensorflow as tf
    from data import parser as parser_module
    def loader(files):
        parser = parser_module.Parser()
        ds = tf.data.TFRecordDataset(files).map(map_func=parser)
        return ds.batch(8).prefetch(1)
"""
PARSER = """
    import tensorflow as tf
    from utils.augmentation import Augment
    class Parser:
        def __init__(self):
            self._parse_fn = self._parse_train
        def __call__(self, record):
            return self._parse_fn(tf.io.parse_tensor(record, tf.float32))
        def _parse_train(self, image):
            augment = Augment()
            return augment(image)
"""
AUGMENT = """
    import tensorflow as tf
    class Flip:
        def __call__(self, image):
            return {op}
    class Augment:
        def __init__(self):
            self.flip = Flip()
        def __call__(self, image):
            return self.flip(image)
"""
RANDOM = "tf.image.random_flip_left_right(image)"
FIXED = "tf.image.flip_left_right(image)"


def _files(op: str) -> dict[str, str]:
    return {"train.py": LOADER, "data/__init__.py": "", "data/parser.py": PARSER,
            "utils/__init__.py": "", "utils/augmentation.py": AUGMENT.format(op=op)}


def _cold(root):
    return found(run(LintRequest(paths=[str(root)], cache=False, select=["TFP602"],
                                 tf_version="2.6")), root, "TFP602")


def test_a_random_op_two_modules_and_two_classes_away_is_found(tmp_path):
    write_project(tmp_path, _files(RANDOM))
    got = _cold(tmp_path)
    assert [(p, line) for _, p, line, _ in got] == [("train.py", 6)]
    assert "tf.image.random_flip_left_right in Flip.__call__ (augmentation.py)" in got[0][3]
    # The VALID twin: the same flip without randomness, a map TF parallelises by itself.
    write_project(tmp_path, _files(FIXED))
    assert _cold(tmp_path) == []


def test_warm_run_after_the_callee_changed_equals_a_cold_run(tmp_path):
    root = tmp_path / "proj"
    write_project(root, _files(RANDOM))
    req = LintRequest(paths=[str(root)], cache_dir=tmp_path / "cache", select=["TFP602"],
                      tf_version="2.6")
    assert len(found(run(req), root, "TFP602")) == 1
    write_project(root, {"utils/augmentation.py": AUGMENT.format(op=FIXED)})
    warm = found(run(req), root, "TFP602")
    assert warm == _cold(root) == []
    write_project(root, {"utils/augmentation.py": AUGMENT.format(op=RANDOM)})
    warm = found(run(req), root, "TFP602")
    assert warm == _cold(root) and len(warm) == 1
