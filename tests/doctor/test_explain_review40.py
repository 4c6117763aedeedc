"""Review 40's defects on stop 40, each on a wording of this file's own (INVALID: the reading the
review found wrong; VALID twin: the reading stop 40 was right to give)."""

from __future__ import annotations

import time

import pytest

from tfperf.doctor.explain_finished import _SOFT
from tfperf.doctor.explainer import explain_log

_EPOCHS = ("Epoch 3/20\n250/250 [==============================] - 12s 48ms/step - loss: 0.2210"
           "\n")


def _causes(text: str) -> list[tuple[str, str]]:
    return [(c.label, c.severity) for c in explain_log(text).causes]


# 1. the allocator's failing request is the failure; only its retry form is a note
_REQUEST = ("2023-01-09 08:01:02.000001: W tensorflow/core/common_runtime/bfc_allocator.cc:462] "
            "Allocator (GPU_0_bfc) ran out of memory trying to allocate 768.00MiB (rounded to "
            "805306368)requested by op sequential/dense_2/MatMul\n")
_RETRY = ("W tensorflow/core/common_runtime/bfc_allocator.cc:290] Allocator (GPU_0_bfc) ran out "
          "of memory trying to allocate 3.05GiB with freed_by_count=0. The caller indicates that "
          "this is not a failure, but may mean that there could be performance gains if more "
          "memory were available.\n")


def test_the_allocators_failing_request_alone_stays_an_out_of_memory_failure() -> None:
    assert ("out-of-memory", "failure") in _causes(_REQUEST)
    assert ("out-of-memory", "failure") in _causes(_REQUEST + _EPOCHS)


def test_the_allocators_retry_form_in_a_run_that_goes_on_is_still_a_note() -> None:
    assert _causes(_RETRY + _EPOCHS)[0] == ("gpu-memory-pressure", "notice")


def test_a_cr_only_log_judges_its_lines_one_by_one() -> None:
    bare = ("W tensorflow/core/common_runtime/bfc_allocator.cc:9] Allocator (GPU_0_bfc) ran out "
            "of memory trying to allocate 2GiB")
    assert ("out-of-memory", "failure") in _causes(
        "Epoch 1/4\r" + bare + "\r8/8 [====] - loss: 0.3")
    assert _causes("Epoch 1/4\r" + _RETRY.strip() + "\r8/8 [====] - loss: 0.3")[0] == (
        "gpu-memory-pressure", "notice")


def test_tf1s_retry_wording_cut_before_its_hedge_is_still_a_note() -> None:
    # TF 1.x's retry line has no "Allocator (NAME)" prefix; its failing line says "See logs"
    cut = "W tensorflow/core/common_runtime/bfc_allocator.cc:217] Ran out of memory trying to "
    assert _causes(cut + "allocate 1.21GiB.\n" + _EPOCHS)[0][1] == "notice"
    assert any(sev == "failure" for _, sev in _causes(
        cut + "allocate 1.21GiB.  See logs for memory state.\n" + _EPOCHS))


# 6. W-level lines that are the failure itself are never demoted by a run that went on
def test_failure_lines_at_w_level_stay_failures_when_epochs_follow() -> None:
    lines = [
        "W tensorflow/core/framework/op_kernel.cc:1830] OP_REQUIRES failed at "
        "sparse_xent_op.cc:103 : INVALID_ARGUMENT: Received a label value of 12 which is outside "
        "the valid range of [0, 10).  Label values: 12 3 4",
        "W tensorflow/core/common_runtime/bfc_allocator.cc:500] " + "*" * 40 + "_" * 30,
        "W tensorflow/core/common_runtime/base_collective_executor.cc:249] BaseCollectiveExecutor"
        "::StartAbort Internal: Collective Op has group_size 4 and group_key1 but that group "
        "has size 2",
    ]
    for ln in lines:
        alone = [lab for lab, sev in _causes(ln + "\n") if sev == "failure"]
        assert alone, ln
        after = dict(_causes(ln + "\n" + _EPOCHS))
        assert all(after.get(lab) == "failure" for lab in alone), (ln, after)


# 7. the glog-prefix class is bounded: no quadratic backtracking on a long line
def test_the_warning_shape_regex_is_linear_on_a_long_line() -> None:
    def cost(n: int) -> float:
        line = "W1" + ".1" * n
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            _SOFT.search(line)
            best = min(best, time.perf_counter() - t)
        return best

    # 2 KB vs 16 KB: linear scales ~8x, the unbounded classes scaled ~64x (3.7 s at 16 KB)
    small, large = cost(1_000), cost(8_000)
    assert large < 25 * small, (small, large)


