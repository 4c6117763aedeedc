"""The project model (tfperf.analysis): summaries, the import graph among the linted files,
calls resolved across modules, functions run per iteration through chains of calls, and the
cache: a warm run after a callee changed in another file gives what a cold run gives."""

from __future__ import annotations

import ast
import json
import os
import textwrap

from project_files import found, write_project

from tfperf.analysis import kinds
from tfperf.analysis.project import Project
from tfperf.analysis.summary import ModuleSummary, summarize
from tfperf.lint.semantic import Context
from tfperf.lint.session import LintRequest, run

AGENT = """\
import tensorflow as tf

class Agent:
    def __init__(self, model):
        self.model = model
        self.opt = tf.keras.optimizers.Adam()

    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((self.model(x) - y) ** 2)
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss

@tf.function
def scaled(x, scale):
    return x * scale
"""

# The same agent with a method that runs the step over an epoch's batches.
AGENT_EPOCH = AGENT.replace("\n@tf.function", """
    def fit_epoch(self, batches):
        for x, y in batches:
            self.train_step(x, y)

@tf.function""")

MAIN = """\
from agent import Agent, scaled
import numpy as np

def main(batches, model):
    agent = Agent(model)
    for epoch in range(100):
        warmup = min(1.0, (epoch + 1) / 20)
        scaled(np.ones(3), warmup)
        agent.train_step(np.ones(3), np.ones(3))
"""


def _summary(source: str, path: str) -> ModuleSummary:
    source = textwrap.dedent(source)
    return summarize(Context(ast.parse(source), source, path), complete=True)


def _found(outcome, root) -> list[tuple[str, str, int | None, str]]:
    return found(outcome, root)


def test_summary_holds_functions_calls_and_kinds(tmp_path):
    agent = _summary(AGENT, str(tmp_path / "agent.py"))
    main = _summary(MAIN, str(tmp_path / "main.py"))
    assert agent.functions["scaled"].traced == "decorated"
    assert agent.functions["Agent.train_step"].params == ["self", "x", "y"]
    helpers = _summary("""\
        import numpy as np
        import tensorflow as tf
        def noise(n):
            return tf.random.normal([n])
        def pieces(x):
            return tf.split(x, 2)
        def table(n):
            return np.zeros([n, n])
        def dataset(x):
            return tf.data.Dataset.from_tensor_slices(x).batch(8)
        def nothing():
            pass
    """, str(tmp_path / "helpers.py"))
    assert {q: f.returns for q, f in helpers.functions.items()} == {
        "noise": kinds.TENSOR, "pieces": kinds.TENSOR_LIST, "table": kinds.NDARRAY,
        "dataset": kinds.DATASET, "nothing": kinds.NONE}
    assert main.imports == {"Agent": ["agent", "Agent"], "scaled": ["agent", "scaled"]}
    calls = {c.callee: c for c in main.calls}
    step = calls[("agent", "Agent.train_step")]  # a method of an instance of an imported class
    assert step.loop == "range" and step.caller == "main" and not step.traced
    warm = calls[("agent", "scaled")].args[1]
    # A Python number that changes per iteration, through a name the loop assigns.
    assert (warm.kind, warm.varies, warm.text) == (kinds.NUMBER, True, "warmup")
    # Plain data: what the cache stores gives the same summary back.
    again = ModuleSummary.from_json(main.path, json.loads(json.dumps(main.to_json())))
    assert again.to_json() == main.to_json()


def test_project_resolves_imports_and_finds_functions_run_per_iteration(tmp_path):
    pkg = tmp_path / "pkg"
    sums = [_summary(AGENT_EPOCH, str(pkg / "agent.py")),
            _summary("from .agent import Agent\n", str(pkg / "__init__.py")),
            _summary("""\
                from pkg import Agent

                def train(agent, batches):
                    agent.fit_epoch(batches)

                def main(agent: Agent, epochs, batches):
                    for _ in range(epochs):
                        agent.fit_epoch(batches)
            """, str(tmp_path / "run.py"))]
    project = Project(sums)
    assert project.module(str(tmp_path / "run.py"), "pkg").path == str(pkg / "__init__.py")
    assert project.module(str(pkg / "__init__.py"), ".agent").path == str(pkg / "agent.py")
    # `agent: Agent` (a re-export of pkg) → Agent.fit_epoch → Agent.train_step in its loop.
    sites = project.calls_to(str(pkg / "agent.py"), "Agent.fit_epoch")
    assert [os.path.basename(s.module.path) for s in sites] == ["run.py"]
    hot = project.hot_call(str(pkg / "agent.py"), "Agent.train_step")
    assert hot is not None and hot.call.loop == "other"  # its own loop over batches
    assert project.hot_call(str(pkg / "agent.py"), "Agent.fit_epoch") is not None
    assert project.hot_call(str(pkg / "agent.py"), "Agent.__init__") is None


