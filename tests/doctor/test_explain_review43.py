"""Review 43 (branch explain43r): probes of stop 43's new readings on ordinary logs they must
not fire on. Each test failed at explain43's frozen head (21cf6c01)."""

from __future__ import annotations

from tfperf.doctor.explainer import explain_log

_BANNER = ("2024-05-05 05:05:05.000000: I tensorflow/core/platform/cpu_feature_guard.cc:182] "
           "This TensorFlow binary is optimized to use available CPU instructions in "
           "performance-critical operations.\n")


def _one_frame(code: str, error: str) -> str:
    return ('Traceback (most recent call last):\n  File "/work/serve.py", line 40, in <module>\n'
            f"    {code}\n{error}\n")


# --- Keras's filtered traceback: a .fit/.predict line alone is no proof Keras ran ----------------

def test_another_object_s_predict_after_only_tensorflow_s_banner_stays_the_application_s() -> None:
    # the banner is in every log of a script that imports TensorFlow; lookup is the user's object
    ex = explain_log(_BANNER + _one_frame('label = lookup.predict(row["id"])', "KeyError: 'id'"))
    assert ex.verdict == "nothing-wrong" and not ex.causes, ex.causes[:1]


def test_a_trimmed_xgboost_fit_is_not_read_as_a_tensorflow_version_mismatch() -> None:
    ex = explain_log(_BANNER + _one_frame(
        "booster.fit(features, y)",
        "TypeError: fit() got an unexpected keyword argument 'early_stopping_rounds'"))
    assert not ex.causes or "TensorFlow/Keras" not in ex.causes[0].cause, ex.causes[:1]


def test_a_fit_that_printed_keras_s_progress_is_still_keras_s() -> None:
    # the reading stop 43 added, where the log shows the Keras method ran (its progress bar)
    text = (_BANNER + "Epoch 1/20\n      0/Unknown 1s 0s/step\n"
            + _one_frame("model.fit(ds, epochs=20)",
                         "ValueError: Expected input data to be non-empty."))
    ex = explain_log(text)
    assert ex.causes and "training data is empty" in ex.causes[0].cause


# --- the ARM reading of an illegal instruction: an x86 machine in the log is no ARM board --------

def _arm_lead(text: str) -> bool:
    ex = explain_log(text)
    assert ex.causes and ex.causes[0].label == "cpu-missing-instructions"
    return ex.causes[0].cause.startswith("This is an ARM machine")


def test_an_x86_uname_beside_an_aarch64_download_keeps_the_avx_reading() -> None:
    assert not _arm_lead(
        "$ uname -a\nLinux box 5.15.0-91-generic #101-Ubuntu SMP x86_64 x86_64 x86_64 GNU/Linux\n"
        "$ pip download tensorflow --platform manylinux2014_aarch64 --only-binary=:all: -d w\n"
        '$ python3 -c "import tensorflow"\nIllegal instruction (core dumped)\n')


def test_a_windows_amd64_wheel_beside_an_aarch64_tag_keeps_the_avx_reading() -> None:
    assert not _arm_lead(
        "C:\\> pip install tensorflow\nCollecting tensorflow\n  Downloading tensorflow-2.10.0-"
        "cp39-cp39-win_amd64.whl (455.9 MB)\nSkipping link: none of the wheel's tags match: "
        "cp39-cp39-manylinux2014_aarch64\nProcess finished with exit code -1073741795 "
        "(0xC000001D)\n")


def test_a_raspberry_pi_without_an_x86_word_keeps_the_arm_reading() -> None:
    assert _arm_lead('pi@raspberrypi:~ $ python3 -c "import tensorflow"\nIllegal instruction\n')


# --- a concatenation's dimension check: the U-Net reading needs image-shaped tensors -------------

def _concat(shapes: str, dim: int) -> str:
    return ("tensorflow.python.framework.errors_impl.InvalidArgumentError: {{function_node "
            "__wrapped__ConcatV2_N_2_device_/job:localhost/replica:0/task:0/device:CPU:0}} "
            f"ConcatOp : Dimension {dim} in both shapes must be equal: {shapes} [Op:ConcatV2] "
            "name: concat\n")


