"""Stop 46: a user file shadowing a standard-library module on an import traceback (a generic
reader: sys.stdlib_module_names, outside site-packages and the installed Python), and the
mechanisms dev46a's logs asked for; each with twins that must stay apart."""

from __future__ import annotations

from tfperf.doctor.explain_stdlib_shadow import find_shadow
from tfperf.doctor.explainer import explain_log

_TF_IMPORT = ('Traceback (most recent call last):\n'
              '  File "/tmp/x/train.py", line 1, in <module>\n'
              '    import tensorflow as tf\n'
              '  File "/home/u/venv/lib/python3.10/site-packages/tensorflow/__init__.py", '
              'line 37, in <module>\n'
              '    from tensorflow.python.tools import module_util as _module_util\n')


def _top(log: str) -> tuple[str, str]:
    ex = explain_log(log)
    return (ex.causes[0].label, ex.causes[0].severity) if ex.causes else ("-", ex.verdict)


# --- a user file named like a standard-library module ----------------------------------------

def test_tarfile_importing_the_users_grp_py_is_read_as_a_shadow():
    # the brief's shape: TensorFlow's import reaches tarfile, whose `import grp` runs /tmp/x/grp.py
    log = (_TF_IMPORT
           + '  File "/usr/lib/python3.10/tarfile.py", line 49, in <module>\n'
             '    import grp\n'
             '  File "/tmp/x/grp.py", line 3, in <module>\n'
             '    print(undefined_name)\n'
             "NameError: name 'undefined_name' is not defined\n")
    ex = explain_log(log)
    top = ex.causes[0]
    assert (top.label, top.severity) == ("stdlib-shadowed", "failure")
    assert "/tmp/x/grp.py" in top.detail and "'grp'" in top.detail
    assert "Rename your file" in top.fix and "import grp" in top.fix
    assert len(ex.problems) == 1  # the NameError is its consequence, not a second problem


def test_a_windows_code_py_reached_from_a_dependency_is_a_shadow():
    # tensorflow#40265's class: a code.py in the project folder, imported by pdb/doctest
    log = ('Traceback (most recent call last):\n'
           '  File "C:\\Users\\me\\proj\\run.py", line 2, in <module>\n'
           '    import tensorflow as tf\n'
           '  File "C:\\Python38\\lib\\site-packages\\tensorflow\\__init__.py", line 41, '
           'in <module>\n'
           '    from tensorflow.python.tools import module_util as _module_util\n'
           '  File "C:\\Python38\\Lib\\pdb.py", line 77, in <module>\n'
           '    import code\n'
           '  File "C:\\Users\\me\\proj\\code.py", line 5, in <module>\n'
           '    model = tf.keras.Sequential()\n'
           "AttributeError: partially initialized module 'tensorflow' has no attribute 'keras' "
           "(most likely due to a circular import)\n")
    shadow = find_shadow(log)
    assert shadow is not None and shadow.module == "code"
    assert _top(log) == ("stdlib-shadowed", "failure")


def test_a_folder_named_like_a_stdlib_package_is_a_shadow():
    log = (_TF_IMPORT
           + '  File "/usr/lib/python3.10/logging/__init__.py", line 26, in <module>\n'
             '    import sys, os, time, io, re, traceback, warnings, weakref, collections.abc\n'
             '  File "/usr/lib/python3.10/traceback.py", line 5, in <module>\n'
             '    import linecache\n'
             '  File "/home/u/work/linecache/__init__.py", line 1, in <module>\n'
             '    from .cache import Cache\n'
             "ModuleNotFoundError: No module named 'linecache.cache'\n")
    shadow = find_shadow(log)
    assert shadow is not None and shadow.module == "linecache"


def test_the_standard_librarys_own_frames_are_no_shadow():
    # twin: tarfile's `import grp` runs the real grp (Linux, conda, Windows, macOS framework)
    for grp_path in ("/usr/lib/python3.10/grp.py",
                     "/home/u/anaconda3/lib/python3.7/grp.py",
                     "C:\\Python38\\Lib\\grp.py",
                     "/Library/Frameworks/Python.framework/Versions/3.8/lib/python3.8/grp.py"):
        log = (_TF_IMPORT
               + '  File "/usr/lib/python3.10/tarfile.py", line 49, in <module>\n'
                 '    import grp\n'
                 f'  File "{grp_path}", line 3, in <module>\n'
                 '    import broken\n'
                 "ModuleNotFoundError: No module named 'broken'\n")
        assert find_shadow(log) is None, grp_path