def test_a_function_defined_again_is_a_function_of_its_own(tmp_path):
    # Stop 46, wave 2 (precision round 15): a notebook re-defines `show` in a later cell.
    # The loop between the two runs the first; an import and the calls after run the last.
    path = str(tmp_path / "nb.py")
    nb = _summary("""\
        import tensorflow as tf
        import numpy as np
        model = tf.keras.models.load_model("m.h5")
        def show(img):
            print(img.shape)
        show(images[0])
        for img in images:
            show(img)
        def show(img):
            print(np.argmax(model(img[None])))
        show(images[0])
        class Net:
            pass
        class Net:
            def step(self, x):
                return x
    """, path)
    assert set(nb.functions) == {"show@4", "show", "Net.step"}
    called = sorted((c.callee[1], c.loop) for c in nb.calls)
    # each definition's module-level call is kept, not only the first spelling's
    assert called == [("show", ""), ("show@4", ""), ("show@4", "other")]
    project = Project([nb])
    assert project.hot_call(path, "show@4") is not None
    assert project.hot_call(path, "show") is None
    other = _summary("from nb import show\nfor x in xs:\n    show(x)\n",
                     str(tmp_path / "main.py"))
    project = Project([nb, other])
    hot = project.hot_call(path, "show")  # an import reaches the last definition
    assert hot is not None and hot.module.path.endswith("main.py")


def test_a_chain_of_calls_makes_a_function_hot_and_traced_code_does_not(tmp_path):
    a = _summary("""\
        import tensorflow as tf
        def inner(x):
            return x + 1
        def middle(x):
            return inner(x)
        @tf.function
        def compiled(x):
            return inner(x)
    """, str(tmp_path / "a.py"))
    b = _summary("""\
        import a
        def loop(xs):
            for x in xs:
                a.middle(x)
        def once(x):
            a.compiled(x)
    """, str(tmp_path / "b.py"))
    project = Project([a, b])
    hot = project.hot_call(a.path, "inner")
    assert hot is not None and hot.module.path == b.path  # b's loop → middle → inner
    assert project.hot_call(a.path, "compiled") is None


def test_cross_module_findings(tmp_path):
    write_project(tmp_path, {"agent.py": AGENT, "main.py": MAIN})
    found = _found(run(LintRequest(paths=[str(tmp_path)], cache=False, preview=True)),
                   tmp_path)
    codes = {(code, path) for code, path, _, _ in found}
    assert ("TFP306", "agent.py") in codes   # the step, called per epoch from main.py
    assert ("TFP301", "main.py") in codes    # `warmup` passed to agent.scaled per epoch
    step = next(f for f in found if f[0] == "TFP306")
    assert step[2] == 8 and "main.py:9" in step[3]
    # Linted alone, nothing runs agent.py's step per iteration: no finding without main.py.
    alone = run(LintRequest(paths=[str(tmp_path / "agent.py")], cache=False, preview=True))
    assert [f.code for f in alone.findings if f.code == "TFP306"] == []


