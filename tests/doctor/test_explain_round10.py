"""``tfperf explain`` on round 10's misses, checked on other wordings than round 10's own logs: a
runtime error's message printed without its class above its op context, pip's unsupported wheel,
a strategy that sees fewer devices than its cluster, and "nothing wrong" only where the log shows
nothing unknown that could matter."""

from __future__ import annotations

import pytest

from tfperf.doctor.explain_render import summary
from tfperf.doctor.explainer import explain_log


def _lead(text: str) -> tuple[str, str]:
    ex = explain_log(text)
    assert ex.causes, ex.verdict
    cause = ex.causes[0]
    lead = (" ".join(cause.likely[0]) if cause.confidence == "low" and cause.likely else
            f"{cause.cause} {cause.fix}")
    return cause.label, lead


@pytest.mark.parametrize(("text", "label", "lead"), [
    # TF 1.x's '[[Node: ...]]' under a message without its class (another model, other shapes)
    ("Assign requires shapes of both tensors to match. lhs shape= [12,2048] rhs shape= [1000,2048]"
     "\n\t [[Node: save/Assign_17 = Assign[T=DT_FLOAT, _class=[\"loc:@resnet/logits/weights\"], "
     "_device=\"/job:localhost/replica:0/task:0/device:GPU:0\"](resnet/logits/weights, "
     "save/RestoreV2:17)]]", "invalid-argument-error", "head"),
    # TF 2's '[[{{node ...}}]]' under a not-implemented scheme
    ("File system scheme '[local]' not implemented (file: 'runs/exp1/ckpt-3_temp/part-0')\n"
     "\t [[{{node MergeV2Checkpoints}}]]", "unimplemented-error", "gs://"),
    # a message with no known wording still gets a reading (not "nothing wrong")
    ("Frobnicated tensor could not be frobbed\n\t [[node model/frob_1 (defined at train.py:88) ]]",
     "unknown-error", ""),
])
def test_message_above_op_context_is_an_error(text: str, label: str, lead: str) -> None:
    got_label, got_lead = _lead(text)
    assert got_label == label
    assert lead in got_lead


@pytest.mark.parametrize(("text", "reads"), [
    ("ERROR: tensorflow-2.4.0-cp38-cp38-macosx_10_14_x86_64.whl is not a supported wheel on this "
     "platform.", "CPython 3.8 on macOS"),
    ("tensorflow-1.15.0-cp36-cp36m-manylinux2010_x86_64.whl is not a supported wheel on this\n"
     "platform.", "CPython 3.6 on Linux x86-64"),
])
def test_unsupported_wheel_reads_its_tags(text: str, reads: str) -> None:
    ex = explain_log(text)
    assert ex.verdict == "failure"
    cause = ex.causes[0]
    assert cause.label == "unsupported-wheel"
    assert reads in cause.detail


def test_strategy_seeing_fewer_devices_than_its_cluster() -> None:
    text = ("I0105 09:10:11.000000 140000 collective_all_reduce_strategy.py:310] Multi-worker "
            "CollectiveAllReduceStrategy with cluster_spec = {'worker': ['10.0.0.1:2222', "
            "'10.0.0.2:2222']}\nW0105 09:10:11.100000 140000 cross_device_ops.py:1200] Not all "
            "devices in tf.distribute.Strategy are visible to TensorFlow.\n")
    ex = explain_log(text)
    assert ex.causes[0].label == "strategy-devices-not-visible"
    assert "TF_CONFIG" in ex.causes[0].fix


def test_a_slow_runs_step_times_without_an_error_are_nothing_wrong() -> None:
    """Round 10 read a log of nothing but step times as one tfperf cannot vouch for; stop 41's
    wave 2 (issue 31's benign goal, round 26 re-read as development) reads a log whose lines
    hold no error (explain_finished.holds_error) as the run's own output: nothing wrong."""
    ex = explain_log("step 10: loss 0.91 (1.874 s/step)\nstep 20: loss 0.88 (1.902 s/step)\n")
    assert ex.verdict == "nothing-wrong"
    assert "is a failure or an error" in summary(ex)


@pytest.mark.parametrize("text", [
    # only the program's own output, with a failure's words ("Cannot find"); was "nothing wrong"
    # in round 9's tests
    "Loading data...\nCannot find cached features, computing them now\nEpoch 1/2\n"
    "50/50 - 2s - loss: 0.3\nModel saved",
    # an unknown W-level warning of TensorFlow's distribution code
    "W0202 10:11:12.000000 1400 collective_util.py:50] Some replicas of the cluster were not "
    "reached; continuing with 1 of 4 workers.",
])
def test_logs_it_cannot_vouch_for_are_not_nothing_wrong(text: str) -> None:
    ex = explain_log(text)
    assert ex.verdict == "unrecognised"
    assert "does not prove" in summary(ex)


@pytest.mark.parametrize("text", [
    # known start-up noise, with a TF 1.x CPU-feature line cut by a paste
    "2017-05-01 10:00:00.000000: W c:\\tf_jenkins\\home\\workspace\\rel-win\\tensorflow\\core\\"
    "platform\\cpu_feature_\ntions, but these are available on your machine and could speed up CPU "
    "computations.\nb'Hello'",
    # tf.nest's notice about a set
    "Sets are not currently considered sequences, but this may change in the future, so consider "
    "avoiding using them.",
])
def test_known_notices_stay_nothing_wrong(text: str) -> None:
    assert explain_log(text).verdict == "nothing-wrong"


def test_a_gpu_kernel_jit_compile_failure_names_the_cuda_toolkit_xla_looks_for() -> None:
    # tensorflow/tensorflow#57162's shape with another op
    text = ('  File "/opt/conda/lib/python3.10/site-packages/tensorflow/python/eager/execute.py", '
            "line 52, in quick_execute\n    tensors = pywrap_tfe.TFE_Py_Execute(ctx._handle, "
            "device_name, op_name,\ntensorflow.python.framework.errors_impl.UnknownError: JIT "
            "compilation failed. [Op:Softplus]")
    label, lead = _lead(text)
    assert label == "unknown-error"
    assert "xla_gpu_cuda_data_dir" in lead