def test_a_script_named_like_a_stdlib_module_run_directly_is_no_shadow():
    # twin: `python random.py` shows random.py as the first frame, reached by no import line
    log = ('Traceback (most recent call last):\n'
           '  File "/tmp/x/random.py", line 4, in <module>\n'
           '    model.fit(x, y)\n'
           "ValueError: Shapes (None, 1) and (None, 10) are incompatible\n")
    assert find_shadow(log) is None
    assert _top(log)[0] != "stdlib-shadowed"


def test_a_package_module_named_like_a_stdlib_module_is_no_shadow():
    # twin: `from mypkg import types` imports mypkg, not the standard types
    log = ('Traceback (most recent call last):\n'
           '  File "/tmp/proj/main.py", line 1, in <module>\n'
           '    from mypkg import types\n'
           '  File "/tmp/proj/mypkg/types.py", line 2, in <module>\n'
           '    import tensorflow as tf\n'
           "ModuleNotFoundError: No module named 'tensorflow'\n")
    assert find_shadow(log) is None


def test_a_site_packages_module_named_like_a_stdlib_one_is_no_shadow():
    # twin: an installed backport (enum34's enum) is a package problem, not a file of the user's
    log = (_TF_IMPORT
           + '  File "/usr/lib/python3.10/re.py", line 124, in <module>\n'
             '    import enum\n'
             '  File "/home/u/venv/lib/python3.10/site-packages/enum/__init__.py", line 35, in '
             '<module>\n'
             "AttributeError: module 'enum' has no attribute 'IntFlag'\n")
    assert find_shadow(log) is None


def test_a_user_file_not_named_like_a_stdlib_module_is_no_shadow():
    # twin: importing the user's own helpers.py is ordinary
    log = (_TF_IMPORT.replace("import tensorflow as tf", "import helpers")
           .replace("/home/u/venv/lib/python3.10/site-packages/tensorflow/__init__.py",
                    "/tmp/x/helpers.py")
           + "NameError: name 'tf' is not defined\n")
    assert find_shadow(log) is None


# --- dev46a: Keras's target check by its numbers ----------------------------------------------

def test_labels_one_column_wider_than_the_output_are_ids_from_one():
    # five classes numbered 1..5: to_categorical makes 6 columns, column 0 unused
    log = ("ValueError: Error when checking target: expected dense_3 to have shape (None, 5) but "
           "got array with shape (1200, 6)\n")
    top = explain_log(log).causes[0]
    assert top.label == "labels-output-mismatch"
    assert "to_categorical(y - 1, num_classes=5)" in top.fix and "1..5" in top.cause


def test_labels_of_another_width_keep_the_rows_reading():
    # twin: 10 units against 2 columns is not the off-by-one numbering
    log = ("ValueError: Error when checking target: expected dense_2 to have shape (None, 10) but "
           "got array with shape (500, 2)\n")
    top = explain_log(log).causes[0]
    assert top.label == "labels-output-mismatch" and "to_categorical(y - 1" not in top.fix


def test_a_target_of_more_dimensions_than_the_labels_is_a_per_step_output():
    # a GRU that returns sequences before the last Dense: (None, 20, 1) against (800, 1)
    log = ("ValueError: Error when checking target: expected dense_1 to have 3 dimensions, but got "
           "array with shape (800, 1)\n")
    top = explain_log(log).causes[0]
    assert top.label == "labels-output-mismatch" and "return_sequences=False" in top.fix


def test_an_input_check_of_dimensions_stays_the_inputs():
    # twin: the same words for an input layer are the input's shape, not the labels'
    log = ("ValueError: Error when checking input: expected conv2d_1_input to have 4 dimensions, "
           "but got array with shape (60000, 28, 28)\n")
    assert _top(log)[0] == "input-shape-mismatch"


def test_the_input_check_quoted_without_its_prefix_is_still_the_input_shape():
    # Q&A pages quote the message's core only ("expected ... to have 4 dimensions ...")
    log = ("expected conv2d_1_input to have 4 dimensions, but got array with shape "
           "(28, 28, 1)\n")
    top = explain_log(log).causes[0]
    assert top.label == "input-shape-mismatch" and "batch axis" in top.detail


def test_a_prefixless_check_of_a_non_input_layer_is_not_read_as_the_input():
    # twin: a target layer's name without the "target" prefix is not taken for the input
    log = "expected dense_1 to have 3 dimensions, but got array with shape (118, 1)\n"
    assert _top(log)[0] != "input-shape-mismatch"


# --- dev46a: the checkpoint restore message's own core ----------------------------------------

