"""Stop 46, wave 2 (issue 31: a log holding an error is never "not recognised"): the shell's
``Killed`` whatever the program, an add-on's API called in a form its release lacks, TF-Agents'
spec check quoted without its class, tfjs-node's deps-stage copy; each with twins that must
stay apart. The logs are written here in each class's shape, not copied from round 31."""

from __future__ import annotations

from tfperf.doctor.explain_addon_api import addon_called, addon_of, is_api_shape
from tfperf.doctor.explainer import explain_log


def _top(log: str) -> tuple[str, str]:
    ex = explain_log(log)
    return (ex.causes[0].label, ex.causes[0].severity) if ex.causes else ("-", ex.verdict)


# --- the shell's 'Killed' in a tool whose own lines never say TensorFlow ---------------------

_TOOL_RUN = ("$ demucs-like separate -i song.wav -o out/\n"
             "INFO:tool:Loading audio 'song.wav' from 0.0 to 600.0\n"
             "INFO:tool:Audio data loaded successfully\n")


def test_a_bare_killed_after_a_tools_own_lines_is_read_as_the_oom_killer():
    ex = explain_log(_TOOL_RUN + "Killed\n")
    top = ex.causes[0]
    assert (top.label, top.severity) == ("process-crash", "failure")
    assert "out-of-memory killer" in top.cause
    assert not ex.not_tensorflow


def test_bashs_job_line_killed_is_read_too():
    log = _TOOL_RUN + "./run.sh: line 12: 20311 Killed                  python sep.py\n"
    assert _top(log) == ("process-crash", "failure")


def test_twin_a_segfault_in_a_program_without_tensorflow_stays_not_tensorflows():
    # a crash is a program's own unless TensorFlow shows: only SIGKILL is the system's doing
    ex = explain_log(_TOOL_RUN + "Segmentation fault (core dumped)\n")
    assert not ex.causes and ex.not_tensorflow


def test_twin_killed_inside_a_sentence_is_no_crash():
    ex = explain_log(_TOOL_RUN + "INFO:tool:Killed 3 stale workers before start\n")
    assert not ex.causes


# --- an add-on's API in a form its release lacks ---------------------------------------------

def test_tfp_constructor_typeerror_after_a_tfd_call_is_an_addon_pair_mismatch():
    log = ("dist = tfd.Normal(loc=0., scale=1.)\n"
           "TypeError: __init__() got an unexpected keyword argument 'values'\n\n"
           "tf.__version__\n'2.0.0-beta1'\n")
    ex = explain_log(log)
    top = ex.causes[0]
    assert (top.label, top.severity) == ("tf-addon-version-mismatch", "failure")
    assert top.details["addon"] == ["tensorflow-probability"]
    assert "tensorflow-probability" in top.fix and "TensorFlow 2.0" in top.install


def test_a_missing_method_of_a_tfrs_layer_is_that_addons_release():
    log = ("Traceback (most recent call last):\n"
           '  File "recsys.py", line 40, in <module>\n'
           "    index = tfrs.layers.factorized_top_k.ScaNN(model.user_model)\n"
           '  File "recsys.py", line 41, in <module>\n'
           "    index.index_from_dataset(items)\n"
           "AttributeError: 'ScaNN' object has no attribute 'index_from_dataset'\n")
    ex = explain_log(log)
    assert _top(log) == ("tf-addon-version-mismatch", "failure")
    assert ex.causes[0].details["addon"] == ["tensorflow-recommenders"]


def test_a_quoted_module_name_in_the_message_names_the_addon():
    got = addon_of("module 'tensorflow_addons.layers' has no attribute 'GroupNormalization'")
    assert got is not None and got.addon == "tensorflow-addons"


def test_twin_a_typeerror_in_the_users_own_function_stays_apart():
    # no add-on is called: the program's own function, as a TensorFlow-free script shows it
    log = ("result = build_report(rows, title='x')\n"
           "TypeError: build_report() got an unexpected keyword argument 'title'\n")
    ex = explain_log(log)
    assert not ex.causes and ex.not_tensorflow