def test_two_feature_matrices_of_other_batch_sizes_get_no_u_net_reading() -> None:
    ex = explain_log(_concat("shape[0] = [32,10] vs. shape[1] = [16,10]", 0))
    lead = ex.causes[0].cause if ex.causes else ""
    assert "concatenation" in lead and "U-Net" not in lead and "pooling" not in lead


def test_feature_maps_one_pixel_off_keep_the_u_net_reading() -> None:
    ex = explain_log(_concat("shape[0] = [8,64,37,37] vs. shape[1] = [8,64,38,38]", 2))
    assert ex.causes and "U-Net" in ex.causes[0].cause


# --- TF Serving's JSON error answer in its other printed forms -----------------------------------

_SWITCH = ("The second input must be a scalar, but it has shape [1]\\n\\t [[{{node "
           "net/bn/cond/Switch}}]]")


def test_tf_serving_s_one_line_error_answer_is_read() -> None:
    # the raw body is one line, { "error": "..." } (stop 43 read only the pretty-printed form)
    text = ("$ curl -d @req.json http://localhost:8501/v1/models/face:predict\n"
            f'{{ "error": "{_SWITCH}" }}\n')
    ex = explain_log(text)
    assert ex.verdict == "failure" and ex.causes, ex.verdict


def test_a_python_printed_error_answer_after_a_predict_request_is_read() -> None:
    # print(response.json()) after requests.post(".../v1/models/x:predict")
    text = ("r = requests.post('http://localhost:8501/v1/models/txt:predict', json=payload)\n"
            "{'error': 'transpose expects a vector of size 6. But input(1) is a vector of "
            "size 3\\n\\t [[{{node bidirectional/transpose}}]]'}\n")
    ex = explain_log(text)
    assert ex.verdict == "failure" and ex.causes, ex.verdict


def test_another_service_s_one_line_or_python_error_is_not_tensorflow_s() -> None:
    for body in ('{ "error": "rate limit exceeded, retry later" }',
                 "{'error': 'rate limit exceeded, retry later'}"):
        ex = explain_log(f"$ curl https://api.example.com/v1/items\n{body}\n")
        assert ex.verdict != "failure", body


# --- "input must be 4-dimensional": an axis missing, or one too many -----------------------------

def _rank(shape: str, op: str = "ResizeBilinear") -> str:
    return ("INFO:tensorflow:Error reported to Coordinator: <class 'tensorflow.python.framework."
            f"errors_impl.InvalidArgumentError'>, input must be 4-dimensional{shape}\n"
            f"\t [[Node: {op} = {op}[T=DT_UINT8](ExpandDims, {op}/size)]]\n")


def test_a_five_axis_input_to_a_four_axis_op_is_not_read_as_a_missing_batch_axis() -> None:
    ex = explain_log(_rank("[1,1,300,300,3]"))
    lead = ex.causes[0].cause if ex.causes else ""
    assert "without its batch axis" not in lead and "more axes" in lead, lead[:200]


def test_a_three_axis_input_keeps_the_missing_batch_axis_reading() -> None:
    ex = explain_log(_rank("[300,300,3]", op="Conv2D"))
    assert ex.causes and "without its batch axis" in ex.causes[0].cause


def _tflite(check: str) -> str:
    return ("Traceback (most recent call last):\n  File \"/home/pi/cam.py\", line 33, in <module>\n"
            "    interpreter.invoke()\nRuntimeError: tensorflow/lite/kernels/conv.cc:351 "
            f"{check}Node number 0 (CONV_2D) failed to prepare.\n")


def test_tflite_s_rank_check_with_an_axis_too_many_does_not_say_add_one() -> None:
    ex = explain_log(_tflite("input->dims->size != 4 (5 != 4)"))
    lead = " ".join((ex.causes[0].cause, ex.causes[0].fix)) if ex.causes else ""
    assert "np.expand_dims" not in lead.split(" Otherwise: ")[0], lead[:300]


def test_tflite_s_rank_check_with_an_axis_missing_names_expand_dims() -> None:
    ex = explain_log(_tflite("input->dims->size != 4 (3 != 4)"))
    assert ex.causes and "np.expand_dims" in ex.causes[0].fix