def test_warm_run_after_a_callee_changed_in_another_file_equals_a_cold_run(tmp_path):
    root = tmp_path / "proj"
    write_project(root, {"agent.py": AGENT, "main.py": MAIN})
    cache = tmp_path / "cache"
    req = LintRequest(paths=[str(root)], cache_dir=cache, preview=True)
    first = run(req)
    assert any(f.code == "TFP306" for f in first.findings)
    # Compile the step in agent.py: main.py, unchanged, comes from the cache.
    (root / "agent.py").write_text(AGENT.replace("    def train_step",
                                                 "    @tf.function\n    def train_step"))
    warm = run(req)
    assert warm.cache_hits == 1 and warm.analysed == 1
    cold = run(LintRequest(paths=[str(root)], cache=False, preview=True))
    assert _found(warm, root) == _found(cold, root)
    assert not any(f.code == "TFP306" for f in warm.findings)
    # and back: the finding returns though neither run analyses main.py again
    (root / "agent.py").write_text(AGENT)
    back = run(req)
    assert back.cache_hits == 2 and back.analysed == 0  # both files' entries are cached
    assert _found(back, root) == _found(first, root)
    # A change in the caller alone (the loop removed) also shows at the callee.
    (root / "main.py").write_text(MAIN.replace("    for epoch in range(100):\n",
                                               "    if True:\n        epoch = 0\n"))
    assert not any(f.code == "TFP306" for f in run(req).findings)


def test_project_findings_obey_noqa_and_per_file_ignores(tmp_path):
    write_project(tmp_path, {"agent.py": AGENT.replace("    def train_step(self, x, y):",
                                                "    def train_step(self, x, y):  # noqa: TFP306"),
                      "main.py": MAIN})
    found = _found(run(LintRequest(paths=[str(tmp_path)], cache=False)), tmp_path)
    assert not any(code == "TFP306" for code, *_ in found)
    assert any(code == "TFP301" for code, *_ in found)