# 11. the retry line read as an out-of-memory joins a pressure notice the log holds already
def test_the_converted_retry_line_keeps_the_pressure_notice_already_read() -> None:
    hedged = ("W tensorflow/core/common_runtime/bfc_allocator.cc:301] Allocator (GPU_0_bfc) ran "
              "out of memory trying to allocate 1.50GiB. The caller indicates that this is not a "
              "failure, but may mean that there could be performance gains if more memory were "
              "available.\n")
    retry = ("W tensorflow/core/common_runtime/bfc_allocator.cc:255] Allocator (GPU_0_bfc) ran "
             "out of memory trying to allocate 640.00MiB with freed_by_count=0.\n")
    causes = explain_log(hedged + retry + _EPOCHS).causes
    pressure = [c for c in causes if c.label == "gpu-memory-pressure"]
    assert len(pressure) == 1 and pressure[0].severity == "notice"
    assert [ln.number for ln in pressure[0].lines] == [1, 2]
    assert "out-of-memory" in pressure[0].consequences


# 2. a vocabulary id is no position: 2-D ids, and a position table named or of a known size
@pytest.mark.parametrize("message", [
    # a BERT log whose word embedding (30522 words) gets the id 30522
    "Traceback (most recent call last):\n  File \"tag.py\", line 51, in <module>\n    model.fit"
    "(ds)\nInvalidArgumentError:  indices[6,2] = 30522 is not in [0, 30522)\n\t [[node "
    "tf_bert_model/bert/embeddings/Gather (defined at /opt/transformers/modeling_tf_bert.py:"
    "190) ]]\n",
    # frames taken with tf.gather(clip, tf.range(n)): a 1-D own-index id
    "    picked = tf.gather(clip, tf.range(n_frames))\nInvalidArgumentError: indices[64] = 64 "
    "is not in [0, 64) [Op:GatherV2]\n",
    # a vocabulary of 7 words, the id 7 at index 7 of its row by chance
    "InvalidArgumentError: indices[9,7] = 7 is not in [0, 7)\n\t [[{{node sequential/"
    "embedding/embedding_lookup}}]]\n",
])
def test_a_vocabulary_id_keeps_the_input_dim_reading(message: str) -> None:
    cause = explain_log(message).causes[0]
    assert cause.label == "embedding-index-out-of-range"
    assert "Truncate" not in cause.cause + cause.fix


@pytest.mark.parametrize("message", [
    "InvalidArgumentError: indices[1,600] = 600 is not in [0, 512) [Op:ResourceGather]\n",
    "InvalidArgumentError: indices[0,77] = 77 is not in [0, 77)\n\t [[node text_encoder/"
    "position_embedding/Gather ]]\n",
])
def test_a_position_past_its_named_or_pretrained_table_is_truncated(message: str) -> None:
    cause = explain_log(message).causes[0]
    assert cause.label == "embedding-index-out-of-range"
    assert cause.cause.startswith("The sequence is longer")


# 3. tensorflow-gpu loads CUDA at import only before 2.1: a 2.1+ DLL failure keeps the row's
# reading (the C++ runtime, AVX)
def _dll(version: str) -> str:
    return (f"(venv) D:\\work>pip install tensorflow-gpu=={version}\n"
            "(venv) D:\\work>python train.py\nImportError: DLL load failed: The specified module "
            "could not be found.\nFailed to load the native TensorFlow runtime.\n")


def test_a_dll_failure_of_tensorflow_gpu_2_4_is_not_read_as_cuda_at_import() -> None:
    cause = explain_log(_dll("2.4.1")).causes[0]
    assert cause.label == "windows-dll-load-failed"
    assert "msvcp140_1" in cause.cause and "tensorflow-gpu's native module" not in cause.cause


def test_a_dll_failure_of_tensorflow_gpu_1_13_is_read_as_cuda_at_import() -> None:
    cause = explain_log(_dll("1.13.1")).causes[0]
    assert "tensorflow-gpu's native module loads the CUDA" in cause.cause


# 4. "from versions: none" reads the package asked for: tensorflow-gpu ended with 2.11
def _none(python: str, pkg: str) -> str:
    return (f"C:\\> py -V\nPython {python}\nC:\\> pip install {pkg}\nERROR: Could not find a "
            f"version that satisfies the requirement {pkg} (from versions: none)\nERROR: No "
            f"matching distribution found for {pkg}\n")


def test_no_tensorflow_gpu_for_a_python_past_its_last_release_names_the_cuda_extra() -> None:
    cause = explain_log(_none("3.12.4", "tensorflow-gpu")).causes[0]
    assert cause.label == "no-tensorflow-wheel"
    assert "and-cuda" in cause.fix and "2.11" in cause.cause
    assert "32-bit" not in cause.cause.split("Otherwise")[0]