def test_twin_a_value_error_of_an_addon_is_not_an_api_shape():
    # an argument's value checked by the add-on is the caller's, not a release mismatch
    assert not is_api_shape("ValueError", "Must pass probs or logits, but not both.")
    log = ("d = tfd.Bernoulli()\n"
           "ValueError: Must pass probs or logits, but not both.\n")
    assert _top(log)[0] != "tf-addon-version-mismatch"


def test_twin_a_variable_named_hub_is_not_tensorflow_hub():
    assert addon_of("hub.connect(port=80)") is None
    assert addon_of("emb = hub.KerasLayer(url)") is not None
    # and an alias inside a longer name is not the alias (my_tfa.x, nottfd.y)
    assert addon_called(["x = nottfd.Normal(0, 1)"], 1, "", "") is None


# --- a TF-Agents spec check quoted without its class -----------------------------------------

def test_time_step_spec_mismatch_without_its_valueerror_prefix_is_read():
    log = ("Given `time_step`: TimeStep(step_type=array(0), reward=array(0., dtype=float32), "
           "discount=array(1., dtype=float32), observation=array([[1., 2., 3.]])) does not "
           "match expected `time_step_spec`: TimeStep(step_type=ArraySpec(shape=(), "
           "dtype=dtype('int32'), name='step_type'), observation=BoundedArraySpec(shape=(3,), "
           "dtype=dtype('float64'), name='observation', minimum=0.0, maximum=1.0))\n")
    ex = explain_log(log)
    top = ex.causes[0]
    assert (top.label, top.severity) == ("value-error", "failure")
    assert "observation_spec" in top.fix


def test_twin_the_same_words_in_a_passing_validation_message_are_not_an_error():
    ex = explain_log("Environment validated: every time_step matched time_step_spec over 5 "
                     "episodes\n")
    assert not ex.causes


# --- tfjs-node's deps-stage step ---------------------------------------------------------------

_NPM = ("npm ERR! code 1\n"
        "npm ERR! path C:\\app\\node_modules\\@tensorflow\\tfjs-node\n"
        "npm ERR! command C:\\Windows\\system32\\cmd.exe /d /s /c node scripts/install.js\n")


def test_the_deps_stage_copy_of_tensorflow_dll_is_a_tfjs_node_install_failure():
    log = (_NPM + "npm ERR! symlink ./lib/napi-v8 failed:  Error: Command failed: node "
           "scripts/deps-stage.js symlink ./lib/napi-v8\n"
           "npm ERR! [Error: ENOENT: no such file or directory, copyfile 'C:\\app\\node_modules"
           "\\@tensorflow\\tfjs-node\\deps\\lib\\tensorflow.dll' -> 'C:\\app\\node_modules"
           "\\@tensorflow\\tfjs-node\\lib\\napi-v8\\tensorflow.dll']\n")
    ex = explain_log(log)
    top = ex.causes[0]
    assert (top.label, top.severity) == ("tfjs-node-install-failed", "failure")
    assert "deps-stage" in top.cause and "tensorflow.dll" in top.fix


def test_twin_a_successful_deps_stage_is_not_a_failure():
    ex = explain_log("> node scripts/deps-stage.js symlink ./lib/napi-v8\n"
                     "* Symlink of lib/napi-v8/libtensorflow.so.2 created\n"
                     "added 120 packages in 35s\n")
    assert not [c for c in ex.causes if c.severity == "failure"]


# --- an add-on's own op failing in its kernel --------------------------------------------------

def test_an_internal_error_in_a_tensorflow_text_op_is_the_addons_pairing():
    log = ("import tensorflow as tf\n"
           "tensorflow.python.framework.errors_impl.InternalError: U_FILE_ACCESS_ERROR: could not "
           "load ICU data [Op:NormalizeUTF8]\n")
    ex = explain_log(log)
    top = ex.causes[0]
    assert (top.label, top.severity) == ("tf-addon-version-mismatch", "failure")
    assert top.details["addon"] == ["tensorflow-text"] and "tensorflow-text" in top.install


def test_twin_an_invalid_argument_in_an_addon_op_is_the_inputs():
    log = ("tensorflow.python.framework.errors_impl.InvalidArgumentError: input must be a "
           "string tensor [Op:NormalizeUTF8]\n")
    assert _top(log)[0] == "invalid-argument-error"