def test_notebook_calls_into_a_module_of_its_folder(tmp_path):
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# train"]},
             {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": "from agent import Agent\nimport numpy as np\nagent = Agent(None)\n"},
             {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": "for i in range(100):\n    agent.train_step(np.ones(3), np.ones(3))\n"}]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    write_project(tmp_path, {"agent.py": AGENT, "train.ipynb": json.dumps(nb)})
    found = _found(run(LintRequest(paths=[str(tmp_path)], cache=False)), tmp_path)
    step = [f for f in found if f[0] == "TFP306"]
    assert step and step[0][1] == "agent.py" and "train.ipynb, cell 3, line 2" in step[0][3]


def test_an_import_is_not_resolved_into_a_folder_beside_the_importer(tmp_path):
    # Two repositories linted together: repo_b's `utils` is not what repo_a imports.
    a = _summary("from utils import step\nfor i in range(9):\n    step(i)\n",
                 str(tmp_path / "repo_a" / "train.py"))
    b = _summary("import tensorflow as tf\n@tf.function\ndef step(i):\n    return i\n",
                 str(tmp_path / "repo_b" / "utils.py"))
    sub = _summary("def step(i):\n    return i\n", str(tmp_path / "repo_a" / "lib" / "utils.py"))
    project = Project([a, b, sub])
    assert project.module(a.path, "utils") is None
    assert project.module(a.path, "lib.utils").path == sub.path
    assert list(project.sites()) == []


def test_a_warm_run_reads_no_file_again_even_one_that_does_not_parse(tmp_path):
    write_project(tmp_path / "p", {"agent.py": AGENT, "main.py": MAIN, "broken.py": "def f(:\n"})
    req = LintRequest(paths=[str(tmp_path / "p")], cache_dir=tmp_path / "cache")
    cold = run(req)
    warm = run(req)
    assert warm.analysed == 0 and warm.cache_hits == 3
    assert _found(warm, tmp_path) == _found(cold, tmp_path)


def test_a_module_no_question_can_reach_keeps_a_lean_summary(tmp_path):
    # No project import, no published fact: only its traced functions and the calls of
    # them in loops matter to the project (lint's summary); tune asks for all of it.
    source = """\
        import tensorflow as tf
        @tf.function
        def step(x):
            return x + 1
        def helper(x):
            return step(x)
        for i in range(10):
            step(tf.ones([i]))
        helper(tf.ones([1]))
    """
    path = str(tmp_path / "m.py")
    text = textwrap.dedent(source)
    lean = summarize(Context(ast.parse(text), text, path))
    assert set(lean.functions) == {"step"}
    assert [c.callee for c in lean.calls] == [("", "step")]
    complete = _summary(source, path)
    assert set(complete.functions) == {"step", "helper"}
    # The module-level call run once is kept too (caller ""): it tells TFP110 that
    # `helper` is not only entered from outside the linted code.
    assert sorted(c.callee for c in complete.calls) == [("", "helper"), ("", "step"),
                                                        ("", "step")]
    assert [c.caller for c in complete.calls if c.callee == ("", "helper")] == [""]


def test_a_step_star_imported_from_a_second_package_root_is_resolved(tmp_path):
    # Held-out recall round 3 (F021-F023, mead-baseline): the trainer in `baseline/` runs
    # `self.optimizer.update(...)` per batch, `EagerOptimizer` star-imported from
    # `eight_mile.tf.optz`, a package of `layers/`: a second root with its own setup.py.
    optz = AGENT.replace("class Agent", "__all__ = ['Agent']\n\nclass Agent")
    trainer = ("from eight_mile.optz import *\n\n"
               "class Trainer:\n"
               "    def __init__(self, model):\n"
               "        self.agent = Agent(model)\n\n"
               "    def train(self, batches):\n"
               "        for x, y in batches:\n"
               "            self.agent.train_step(x, y).numpy()\n")
    files = {"setup.py": "", "layers/setup.py": "", "layers/eight_mile/__init__.py": "",
             "layers/eight_mile/optz.py": optz, "baseline/__init__.py": "",
             "baseline/trainer.py": trainer}
    write_project(tmp_path / "repo", files)
    found = _found(run(LintRequest(paths=[str(tmp_path / "repo")], cache=False,
                                   select=["TFP306"])), tmp_path / "repo")
    assert [(c, p) for c, p, _, _ in found] == [("TFP306", "layers/eight_mile/optz.py")]
    assert "trainer.py:9" in found[0][3]
    # No setup.py in `layers/`: not an installed root, the import is not followed (as for a
    # repository beside the importer).
    del files["layers/setup.py"]
    write_project(tmp_path / "bare", files)
    assert run(LintRequest(paths=[str(tmp_path / "bare")], cache=False,
                           select=["TFP306"])).findings == []


def test_a_method_a_subclass_inherits_from_a_base_in_another_module_is_resolved(tmp_path):
    # `self._update_target(...)` in SAC runs OffPolicy._update_target (off_policy.py): the
    # call reaches it, so the per-step loop in sac.py makes it hot (rl-toolkit's shape).
    pkg = tmp_path / "policy"
    base = _summary("""\
        import tensorflow as tf

        class OffPolicy:
            def _update_target(self, net, net_targ, tau):
                for w, w_t in zip(net.trainable_variables, net_targ.trainable_variables):
                    w_t.assign(tau * w + (1.0 - tau) * w_t)
    """, str(pkg / "off_policy.py"))
    sac = _summary("""\
        import tensorflow as tf
        from policy.off_policy import OffPolicy

        class Base2(OffPolicy):
            pass

        class SAC(Base2):
            def _update(self):
                for step in range(self.gradient_steps):
                    self._update_target(self.critic, self.critic_targ, self.tau)
    """, str(pkg / "sac.py"))
    assert sac.bases == {"Base2": [["policy.off_policy", "OffPolicy"]], "SAC": [["", "Base2"]]}
    assert ModuleSummary.loads(sac.path, sac.dumps()).bases == sac.bases
    project = Project([base, sac])
    sites = project.calls_to(str(pkg / "off_policy.py"), "OffPolicy._update_target")
    assert [os.path.basename(s.module.path) for s in sites] == ["sac.py"]
    assert project.hot_call(str(pkg / "off_policy.py"), "OffPolicy._update_target") is not None
    # A method the subclass defines itself is its own, not the base's.
    own = _summary("""\
        from policy.off_policy import OffPolicy

        class SAC(OffPolicy):
            def _update_target(self, net, net_targ, tau):
                pass
            def _update(self):
                for step in range(self.gradient_steps):
                    self._update_target(self.critic, self.critic_targ, self.tau)
    """, str(pkg / "sac.py"))
    assert Project([base, own]).calls_to(
        str(pkg / "off_policy.py"), "OffPolicy._update_target") == []