def test_no_tensorflow_for_a_python_some_release_supports_reads_the_platform() -> None:
    # Python 3.13 has wheels of the newest releases: no "Python newer than TF" from the table
    # alone (pip offering none is the interpreter's build or platform)
    cause = explain_log(_none("3.13.2", "tensorflow")).causes[0]
    assert "32-bit Python" in cause.cause.split("Otherwise")[0] and "and-cuda" not in cause.fix
    # ... and tensorflow-gpu for a Python its releases had is the platform too
    gpu = explain_log(_none("3.9.13", "tensorflow-gpu")).causes[0].cause
    assert "32-bit Python" in gpu.split("Otherwise")[0]


# 5. an illegal instruction named in a negated sentence is not the failure
_SHAPES = ("Traceback (most recent call last):\n  File \"fit.py\", line 12, in <module>\n    "
           "model.fit(ds, epochs=2)\nValueError: Shapes (None, 3) and (None, 7) are "
           "incompatible\n")


def test_an_illegal_instruction_the_user_no_longer_gets_does_not_lead() -> None:
    for said in ("With the conda build I don't get illegal instruction any more; now fit says:",
                 "Since 2.13 it never gives illegal instruction, the error is now:"):
        assert explain_log(said + "\n" + _SHAPES).causes[0].label != "cpu-missing-instructions"


def test_an_illegal_instruction_the_user_gets_leads() -> None:
    cause = explain_log("On the old Xeon box importing it I get illegal instruction and python "
                        "exits.\n").causes[0]
    assert cause.label == "cpu-missing-instructions"


# 8. an unbatched validation set only where the log shows it built without .batch()
_VALFIT = ("tr = tf.data.Dataset.from_tensor_slices((a, b)).shuffle(512).batch(16)\n{val}\n"
           "history = net.fit(tr, validation_data=va, epochs=4)\nValueError: Input 0 of layer "
           "\"net\" is incompatible with the layer: expected ndim=4, found ndim=3. Full shape "
           "received: (None, 64, 64)\n")


def test_a_validation_set_from_a_helper_is_not_claimed_unbatched() -> None:
    cause = explain_log(_VALFIT.format(val="va = load_holdout_dataset(c, d)")).causes[0]
    assert "never batched" not in cause.cause


def test_a_validation_set_from_tensor_slices_without_batch_is_named() -> None:
    cause = explain_log(_VALFIT.format(
        val="va = tf.data.Dataset.from_tensor_slices((c, d)).map(norm)")).causes[0]
    assert "'va' is never batched" in cause.cause


# 9. a pin between listed releases: no wheel here, unless a table says no such release exists
def _pin(pkg: str, want: str, offered: str) -> str:
    return (f"$ pip install {pkg}=={want}\nERROR: Could not find a version that satisfies the "
            f"requirement {pkg}=={want} (from versions: {offered})\nERROR: No matching "
            f"distribution found for {pkg}=={want}\n")


def test_a_tensorflow_patch_pip_leaves_out_is_a_missing_wheel_as_the_install_line_says() -> None:
    cause = explain_log(_pin("tensorflow", "2.4.4", "2.4.0, 2.4.1, 2.4.3, 2.5.0, 2.5.1")).causes[0]
    assert "no wheel for this Python/platform" in cause.cause
    assert "never released" not in cause.cause.split("Otherwise")[0]


def test_a_tensorflow_minor_the_tables_do_not_know_was_never_released() -> None:
    cause = explain_log(_pin("tensorflow", "1.16.0", "1.14.0, 1.15.0, 1.15.5, 2.0.0")).causes[0]
    assert "1.16.0 was never released" in cause.cause


# 10. the gathered tensor's name is read up to 80 characters (no unbounded quote)
def test_a_gather_on_a_very_long_name_is_not_quoted_whole() -> None:
    name = "enc" + "_state" * 60
    text = ("/opt/venv/lib/python3.10/site-packages/tensorflow/python/framework/indexed_slices.py:"
            "444: UserWarning: Converting sparse IndexedSlices(IndexedSlices(indices=Tensor(\"g"
            "/Reshape_1:0\", shape=(None,), dtype=int32)) to a dense Tensor of unknown shape. "
            "This may consume a large amount of memory.\n"
            f"    last = tf.gather({name}, lengths - 1)\n")
    ex = explain_log(text)
    assert ex.causes and all(name[:100] not in c.cause + c.fix for c in ex.causes)
    short = explain_log(text.replace(name, "enc_out"))
    assert any("gather(enc_out" in c.cause for c in short.causes)