def test_twin_an_internal_error_in_a_core_op_stays_generic():
    log = ("tensorflow.python.framework.errors_impl.InternalError: Blas GEMM launch failed "
           "[Op:MatMul]\n")
    assert _top(log)[0] != "tf-addon-version-mismatch"


# --- which side of a library/TensorFlow pair is behind ------------------------------------------

def _lib_frame(name: str) -> str:
    return ('Traceback (most recent call last):\n'
            '  File "run.py", line 3, in <module>\n'
            '    model = somelib.Model()\n'
            '  File "/env/lib/python3.6/site-packages/somelib/core.py", line 40, in __init__\n'
            f'    if tf.{name}():\n'
            f"AttributeError: module 'tensorflow' has no attribute '{name}'\n")


def test_a_library_missing_a_name_every_tf_still_has_leads_with_upgrading_tensorflow():
    ex = explain_log(_lib_frame("executing_eagerly"))
    top = ex.causes[0]
    assert top.label == "tf-addon-version-mismatch"
    assert top.fix.startswith("Upgrade TensorFlow") and "somelib" in top.fix


def test_twin_a_library_missing_a_removed_name_does_not_blame_tensorflows_age():
    # tf.estimator left in 2.16: the TensorFlow is too new for the library, not too old
    top = explain_log(_lib_frame("estimator")).causes[0]
    assert top.label == "tf-addon-version-mismatch"
    assert not top.fix.startswith("Upgrade TensorFlow")


def test_twin_a_library_missing_a_name_the_logs_release_has_is_not_about_age():
    top = explain_log("tensorflow 2.4.1\n" + _lib_frame("executing_eagerly")).causes[0]
    assert not top.fix.startswith("Upgrade TensorFlow")


# --- a built-in layer saved under its version-suffixed class name ---------------------------------

_TFJS_UNKNOWN = ("tfjs@1.0.0:2 Uncaught (in promise) Error: Unknown layer: {}. This may be due to "
                 "one of the following reasons:\n"
                 "1. The layer is defined in Python, in which case it needs to be ported to "
                 "TensorFlow.js or your JavaScript code.\n")


def test_batchnormalizationv1_unknown_to_tfjs_is_renamed_not_ported():
    top = explain_log(_TFJS_UNKNOWN.format("BatchNormalizationV2")).causes[0]
    assert top.label == "keras-unknown-object"
    assert 'rename "BatchNormalizationV2" to "BatchNormalization"' in top.install


def test_twin_a_custom_layer_with_a_v1_suffix_is_still_ported():
    top = explain_log(_TFJS_UNKNOWN.format("AttentionBlockV1")).causes[0]
    assert "rename" not in top.install and "implement AttentionBlockV1" in top.install


# --- TensorFlow's internals reached as tf.python -----------------------------------------------

def test_tf_python_attribute_is_read_as_internals_not_a_misspelling():
    top = explain_log("tensorflow 2.3.0\nAttributeError: module 'tensorflow' has no attribute "
                      "'python'\n").causes[0]
    assert "internals" in top.detail and "public API" in top.fix
    assert "close:" not in top.fix  # no near spelling of a private package is offered


def test_twin_a_misspelt_public_name_keeps_its_close_spelling():
    top = explain_log("tensorflow 2.3.0\nAttributeError: module 'tensorflow' has no attribute "
                      "'pythn_io'\n").causes[0]
    assert "internals" not in top.detail


# --- a package's 'tensorflow' requirement where TensorFlow is another distribution ---------------

_PIP_NONE = ("ERROR: Could not find a version that satisfies the requirement tensorflow (from "
             "songlib) (from versions: none)\n"
             "ERROR: No matching distribution found for tensorflow\n")


def test_a_dependency_on_tensorflow_with_tensorflow_cpu_installed_is_install_no_deps():
    top = explain_log("$ pip list | grep tensorflow\ntensorflow-cpu 2.10.0\n$ pip install "
                      "songlib\n" + _PIP_NONE).causes[0]
    assert top.label == "no-tensorflow-wheel"
    assert "pip install songlib --no-deps" in top.fix and "tensorflow-cpu" in top.cause