def test_the_graph_and_checkpoint_mismatch_sentence_is_a_checkpoint_mismatch():
    # TF 1.x's restore message, as its middle sentence is quoted
    log = ("InvalidArgumentError (see above for traceback): Restoring from checkpoint failed. This "
           "is most likely due to a mismatch between the current graph and the graph from the "
           "checkpoint. Please ensure that you have not altered the graph expected based on the "
           "checkpoint. Original error:\n\nAssign requires shapes of both tensors to match. lhs "
           "shape= [10] rhs shape= [5]\n")
    assert _top(log) == ("checkpoint-mismatch", "failure")
    assert _top("InvalidArgumentError: Mismatch between the current graph and the graph from "
                "the checkpoint\n") == ("checkpoint-mismatch", "failure")


def test_a_graph_mismatch_without_a_checkpoint_is_not_one():
    # twin: another graph mismatch (a function's) names no checkpoint
    log = ("ValueError: Tensor(\"x:0\") must be from the same graph as Tensor(\"y:0\") (graphs "
           "are FuncGraph and the current graph)\n")
    assert _top(log)[0] != "checkpoint-mismatch"


# --- round 30's open misses, by mechanism ----------------------------------------------------

def test_an_input_shape_holding_the_row_count_is_named():
    # a Keras wording of tfjs#315's class: input_shape=(120, 8) for 120 training rows
    log = ("ValueError: Error when checking input: expected dense_1_input to have shape "
           "(None, 120, 8) but got array with shape (1, 30, 8)\n")
    top = explain_log(log).causes[0]
    assert top.label == "input-shape-mismatch"
    assert "input_shape=(8,)" in top.fix and "120 rows" in top.cause


def test_an_input_of_another_size_is_not_a_row_count():
    # twin: 224 against 299 pixels is an image size, not rows (the batch is not 1)
    log = ("ValueError: Error when checking input: expected input_1 to have shape "
           "(None, 299, 299, 3) but got array with shape (32, 224, 224, 3)\n")
    top = explain_log(log).causes[0]
    assert top.label == "input-shape-mismatch" and "holds a number of rows" not in top.cause


def test_a_third_party_modules_missing_name_is_that_packages_version():
    # another Keras-side package's rename between its releases (keras_cv)
    log = ("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
           "    aug = keras_cv.layers.RandAugment(value_range=(0, 255))\n"
           "AttributeError: module 'keras_cv.layers' has no attribute 'RandAugment'\n")
    top = explain_log(log).causes[0]
    assert top.label == "attribute-error"
    assert "pip install 'keras-cv==" in top.fix and "not TensorFlow's" in top.cause


def test_tensorflows_own_missing_name_keeps_its_reading():
    # twin: module 'tensorflow' is the API table's to read
    top = explain_log("AttributeError: module 'tensorflow' has no attribute 'placeholder'\n"
                      ).causes[0]
    assert "pip install 'tensorflow==<that version>'" not in top.fix


def test_an_unknown_lambda_layer_is_rebuilt_in_code_with_its_weights():
    # Keras's own Lambda, saved with a lambda that the loading process cannot rebuild
    log = "ValueError: Unknown layer: Lambda\n"
    top = explain_log(log).causes[0]
    assert top.label == "keras-unknown-object" and "load_weights" in top.fix


def test_an_unknown_custom_layer_keeps_the_custom_objects_reading():
    # twin: a plain custom layer (no wrapped function) is custom_objects' case
    top = explain_log("ValueError: Unknown layer: AttentionLayer\n").causes[0]
    assert top.label == "keras-unknown-object" and "wraps a Python function" not in top.cause


def test_a_tf_agents_spec_mismatch_points_at_the_observation():
    log = ("ValueError: Given `time_step`: TimeStep(\n{'discount': array(1., dtype=float32),\n"
           " 'observation': array([[0, 1, 0]]),\n 'reward': array(0., dtype=float32),\n"
           " 'step_type': array(0, dtype=int32)}) does not match expected `time_step_spec`: "
           "TimeStep(\n{'observation': BoundedArraySpec(shape=(3,), dtype=dtype('int32'), "
           "name='observation', minimum=0, maximum=1)})\n")
    top = explain_log(log).causes[0]
    assert "observation_spec" in top.fix and "np.array([state])" in top.cause


def test_visible_devices_from_one_and_no_cuda_device_hide_the_gpu():
    log = ("export CUDA_VISIBLE_DEVICES=2\n"
           "E tensorflow/stream_executor/cuda/cuda_driver.cc:351] failed call to cuInit: "
           "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected\n"
           "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:163] retrieving CUDA diagnostic "
           "information for host: box\n")
    top = explain_log(log).causes[0]
    assert (top.label, top.severity) == ("gpu-not-visible", "failure")
    assert "CUDA_VISIBLE_DEVICES=2" in top.cause and "\"0\"" in top.fix


