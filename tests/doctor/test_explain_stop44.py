"""Stop 44: an empty log reads the same from every source, and an error message wrapped after a
colon is joined to its head line."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_stdin import FakeStdin

from tfperf.cli import main
from tfperf.doctor.explainer import explain_log

# --- an empty log: a file, '-' and a pipe agree (exit 0, "empty"); no input at all is exit 2 ---

@pytest.mark.parametrize("how", ["file", "dash", "pipe"])
def test_an_empty_log_reads_the_same_from_every_source(how, tmp_path: Path, capsys,
                                                       monkeypatch):
    log = tmp_path / "train.log"
    log.write_text("  \n", encoding="utf-8")
    monkeypatch.setattr("sys.stdin", FakeStdin("  \n", tty=False))
    args = {"file": ["explain", str(log)], "dash": ["explain", "-"], "pipe": ["explain"]}[how]
    assert main([*args, "--json"]) == 0
    out = capsys.readouterr().out
    assert '"verdict": "empty"' in out and '"exit_status": 0' in out


def test_an_empty_log_says_where_the_log_went(tmp_path: Path, capsys):
    log = tmp_path / "train.log"
    log.write_text("", encoding="utf-8")
    assert main(["explain", str(log)]) == 0
    assert "2>&1" in capsys.readouterr().out


@pytest.mark.parametrize("stdin", [FakeStdin("", tty=True), None])
def test_no_input_at_all_stays_a_usage_error(stdin, capsys, monkeypatch):
    # twin: a terminal (never waited on) or no stdin is not an empty log
    monkeypatch.setattr("sys.stdin", stdin)
    assert main(["explain"]) == 2
    assert "nothing to explain" in capsys.readouterr().err


# --- a message wrapped after a colon --------------------------------------------------------

def test_a_message_wrapped_after_its_colon_is_joined():
    # e-com-net.com/article/1282004287597068288.htm (dev44a): Keras's message broken after "layer:"
    log = ("ValueError: Input 0 of layer conv2d is incompatible with the layer:\n"
           "expected ndim=4, found ndim=3. Full shape received: [None, 28, 28]")
    top = explain_log(log).causes[0]
    assert top.label == "input-shape-mismatch"
    assert "channel axis" in top.detail


def test_a_heading_with_its_list_after_a_colon_is_not_joined():
    # twin: a colon that ends a heading, its items indented, reads as before (no row joins it)
    log = ("ValueError: Could not interpret optimizer identifier:\n"
           "    <keras.optimizers.Adam object at 0x7f>")
    ex = explain_log(log)
    assert all(ln.number == 1 for c in ex.causes for ln in c.lines[:1])
    assert "optimizer identifier:" in (ex.causes[0].lines[0].text if ex.causes else "")


def test_a_colon_head_followed_by_a_log_record_is_not_joined():
    # twin: the next line is a record of its own (a glog line), so the head is read alone
    log = ("ValueError: Input 0 of layer conv2d is incompatible with the layer:\n"
           "2024-01-01 00:00:00.000000: I tensorflow/core/platform/cpu_feature_guard.cc:182] "
           "expected ndim=4, found ndim=3")
    assert all(c.label != "input-shape-mismatch" for c in explain_log(log).causes)


def test_a_colon_head_whose_continuation_has_its_own_reading_is_not_joined():
    # twin (tf57549 in the set): the row reads "because no supported kernel ..." on its own line;
    # joining the head too gave a second hit and the device twice ("placed on GPUGPU")
    log = ("InvalidArgumentError: Cannot assign a device for operation ResourceGatherNd: \n"
           "Could not satisfy explicit device specification '/job:localhost/replica:0/task:0/"
           "device:GPU:0' \n"
           "because no supported kernel for GPU devices is available.")
    top = explain_log(log).causes[0]
    assert top.label == "op-no-device-kernel"
    assert "placed on GPU, which" in top.detail and [ln.number for ln in top.lines] == [3]


# --- Keras's input checks in two more wordings (dev44a) ----------------------------------------

@pytest.mark.parametrize(("log", "needle"), [
    # Keras 2's standardize_input_data with an empty prefix ("checking : expected"), one image
    ("ValueError: Error when checking : expected input_1 to have 4 dimensions, but got array "
     "with shape (64, 64, 3)", "leading batch axis is missing"),
    # InputSpec's axis check: grayscale images without their channel axis
    ("ValueError: Input 0 of layer conv2d_3 is incompatible with the layer: expected axis -1 of "
     "input shape to have value 3, but received input with shape (None, 32, 32)",
     "trailing channel axis is missing"),
    # ... grayscale images with one channel for an RGB model
    ("ValueError: Input 0 of layer \"model\" is incompatible with the layer: expected axis -1 of "
     "input shape to have value 3, but received input with shape (None, 224, 224, 1)",
     "has 1 channel(s), the model wants 3"),
    # ... 28x28 images for a Dense layer of 784 inputs
    ("ValueError: Input 0 of layer dense is incompatible with the layer: expected axis -1 of "
     "input shape to have value 784, but received input with shape (None, 28, 28)",
     "add a Flatten layer"),
])
def test_keras_input_checks_in_more_wordings(log, needle):
    top = explain_log(log).causes[0]
    assert top.label == "input-shape-mismatch"
    assert needle in top.detail


def test_a_target_check_stays_the_labels_reading():
    # twin: "Error when checking target" is the labels against the output, not the input
    log = ("ValueError: Error when checking target: expected dense_2 to have shape (10,) but got "
           "array with shape (1,)")
    assert explain_log(log).causes[0].label == "labels-output-mismatch"


def test_a_wrapped_axis_check_is_joined():
    # yingnd.com/python/172221.html (dev44a): the message broken after "of input shape"
    log = ("ValueError: Input 0 of layer conv2d is incompatible with the layer: expected axis -1 "
           "of input shape\nto have value 3, but received input with shape (None, 28, 28)")
    assert explain_log(log).causes[0].label == "input-shape-mismatch"