def test_twin_no_other_distribution_named_keeps_the_python_reading():
    top = explain_log("$ pip install songlib\n" + _PIP_NONE).causes[0]
    assert top.label == "no-tensorflow-wheel" and "--no-deps" not in top.fix


def test_twin_a_direct_install_of_tensorflow_is_not_a_dependency():
    top = explain_log("tensorflow-macos 2.11.0\nERROR: Could not find a version that satisfies "
                      "the requirement tensorflow==2.4 (from versions: none)\n").causes[0]
    assert "--no-deps" not in top.fix


# --- transformers: a folder with neither weight file --------------------------------------------

def test_a_folder_with_neither_weight_file_is_not_a_pytorch_only_model():
    log = ("  File \"/usr/lib/python3/dist-packages/transformers/modeling_tf_utils.py\", line 600, "
           "in from_pretrained\n"
           "OSError: Error no file named ['pytorch_model.bin', 'tf_model.h5'] found in directory "
           "/data/run3 or `from_pt` set to False\n")
    top = explain_log(log).causes[0]
    assert top.likely[0][0].startswith("A local folder with neither")
    assert "save_pretrained" in top.likely[0][1]


def test_twin_a_folder_with_pytorch_weights_keeps_from_pt():
    log = ("OSError: Error no file named tf_model.h5 found in directory /data/run3 but there is a "
           "file for PyTorch weights. Use `from_pt=True` to load this model from those weights.\n")
    top = explain_log(log).causes[0]
    assert "from_pt=True" in top.likely[0][1] and "neither" not in top.likely[0][0]


# --- r31b, read as development after its transfer score -----------------------------------------

def test_pytorch_class_on_a_tf_only_model_says_from_tf():
    log = ("OSError: someone/tf-model does not appear to have a file named pytorch_model.bin but "
           "there is a file for TensorFlow weights. Use `from_tf=True` to load this model from "
           "those weights.\n")
    top = explain_log(log).causes[0]
    assert "from_tf=True" in top.likely[0][1] and "TensorFlow class" in top.likely[0][1]


def test_a_third_party_module_missing_a_name_after_pip_backtracked_is_read():
    log = ("In [2]: skyfit.Update(sector=40)\n"
           "AttributeError: module 'skyfit' has no attribute 'Update'\n\n"
           "pip kept backtracking the versions and ended at 0.1.0\n")
    ex = explain_log(log)
    top = ex.causes[0]
    assert top.label == "attribute-error" and "backtracked" in top.cause
    assert "--no-deps" in top.fix


def test_twin_a_stdlib_or_project_module_missing_a_name_stays_apart():
    for mod in ("os", "utils"):
        ex = explain_log(f"AttributeError: module '{mod}' has no attribute 'frobnicate'\n")
        assert not ex.causes and ex.not_tensorflow


def test_a_renamed_blacklist_keyword_is_two_releases_apart():
    top = explain_log("TypeError: configurable() got an unexpected keyword argument "
                      "'blacklist'\n").causes[0]
    assert top.details["renamed"] == ["blacklist -> denylist"]
    assert "before the rename" in top.fix


def test_twin_another_unexpected_keyword_is_not_a_rename():
    ex = explain_log("TypeError: configurable() got an unexpected keyword argument "
                     "'blacklist_file'\n")
    assert not ex.causes


def test_undefined_symbol_told_in_prose_on_an_addon_import_is_an_abi_mismatch():
    log = ('With "tf-nightly-cpu==2.12.0.dev20221101", "import opslib.tensorflow as ol" throws '
           '"undefined symbol" error.\n')
    top = explain_log(log).causes[0]
    assert top.label == "library-load-error"
    assert top.likely[0][0].startswith("A compiled extension loaded with TensorFlow")


def test_twin_undefined_symbol_of_a_cuda_library_keeps_the_cuda_reading():
    log = ("Could not load dynamic library 'libcudnn.so.8': undefined symbol in libcudnn "
           "with tensorflow 2.11\n")
    top = explain_log(log).causes[0]
    assert not top.likely or not top.likely[0][0].startswith("A compiled extension")