def test_visible_devices_from_one_with_a_gpu_created_is_fine():
    # twin: GPU 1 of a two-GPU machine, created: nothing hidden
    log = ('os.environ["CUDA_VISIBLE_DEVICES"] = "1"\n'
           "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1326] Created TensorFlow device "
           "(/job:localhost/replica:0/task:0/device:GPU:0 with 10805 MB memory) -> physical GPU "
           "(device: 0, name: GeForce GTX 1080 Ti, pci bus id: 0000:02:00.0)\n")
    assert _top(log)[0] != "gpu-not-visible"


def test_visible_devices_emptied_on_purpose_is_no_hidden_gpu():
    # twin: "" or -1 hides the GPUs by design (CPU runs)
    log = ('os.environ["CUDA_VISIBLE_DEVICES"] = "-1"\n'
           "E tensorflow/stream_executor/cuda/cuda_driver.cc:351] failed call to cuInit: "
           "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected\n"
           "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:163] retrieving CUDA diagnostic "
           "information for host: box\n")
    assert _top(log)[0] != "gpu-not-visible"


# --- dev46b, read as development after its transfer score (27786f9b: 6/10, no change) ---------

def test_a_symbolic_keras_value_reaching_numpy_is_keras_symbolic_in_eager():
    # TF 2.4+'s wording, with its second sentence
    log = ("TypeError: Cannot convert a symbolic Keras input/output to a numpy array. This error "
           "may indicate that you're trying to pass a symbolic value to a NumPy call, which is "
           "not supported. Or, you may be trying to pass Keras symbolic inputs/outputs to a TF "
           "API that does not register dispatching\n")
    assert _top(log) == ("keras-symbolic-tensor-in-eager", "failure")


def test_a_symbolic_tensor_quoted_without_its_name_is_the_numpy_tf_pair():
    log = "NotImplementedError: Cannot convert a symbolic Tensor to a numpy array.\n"
    assert _top(log)[0] == "numpy-too-new-for-tf"
    # twin: the named form reads as before
    named = ("NotImplementedError: Cannot convert a symbolic Tensor (lstm/strided_slice:0) to a "
             "numpy array.\n")
    assert _top(named)[0] == "numpy-too-new-for-tf"


def test_a_missing_tensorflow_internal_module_is_a_keras_tf_mismatch():
    log = ("  File \"/opt/conda/lib/python3.8/site-packages/keras/layers/core/dense.py\", line 22, "
           "in <module>\n    from tensorflow.python.keras.engine import base_layer_v1\n"
           "ModuleNotFoundError: No module named 'tensorflow.python.keras.engine.base_layer_v1'\n")
    assert _top(log) == ("keras-tf-version-mismatch", "failure")


def test_tensorflow_not_a_package_stays_a_shadow():
    # twin: 'tensorflow' is not a package is a file of the user's named tensorflow.py
    log = ("ModuleNotFoundError: No module named 'tensorflow.python'; 'tensorflow' is not a "
           "package\n")
    assert _top(log)[0] != "keras-tf-version-mismatch"


def test_conda_without_tensorflow_deps_is_an_intel_conda_on_apple_silicon():
    log = ("Collecting package metadata (current_repodata.json): done\n"
           "Solving environment: failed with initial frozen solve. Retrying with flexible solve.\n"
           "\nPackagesNotFoundError: The following packages are not available from current "
           "channels:\n\n  - tensorflow-deps\n\nCurrent channels:\n\n"
           "  - https://conda.anaconda.org/apple/osx-64\n")
    top = explain_log(log).causes[0]
    assert (top.label, top.severity) == ("macos-wrong-architecture", "failure")
    assert "arm64" in top.fix


def test_tensorflow_deps_in_an_environment_file_is_no_error():
    # twin: the package listed where nothing failed
    log = "name: tf\nchannels:\n  - apple\ndependencies:\n  - tensorflow-deps\n  - python=3.9\n"
    assert _top(log)[0] != "macos-wrong-architecture"


def test_conda_missing_another_package_is_not_the_mac_architecture():
    # twin: a pinned release a channel lacks is conda's package list, not the architecture
    log = ("PackagesNotFoundError: The following packages are not available from current "
           "channels:\n\n  - tensorflow-gpu==1.15\n")
    assert _top(log)[0] != "macos-wrong-architecture"


def test_an_unknown_lambda_in_tensorflow_js_keeps_the_port_it_reading():
    # twin: TensorFlow.js cannot run a Python lambda at all; weights alone do not help there
    log = ("Error: Unknown layer: Lambda. This may be due to one of the following reasons:\n"
           "1. The layer is defined in Python, in which case it needs to be ported to "
           "TensorFlow.js or your JavaScript code.\n2. The custom layer is defined in "
           "JavaScript, but is not registered properly with tf.serialization.registerClass().\n")
    top = explain_log(log).causes[0]
    assert "wraps a Python function" not in top.cause