def test_tensorboard_without_dashboards_and_a_relative_logdir():
    log = ("No dashboards are active for the current data set.\nProbable causes:\n\n"
           "Last reload: Jul 17, 2024, 4:00:13 PM\nLog directory: runs\n")
    top = explain_log(log).causes[0]
    assert top.label == "tensorboard-no-event-files" and "'runs', is a relative path" in top.cause


def test_twin_an_absolute_logdir_keeps_the_general_reading():
    log = ("No dashboards are active for the current data set.\n"
           "Log directory: /home/me/proj/runs\n")
    top = explain_log(log).causes[0]
    assert top.label == "tensorboard-no-event-files" and "relative path" not in top.cause


def test_twin_tensorboard_serving_normally_is_nothing_wrong():
    ex = explain_log("TensorBoard 2.10.0 at http://localhost:6006/ (Press CTRL+C to quit)\n")
    assert not [c for c in ex.causes if c.severity == "failure"]


def test_the_reporter_saying_only_the_cpu_is_used_wanting_the_gpu_is_gpu_not_visible():
    log = ("INFO: Computed batch 12/1000\n\nthis is very slow, it seems to be only using CPU for "
           "computing (3 sec/batch); how do I make it use the GPU?\n")
    assert _top(log) == ("gpu-not-visible", "failure")


def test_twin_a_cpu_only_run_nobody_asks_a_gpu_for_is_nothing_wrong():
    ex = explain_log("INFO: Computed batch 12/1000\nrunning on CPU only, as configured\n")
    assert not ex.causes


_IPY_IMPORT = ("ImportError\n"
               "----> 3 import chemlib as cl\n"
               "---> 10 from tensorflow.python.pywrap_tensorflow_internal import OldReader\n"
               "ImportError: cannot import name 'OldReader'\n")


def test_a_library_importing_tf_internals_is_its_release_not_mixed_installs():
    top = explain_log(_IPY_IMPORT).causes[0]
    assert top.label == "tf-installs-mixed"
    assert top.cause.startswith("The import of chemlib reached") and "chemlib" in top.fix


def test_twin_the_users_own_import_of_tf_internals_keeps_the_mixed_reading():
    log = ("import numpy as np\n"
           "from tensorflow.python.pywrap_tensorflow_internal import OldReader\n"
           "ImportError: cannot import name 'OldReader' from "
           "'tensorflow.python.pywrap_tensorflow_internal'\n")
    top = explain_log(log).causes[0]
    assert "The import of" not in top.cause


# --- versions a sentence names --------------------------------------------------------------------

def test_a_backticked_pin_and_a_quoted_printout_name_the_tensorflow():
    from tfperf.doctor.explain_versions import read_versions

    assert read_versions("Training fails with `tensorflow==2.13.0` with error:").tensorflow \
        == "2.13.0"
    assert read_versions("Working with Tensorflow: '2.9.0' and Recs: 'v0.3.0'").tensorflow \
        == "2.9.0"


def test_twin_a_quoted_pip_request_is_not_the_installed_tensorflow():
    from tfperf.doctor.explain_versions import read_versions

    assert read_versions("$ pip install 'tensorflow==2.4.1'\nERROR: No matching "
                         "distribution found for tensorflow==2.4.1").tensorflow is None


# --- Keras's internal module paths --------------------------------------------------------------

def test_a_missing_keras_internal_module_on_tf_2_15_names_keras_src():
    top = explain_log("tensorflow 2.15.0\nModuleNotFoundError: No module named "
                      "'keras.layers.convolutional.base_conv'\n").causes[0]
    assert "Keras's internals" in top.cause and "keras.src" in top.cause
    assert "tensorflow<2.13" in top.fix


def test_twin_a_public_keras_module_missing_on_an_old_tf_is_not_internals():
    top = explain_log("tensorflow 1.5.0\nModuleNotFoundError: No module named "
                      "'tensorflow.keras'\n").causes[0]
    assert "internals" not in top.cause


def test_twin_a_keras_internal_module_missing_on_tf_2_4_is_not_the_2_13_move():
    top = explain_log("tensorflow 2.4.0\nModuleNotFoundError: No module named "
                      "'keras.layers.convolutional.base_conv'\n").causes[0]
    assert "keras.src" not in top.cause
