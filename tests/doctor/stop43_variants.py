"""Stop 43's probe of explain's long tail: error logs of our own (not copies of any thread), in
the shapes real logs have, for classes and add-ons tfperf has few or no rows for: other
``tf.errors`` classes, tensorflow_io / addons / text, tf-agents, TensorFlow Probability,
tensorflow-metal, DirectML, Windows / macOS / ARM import failures, Keras 3 against tf.keras, XLA
and TPUs, SavedModel and TFLite conversion, distributed runs. ``test_explain_stop43.py`` asserts
the label each must get (never "nothing wrong" or "not recognised") and the reading it leads with;
``B`` holds benign logs of the same families, each of which must read "nothing wrong".
"""

# ruff: noqa: E501
V: dict[str, str] = {}
V["unimpl_cast"] = """Epoch 1/10
Traceback (most recent call last):
  File "/home/ana/proj/train_csv.py", line 41, in <module>
    model.fit(ds, epochs=10)
  File "/home/ana/.venv/lib/python3.10/site-packages/keras/src/utils/traceback_utils.py", line 70, in error_handler
    raise e.with_traceback(filtered_tb) from None
tensorflow.python.framework.errors_impl.UnimplementedError: Graph execution error:

Detected at node 'Cast_1' defined at (most recent call last):
Cast string to float is not supported
\t [[{{node Cast_1}}]] [Op:__inference_train_function_1873]
"""
V["perm_denied_save"] = """Traceback (most recent call last):
  File "C:\\Users\\kim\\work\\run.py", line 88, in <module>
    ckpt_manager.save()
  File "C:\\Users\\kim\\miniconda3\\envs\\tf\\lib\\site-packages\\tensorflow\\python\\checkpoint\\checkpoint_management.py", line 815, in save
    save_path = self._checkpoint.write(prefix)
tensorflow.python.framework.errors_impl.PermissionDeniedError: Failed to create a NewWriteableFile: D:\\shared\\ckpt\\ckpt-3_temp\\part-00000-of-00001.data-00000-of-00001.tempstate6021 : Access is denied.
; Input/output error [Op:SaveV2]
"""
V["unavailable_grpc"] = """2024-03-11 09:12:44.120311: I tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc:457] Started server with target: grpc://10.0.0.4:12345
2024-03-11 09:13:44.524801: E tensorflow/core/distributed_runtime/rpc/grpc_remote_worker.cc:390] Worker not responding
Traceback (most recent call last):
  File "/opt/job/train_multi.py", line 63, in <module>
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
tensorflow.python.framework.errors_impl.UnavailableError: failed to connect to all addresses
Additional GRPC error information from remote target /job:worker/replica:0/task:1:
:{"created":"@1710148424.524","description":"Failed to pick subchannel","file":"external/com_github_grpc_grpc/src/core/ext/filters/client_channel/client_channel.cc","file_line":3940}
"""
V["deadline_tpu"] = """INFO:tensorflow:Initializing the TPU system: grpc://10.23.1.2:8470
Traceback (most recent call last):
  File "train_tpu.py", line 22, in <module>
    tf.tpu.experimental.initialize_tpu_system(resolver)
  File "/usr/local/lib/python3.8/dist-packages/tensorflow/python/tpu/tpu_strategy_util.py", line 125, in initialize_tpu_system
    output = _tpu_init_fn()
tensorflow.python.framework.errors_impl.DeadlineExceededError: Deadline Exceeded
"""
V["cancelled_recv"] = """Epoch 3/50
 412/1563 [======>.......................] - ETA: 1:02 - loss: 0.9134
2023-07-01 18:02:11.884199: W tensorflow/core/framework/op_kernel.cc:1816] OP_REQUIRES failed at strided_slice_op.cc:117 : INVALID_ARGUMENT: slice index 7 of dimension 0 out of bounds.
Traceback (most recent call last):
  File "/work/m.py", line 102, in <module>
    model.fit(train_ds, epochs=50)
tensorflow.python.framework.errors_impl.CancelledError: Graph execution error:

RecvAsync is cancelled.
\t [[{{node cond/then/_0/cond/IteratorGetNext}}]]
"""
V["tfio_so"] = """Traceback (most recent call last):
  File "/home/lee/audio/load.py", line 3, in <module>
    import tensorflow_io as tfio
  File "/home/lee/.local/lib/python3.11/site-packages/tensorflow_io/__init__.py", line 17, in <module>
    from tensorflow_io.python import api
  File "/home/lee/.local/lib/python3.11/site-packages/tensorflow_io/python/ops/__init__.py", line 96, in <module>
    core_ops = LazyLoader("core_ops", "libtensorflow_io.so")
NotImplementedError: unable to open file: libtensorflow_io.so, from paths: ['/home/lee/.local/lib/python3.11/site-packages/tensorflow_io/python/ops/libtensorflow_io.so']
caused by: ['/home/lee/.local/lib/python3.11/site-packages/tensorflow_io/python/ops/libtensorflow_io.so: undefined symbol: _ZN10tensorflow6StatusC1EN4absl12lts_2023080212StatusCodeESt17basic_string_viewIcSt11char_traitsIcEENS_14SourceLocationE']
"""
V["tfa_unsupported"] = """/usr/local/lib/python3.10/dist-packages/tensorflow_addons/utils/tfa_eol_msg.py:23: UserWarning:

TensorFlow Addons (TFA) has ended development and introduction of new features.
/usr/local/lib/python3.10/dist-packages/tensorflow_addons/utils/ensure_tf_install.py:53: UserWarning: Tensorflow Addons supports using Python ops for all Tensorflow versions above or equal to 2.12.0 and strictly below 2.15.0 (nightly versions are not supported).
 The versions of TensorFlow you are currently using is 2.16.1 and is not supported.
Traceback (most recent call last):
  File "/content/seg.py", line 9, in <module>
    loss = tfa.losses.SigmoidFocalCrossEntropy()
AttributeError: module 'keras._tf_keras.keras.losses' has no attribute 'LossFunctionWrapper'
"""
V["tftext_symbol"] = """Traceback (most recent call last):
  File "bert_prep.py", line 2, in <module>
    import tensorflow_text as text
  File "/opt/conda/lib/python3.9/site-packages/tensorflow_text/__init__.py", line 20, in <module>
    from tensorflow_text.python import metrics
  File "/opt/conda/lib/python3.9/site-packages/tensorflow_text/python/ops/__init__.py", line 23, in <module>
    from tensorflow_text.python.ops.boise_offset_converter import create_boise_offsets
  File "/opt/conda/lib/python3.9/site-packages/tensorflow/python/framework/load_library.py", line 54, in load_op_library
    lib_handle = py_tf.TF_LoadLibrary(library_filename)
tensorflow.python.framework.errors_impl.NotFoundError: /opt/conda/lib/python3.9/site-packages/tensorflow_text/python/ops/_boise_offset_converter.so: undefined symbol: _ZNK10tensorflow8OpKernel11TraceStringB5cxx11ERKNS_15OpKernelContextEb
"""
V["tfagents_tfp"] = """Traceback (most recent call last):
  File "/home/u/rl/dqn.py", line 4, in <module>
    from tf_agents.agents.dqn import dqn_agent
  File "/home/u/.venv/lib/python3.10/site-packages/tf_agents/__init__.py", line 63, in <module>
    _ensure_tfp_version()
  File "/home/u/.venv/lib/python3.10/site-packages/tf_agents/__init__.py", line 56, in _ensure_tfp_version
    raise ImportError(
ImportError: This version of TF-Agents requires TensorFlow Probability version >= 0.22.0; Detected an installation of version 0.19.0. Please upgrade TensorFlow Probability.
"""
V["tfp_tf"] = """Traceback (most recent call last):
  File "vae.py", line 5, in <module>
    import tensorflow_probability as tfp
  File "/usr/lib/python3.11/site-packages/tensorflow_probability/__init__.py", line 22, in <module>
    from tensorflow_probability.python import *  # pylint: disable=wildcard-import
  File "/usr/lib/python3.11/site-packages/tensorflow_probability/python/__init__.py", line 52, in _ensure_tf_install
    raise ImportError(
ImportError: This version of TensorFlow Probability requires TensorFlow version >= 2.16; Detected an installation of version 2.14.0. Please upgrade TensorFlow to proceed.
"""
V["metal_symbol"] = """Traceback (most recent call last):
  File "/Users/jo/dev/mnist.py", line 1, in <module>
    import tensorflow as tf
  File "/Users/jo/miniforge3/lib/python3.11/site-packages/tensorflow/python/framework/load_library.py", line 151, in load_library
    py_tf.TF_LoadLibrary(lib)
tensorflow.python.framework.errors_impl.NotFoundError: dlopen(/Users/jo/miniforge3/lib/python3.11/site-packages/tensorflow-plugins/libmetal_plugin.dylib, 0x0006): Symbol not found: _TF_GetInputPropertiesList
  Referenced from: <7A2B> /Users/jo/miniforge3/lib/python3.11/site-packages/tensorflow-plugins/libmetal_plugin.dylib
  Expected in:     <E1C4> /Users/jo/miniforge3/lib/python3.11/site-packages/tensorflow/python/_pywrap_tensorflow_internal.so
"""
V["directml_assign"] = """2023-05-20 11:02:03.112331: I tensorflow/c/logging.cc:34] DirectML: creating device on adapter 0 (AMD Radeon RX 6700 XT)
2023-05-20 11:02:05.402113: W tensorflow/core/common_runtime/colocation_graph.cc:1218] Failed to place the graph without changing the devices of some resources.
Traceback (most recent call last):
  File "C:\\src\\gan.py", line 77, in train_step
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
tensorflow.python.framework.errors_impl.InvalidArgumentError: Cannot assign a device for operation Adam/ResourceApplyAdam: Could not satisfy explicit device specification '/job:localhost/replica:0/task:0/device:DML:0' because no supported kernel for DML devices is available.
Colocation Debug Info:
Colocation group had the following types and supported devices:
Root Member(assigned_device_name_index_=-1 requested_device_name_='/job:localhost/replica:0/task:0/device:DML:0' assigned_device_name_='' resource_device_name_='/job:localhost/replica:0/task:0/device:DML:0' supported_device_types_=[CPU] possible_devices_=[]
ResourceApplyAdam: CPU
"""
V["win_dll_init"] = """Traceback (most recent call last):
  File "C:\\Python311\\Lib\\site-packages\\tensorflow\\python\\pywrap_tensorflow.py", line 70, in <module>
    from tensorflow.python._pywrap_tensorflow_internal import *
ImportError: DLL load failed while importing _pywrap_tensorflow_internal: A dynamic link library (DLL) initialization routine failed.

Failed to load the native TensorFlow runtime.
See https://www.tensorflow.org/install/errors for some common causes and solutions.
"""
V["mac_arch"] = """Traceback (most recent call last):
  File "/Users/pat/t.py", line 1, in <module>
    import tensorflow as tf
  File "/Users/pat/venv/lib/python3.9/site-packages/tensorflow/python/pywrap_tensorflow.py", line 73, in <module>
    raise ImportError(
ImportError: dlopen(/Users/pat/venv/lib/python3.9/site-packages/tensorflow/python/_pywrap_tensorflow_internal.so, 0x0002): tried: '/Users/pat/venv/lib/python3.9/site-packages/tensorflow/python/_pywrap_tensorflow_internal.so' (mach-o file, but is an incompatible architecture (have 'x86_64', need 'arm64e' or 'arm64'))
"""
V["arm_static_tls"] = """Traceback (most recent call last):
  File "/home/pi/detect.py", line 2, in <module>
    import tensorflow as tf
  File "/home/pi/env/lib/python3.9/site-packages/tensorflow/__init__.py", line 37, in <module>
    from tensorflow.python.tools import module_util as _module_util
ImportError: /lib/aarch64-linux-gnu/libgomp.so.1: cannot allocate memory in static TLS block
"""
V["keras3_format"] = """Traceback (most recent call last):
  File "/app/serve.py", line 14, in <module>
    model = keras.models.load_model("export/my_model")
  File "/app/.venv/lib/python3.11/site-packages/keras/src/saving/saving_api.py", line 191, in load_model
    raise ValueError(
ValueError: File format not supported: filepath=export/my_model. Keras 3 only supports V3 `.keras` files and legacy H5 format files (`.h5` extension). Note that the legacy SavedModel format is not supported by `load_model()` in Keras 3. In order to reload a TensorFlow SavedModel as an inference-only layer in Keras 3, use `keras.layers.TFSMLayer(export/my_model, call_endpoint='serving_default')` (note that your `call_endpoint` might have a different name).
"""
V["keras3_hub_layer"] = """Traceback (most recent call last):
  File "/content/clf.py", line 20, in <module>
    model = tf.keras.Sequential([hub_layer, tf.keras.layers.Dense(16, activation='relu')])
  File "/usr/local/lib/python3.10/dist-packages/keras/src/models/sequential.py", line 75, in __init__
    self.add(layer, rebuild=False)
  File "/usr/local/lib/python3.10/dist-packages/keras/src/models/sequential.py", line 97, in add
    raise ValueError(
ValueError: Only instances of `keras.Layer` can be added to a Sequential model. Received: <tensorflow_hub.keras_layer.KerasLayer object at 0x7b2a1c4d9f60> (of type <class 'tensorflow_hub.keras_layer.KerasLayer'>)
"""
V["keras3_kerastensor"] = """Traceback (most recent call last):
  File "/home/r/m.py", line 11, in <module>
    x = tf.nn.relu6(inputs)
ValueError: A KerasTensor cannot be used as input to a TensorFlow function. A KerasTensor is a symbolic placeholder for a shape and dtype, used when constructing Keras Functional models or Keras Functions. You can only use it as input to a Keras layer or a Keras operation (from the namespaces `keras.layers` and `keras.operations`). You are likely doing something like:
"""
V["xla_unsupported"] = """Traceback (most recent call last):
  File "/home/z/tok.py", line 30, in <module>
    out = step(batch)
  File "/home/z/.venv/lib/python3.10/site-packages/tensorflow/python/util/traceback_utils.py", line 153, in error_handler
    raise e.with_traceback(filtered_tb) from None
tensorflow.python.framework.errors_impl.InvalidArgumentError: Detected unsupported operations when trying to compile graph __inference_step_412[] on XLA_GPU_JIT: StringSplitV2 (No registered 'StringSplitV2' OpKernel for XLA_GPU_JIT devices compatible with node {{node StringSplitV2}}){{node StringSplitV2}}
One approach is to outside compile the unsupported ops to run on CPUs by enabling soft placement `tf.config.set_soft_device_placement(True)`. This has a potential performance penalty.
 [Op:__inference_step_412]
"""
V["tpu_local_file"] = """Traceback (most recent call last):
  File "/content/train.py", line 58, in <module>
    model.fit(train_ds, epochs=5, steps_per_epoch=200)
  File "/usr/local/lib/python3.8/dist-packages/tensorflow/python/eager/execute.py", line 54, in quick_execute
    tensors = pywrap_tfe.TFE_Py_Execute(ctx._handle, device_name, op_name,
tensorflow.python.framework.errors_impl.UnimplementedError: File system scheme '[local]' not implemented (file: '/content/data/train-00.tfrec')
\tEncountered when executing an operation using EagerExecutor. This error cancels all future operations and poisons their output tensors.
"""
V["tpu_hbm_oom"] = """Traceback (most recent call last):
  File "/kaggle/working/run.py", line 80, in <module>
    history = model.fit(ds, epochs=10)
tensorflow.python.framework.errors_impl.ResourceExhaustedError: 9 root error(s) found.
  (0) RESOURCE_EXHAUSTED: Attempting to reserve 14.51G at the bottom of memory. That was not possible. There are 12.92G free, 0B reserved, and 12.92G reservable.
\t [[{{node cluster_train_function/_execute_8_0}}]]
"""
V["savedmodel_capture"] = """Traceback (most recent call last):
  File "/srv/export.py", line 40, in <module>
    tf.saved_model.save(module, "out/")
  File "/srv/.venv/lib/python3.10/site-packages/tensorflow/python/saved_model/save.py", line 1290, in save
    save_and_return_nodes(obj, export_dir, signatures, options)
ValueError: Unable to save function b'__inference_serve_2871' because it captures graph tensor Tensor("vocab_lookup/Const:0", shape=(5000,), dtype=string) from a parent function which cannot be converted to a constant with `tf.get_static_value`.
"""
V["tflite_notflex"] = """2024-01-12 14:00:01.000000: W tensorflow/compiler/mlir/lite/flatbuffer_export.cc:2201] TFLite interpreter needs to link Flex delegate in order to run the model since it contains the following Select TFop(s):
Traceback (most recent call last):
  File "convert.py", line 12, in <module>
    tflite_model = converter.convert()
tensorflow.lite.python.convert_phase.ConverterError: /srv/convert.py:8:0: error: 'tf.Erfinv' op is neither a custom op nor a flex op
<unknown>:0: note: loc(fused["StatefulPartitionedCall:", "StatefulPartitionedCall"]): called from
<unknown>:0: error: failed while converting: 'main':
Some ops are not supported by the native TFLite runtime, you can enable TF kernels fallback using TF Select. See instructions: https://www.tensorflow.org/lite/guide/ops_select
TF Select ops: Erfinv
"""
V["tflite_prepare"] = """Traceback (most recent call last):
  File "/home/pi/cam.py", line 33, in <module>
    interpreter.allocate_tensors()
  File "/usr/lib/python3/dist-packages/tflite_runtime/interpreter.py", line 531, in allocate_tensors
    return self._interpreter.AllocateTensors()
RuntimeError: tensorflow/lite/kernels/conv.cc:351 input->dims->size != 4 (3 != 4)Node number 0 (CONV_2D) failed to prepare.
"""
V["collective_shape"] = """2024-02-02 10:00:10.000000: E tensorflow/core/common_runtime/base_collective_executor.cc:249] BaseCollectiveExecutor::StartAbort INVALID_ARGUMENT: Shape mismatch in the collective instance 102. Op at device /job:worker/replica:0/task:1/device:CPU:0 expected shape [2048] but another member in the group expected the same key 102 to have shape [1024]
Traceback (most recent call last):
  File "mw.py", line 70, in <module>
    model.fit(ds, epochs=3, steps_per_epoch=50)
tensorflow.python.framework.errors_impl.InvalidArgumentError: Collective ops is aborted by: Shape mismatch in the collective instance 102. Op at device /job:worker/replica:0/task:1/device:CPU:0 expected shape [2048] but another member in the group expected the same key 102 to have shape [1024]
The error could be from a previous operation. Restart your program to reset.
"""
V["ckpt_checksum"] = """Traceback (most recent call last):
  File "/home/m/eval.py", line 19, in <module>
    ckpt.restore(tf.train.latest_checkpoint("ckpts")).expect_partial()
tensorflow.python.framework.errors_impl.DataLossError: Checksum does not match: stored 1982347812 vs. calculated on the restored bytes 3812290011
"""
V["aborted_onednn"] = """2023-10-10 10:10:10.101010: I tensorflow/core/util/port.cc:113] oneDNN custom operations are on. You may see slightly different numerical results due to floating-point round-off errors from different computation orders. To turn them off, set the environment variable `TF_ENABLE_ONEDNN_OPTS=0`.
Traceback (most recent call last):
  File "bench.py", line 25, in <module>
    y = model(x)
tensorflow.python.framework.errors_impl.AbortedError: Operation received an exception:Status: 3, message: could not create a memory object., in file tensorflow/core/kernels/mkl/mkl_conv_ops.cc:1147 [Op:Conv2D]
"""
V["already_exists_metric"] = """Traceback (most recent call last):
  File "app.py", line 1, in <module>
    from tensorflow import keras
  File "/usr/local/lib/python3.9/site-packages/keras/__init__.py", line 25, in <module>
    from keras import models
  File "/usr/local/lib/python3.9/site-packages/tensorflow/python/eager/monitoring.py", line 135, in __init__
    self._metric = self._metric_methods[self._label_length].create(*args)
tensorflow.python.framework.errors_impl.AlreadyExistsError: Another metric with the same name already exists.
"""
V["strategy_slot"] = """Traceback (most recent call last):
  File "/home/s/mirror.py", line 51, in <module>
    model.fit(ds, epochs=2)
ValueError: Trying to create optimizer slot variable under the scope for tf.distribute.Strategy (<tensorflow.python.distribute.mirrored_strategy.MirroredStrategy object at 0x7f3>), which is different from the scope used for the original variable (<tf.Variable 'conv2d/kernel:0' shape=(3, 3, 3, 32) dtype=float32>). Make sure the slot variables are created under the same strategy scope. This may happen if you're restoring from a checkpoint outside the scope.
"""
V["win_cudart_dll"] = """2020-01-03 12:00:00.000000: W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic library 'cudart64_101.dll'; dlerror: cudart64_101.dll not found
2020-01-03 12:00:00.000000: I tensorflow/stream_executor/cuda/cudart_stub.cc:29] Ignore above cudart dlerror if you do not have a GPU set up on your machine.
Num GPUs: 0
"""
V["unimpl_dnn_fused"] = """Traceback (most recent call last):
  File "run.py", line 9, in <module>
    pred = model.predict(x)
tensorflow.python.framework.errors_impl.UnimplementedError: Graph execution error:

DNN library is not found.
\t [[{{node model/conv2d/Relu}}]] [Op:__inference_predict_function_712]
"""
V["internal_blas"] = """Traceback (most recent call last):
  File "lm.py", line 60, in <module>
    logits = model(tokens)
tensorflow.python.framework.errors_impl.InternalError: Exception encountered when calling layer 'dense' (type Dense).

{{function_node __wrapped__MatMul_device_/job:localhost/replica:0/task:0/device:GPU:0}} Attempting to perform BLAS operation using StreamExecutor without BLAS support [Op:MatMul]
"""
V["oor_first_step"] = """Epoch 1/20
2024-05-05 05:05:05.000000: W tensorflow/core/framework/local_rendezvous.cc:404] Local rendezvous is aborting with status: OUT_OF_RANGE: End of sequence
\t [[{{node IteratorGetNext}}]]
0/Unknown - 0s 0s/step
Traceback (most recent call last):
  File "t.py", line 44, in <module>
    model.fit(ds.filter(lambda x, y: y > 5), epochs=20)
ValueError: Expected input data to be non-empty.
"""
V["failed_precondition_table"] = """Traceback (most recent call last):
  File "/srv/predict.py", line 30, in <module>
    ids = table.lookup(tf.constant(["a", "b"]))
tensorflow.python.framework.errors_impl.FailedPreconditionError: Table not initialized.
\t [[{{node hash_table_Lookup/LookupTableFindV2}}]]
"""
V["tfdf_aarch64"] = """Traceback (most recent call last):
  File "/home/ubuntu/gbt.py", line 1, in <module>
    import tensorflow_decision_forests as tfdf
  File "/home/ubuntu/.venv/lib/python3.10/site-packages/tensorflow_decision_forests/tensorflow/ops/inference/api.py", line 179, in <module>
    from tensorflow_decision_forests.tensorflow.ops.inference import op
tensorflow.python.framework.errors_impl.NotFoundError: /home/ubuntu/.venv/lib/python3.10/site-packages/tensorflow_decision_forests/tensorflow/ops/inference/inference.so: cannot open shared object file: No such file or directory
"""

# a second probe, after the first fixes
V["win_pywrap_tfe_proc"] = """Traceback (most recent call last):
  File "C:\\\\work\\\\main.py", line 1, in <module>
    import tensorflow as tf
  File "C:\\\\Users\\\\ana\\\\AppData\\\\Roaming\\\\Python\\\\Python310\\\\site-packages\\\\tensorflow\\\\python\\\\eager\\\\context.py", line 35, in <module>
    from tensorflow.python import pywrap_tfe
ImportError: DLL load failed while importing _pywrap_tfe: The specified procedure could not be found.
"""
V["keras3_deserialize"] = """Traceback (most recent call last):
  File "/app/load.py", line 6, in <module>
    model = tf.keras.models.load_model("clf.keras")
TypeError: Could not deserialize class 'Functional' because its parent module keras.src.models.functional cannot be imported. Full object config: {'module': 'keras.src.models.functional', 'class_name': 'Functional', 'config': {}}
"""
V["keras3_time_major"] = """Traceback (most recent call last):
  File "/srv/app.py", line 12, in <module>
    model = load_model("lstm_model.h5")
  File "/srv/.venv/lib/python3.11/site-packages/keras/src/layers/rnn/lstm.py", line 486, in __init__
    super().__init__(
ValueError: Unrecognized keyword arguments passed to LSTM: {'time_major': False}
"""
V["tpu_string"] = """Traceback (most recent call last):
  File "/content/run.py", line 40, in <module>
    model.fit(ds, epochs=3)
tensorflow.python.framework.errors_impl.InvalidArgumentError: 8 root error(s) found.
  (0) INVALID_ARGUMENT: {{function_node __inference_train_function_9921}} Unsupported data type for TPU: string, caused by output IteratorGetNext:1
"""
V["xla_compile_const"] = """Traceback (most recent call last):
  File "/home/q/xla_step.py", line 21, in <module>
    y = f(tf.constant(5))
tensorflow.python.framework.errors_impl.InvalidArgumentError: Input 1 to node `range` with op Range must be a compile-time constant.

XLA compilation requires that operator arguments that represent shapes or dimensions be evaluated to concrete values at compile time. This error means that a shape or dimension argument could not be evaluated at compile time, usually because the value of the argument depends on a parameter to the computation, on a variable, or on a stateful operation such as a random number generator.

Stack trace for op definition:
File "xla_step.py", line 15, in f
 [Op:__inference_f_44]
"""
V["collective_startup"] = """Traceback (most recent call last):
  File "/opt/train/run.py", line 33, in <module>
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
RuntimeError: Collective ops must be configured at program startup
"""
V["tflite_open"] = """Traceback (most recent call last):
  File "/home/pi/infer.py", line 8, in <module>
    interpreter = tflite.Interpreter(model_path="models/detect.tflite")
  File "/usr/lib/python3/dist-packages/tflite_runtime/interpreter.py", line 464, in __init__
    self._interpreter = _interpreter_wrapper.CreateWrapperFromFile(
ValueError: Could not open 'models/detect.tflite'.
"""
V["metal_addn"] = """2024-02-01 10:00:00.000000: I metal_plugin/src/device/metal_device.cc:1154] Metal device set to: Apple M2
Traceback (most recent call last):
  File "/Users/lu/gan.py", line 90, in <module>
    train(ds)
tensorflow.python.framework.errors_impl.NotFoundError: Graph execution error:

No registered 'AddN' OpKernel for 'GPU' devices compatible with node {{node AddN}}
\t (OpKernel was found, but attributes didn't match) Requested Attributes: N=2, T=DT_INT64, _XlaHasReferenceVars=false, _device="/job:localhost/replica:0/task:0/device:GPU:0"
\t.  Registered:  device='GPU'; T in [DT_FLOAT]
  device='CPU'; T in [DT_INT64]
"""
V["dml_device"] = """2022-11-02 13:00:00.000000: I tensorflow/stream_executor/platform/default/dso_loader.cc:53] Successfully opened dynamic library DirectMLba106a7c621ea741d2159d8708ee581c11918380.dll
Traceback (most recent call last):
  File "D:\\\\ml\\\\train.py", line 5, in <module>
    tf.config.list_physical_devices()
tensorflow.python.framework.errors_impl.InternalError: Could not create DirectML device
"""
V["jit_failed"] = """2023-09-09 09:09:09.000000: W tensorflow/compiler/xla/stream_executor/gpu/asm_compiler.cc:231] Falling back to the CUDA driver for PTX compilation; ptxas does not support CC 8.9
Traceback (most recent call last):
  File "train.py", line 50, in <module>
    model.fit(x, y, epochs=5)
tensorflow.python.framework.errors_impl.UnknownError: Graph execution error:

JIT compilation failed.
\t [[{{node model/rescaling/Cast}}]] [Op:__inference_train_function_1020]
"""
V["batch_diff_shapes"] = """Epoch 1/10
Traceback (most recent call last):
  File "/data/cls.py", line 66, in <module>
    model.fit(train_ds, epochs=10)
tensorflow.python.framework.errors_impl.InvalidArgumentError: Graph execution error:

Cannot batch tensors with different shapes in component 0. First element had shape [224,224,3] and element 3 had shape [180,240,3].
\t [[{{node IteratorGetNext}}]] [Op:__inference_train_function_3301]
"""
V["dst_not_init"] = """Traceback (most recent call last):
  File "main.py", line 120, in <module>
    sess.run(train_op, feed_dict={x: bx, y: by})
tensorflow.python.framework.errors_impl.InternalError: Dst tensor is not initialized.
\t [[Node: _recv_Placeholder_0/_7 = _Recv[client_terminated=false, recv_device="/job:localhost/replica:0/task:0/gpu:0", send_device="/job:localhost/replica:0/task:0/cpu:0", tensor_type=DT_FLOAT, _device="/job:localhost/replica:0/task:0/gpu:0"]()]]
"""
V["oor_first"] = """Epoch 1/5
2021-04-04 04:04:04.000000: W tensorflow/core/framework/op_kernel.cc:1767] OP_REQUIRES failed at iterator_ops.cc:1001 : Out of range: End of sequence
Traceback (most recent call last):
  File "tr.py", line 30, in <module>
    for step, (xb, yb) in enumerate(ds):
tensorflow.python.framework.errors_impl.OutOfRangeError: End of sequence [Op:IteratorGetNext]
"""
V["tfrecord_corrupt"] = """Traceback (most recent call last):
  File "/job/train.py", line 77, in <module>
    model.fit(ds, epochs=4)
tensorflow.python.framework.errors_impl.DataLossError: Graph execution error:

corrupted record at 418230091
\t [[{{node IteratorGetNext}}]] [Op:__inference_train_function_822]
"""
V["illegal_addr_custom"] = """2022-06-06 06:06:06.000000: E tensorflow/stream_executor/cuda/cuda_event.cc:29] Error polling for event status: failed to query event: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered
2022-06-06 06:06:06.000000: F tensorflow/core/common_runtime/device/device_event_mgr.cc:221] Unexpected Event status: 1
Aborted (core dumped)
"""
V["grad_not_exist_old"] = """WARNING:tensorflow:Gradients does not exist for variables ['dense_3/kernel:0', 'dense_3/bias:0'] when minimizing the loss.
Epoch 1/3
100/100 [==============================] - 2s 12ms/step - loss: 0.69
"""
V["glibc_old"] = """Traceback (most recent call last):
  File "/home/u/x.py", line 1, in <module>
    import tensorflow
ImportError: /lib64/libc.so.6: version `GLIBC_2.27' not found (required by /home/u/.local/lib/python3.8/site-packages/tensorflow/python/_pywrap_tensorflow_internal.so)
"""
V["avx_win"] = """Traceback (most recent call last):
  File "C:\\\\Users\\\\p\\\\Anaconda3\\\\lib\\\\site-packages\\\\tensorflow\\\\python\\\\pywrap_tensorflow.py", line 64, in <module>
    from tensorflow.python._pywrap_tensorflow_internal import *
ImportError: DLL load failed: A dynamic link library (DLL) initialization routine failed.
"""
V["protobuf_dml"] = """Traceback (most recent call last):
  File "/home/w/t.py", line 1, in <module>
    import tensorflow as tf
  File "/home/w/miniconda3/envs/dml/lib/python3.7/site-packages/tensorflow_core/core/framework/resource_handle_pb2.py", line 41, in <module>
    serialized_options=None, file=DESCRIPTOR),
TypeError: Descriptors cannot not be created directly.
If this call came from a _pb2.py file, your generated code is out of date and must be regenerated with protoc >= 3.19.0.
"""

# a third probe (all read right at the second probe's code: kept as a floor)
V["xla_oom"] = """Traceback (most recent call last):
  File "big.py", line 40, in <module>
    out = step(x)
tensorflow.python.framework.errors_impl.ResourceExhaustedError: Out of memory while trying to allocate 3221225472 bytes.
BufferAssignment OOM Debugging.
 [Op:__inference_step_881]
"""
V["no_binary_for_gpu"] = """2023-03-03 03:03:03.000000: W tensorflow/compiler/xla/service/gpu/nvptx_compiler.cc:530] Can't find libdevice directory ${CUDA_DIR}/nvvm/libdevice.
Traceback (most recent call last):
  File "t.py", line 9, in <module>
    model.fit(x, y)
tensorflow.python.framework.errors_impl.InternalError: Graph execution error:

Failed to load in-memory CUBIN: CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel image is available for execution on the device
\t [[{{node StatefulPartitionedCall}}]] [Op:__inference_train_function_600]
"""
V["einsum_int_gpu"] = """Traceback (most recent call last):
  File "att.py", line 18, in <module>
    s = tf.einsum("bij,bjk->bik", a, b)
tensorflow.python.framework.errors_impl.NotFoundError: Could not find device for node: {{node Einsum}} = Einsum[N=2, T=DT_INT32, equation="bij,bjk->bik"]
All kernels registered for op Einsum:
  device='GPU'; T in [DT_FLOAT]
  device='GPU'; T in [DT_DOUBLE]
  device='CPU'; T in [DT_FLOAT]
  device='CPU'; T in [DT_DOUBLE]
 [Op:Einsum]
"""
V["no_space"] = """Epoch 12/100
Traceback (most recent call last):
  File "/home/t/train.py", line 81, in <module>
    model.fit(ds, epochs=100, callbacks=[ckpt_cb])
tensorflow.python.framework.errors_impl.UnknownError: Failed to WriteFile: /data/ckpt/weights.12.h5 : No space left on device [Op:WriteFile]
"""
V["hub_cache_stale"] = """Traceback (most recent call last):
  File "/content/embed.py", line 5, in <module>
    embed = hub.load("https://tfhub.dev/google/universal-sentence-encoder/4")
  File "/usr/local/lib/python3.10/dist-packages/tensorflow/python/saved_model/loader_impl.py", line 116, in parse_saved_model
    raise IOError(
OSError: SavedModel file does not exist at: /tmp/tfhub_modules/063d866c06683311b44b4992fd46003be952409c/{saved_model.pbtxt|saved_model.pb}
"""
V["horovod_nccl"] = """[1,0]<stderr>:Traceback (most recent call last):
[1,0]<stderr>:  File "train_hvd.py", line 60, in <module>
[1,0]<stderr>:    model.fit(ds, epochs=3, callbacks=callbacks)
[1,0]<stderr>:horovod.common.exceptions.HorovodInternalError: ncclCommInitRank failed: unhandled system error
"""
V["serving_path"] = """2024-01-01 00:00:00.000000: I tensorflow_serving/model_servers/server.cc:74] Building single TensorFlow model file config:  model_name: my model_base_path: models/my
2024-01-01 00:00:00.000000: E tensorflow_serving/model_servers/server_core.cc:? Failed to start server. Error: Invalid argument: Expected model my to have an absolute path or URI; got base_path()=models/my
"""
V["tfjs_unsupported"] = """Traceback (most recent call last):
  File "/home/j/.venv/bin/tensorflowjs_converter", line 8, in <module>
    sys.exit(pip_main())
  File "/home/j/.venv/lib/python3.10/site-packages/tensorflowjs/converters/tf_saved_model_conversion_v2.py", line 142, in validate
    raise ValueError('Unsupported Ops in the model before optimization\\n' +
ValueError: Unsupported Ops in the model before optimization
BroadcastArgs, StringSplitV2
"""
V["win_longpath"] = """Collecting tensorflow
  Using cached tensorflow-2.12.0-cp310-cp310-win_amd64.whl (1.9 kB)
ERROR: Could not install packages due to an OSError: [Errno 2] No such file or directory: 'C:\\\\Users\\\\anna\\\\AppData\\\\Local\\\\Packages\\\\PythonSoftwareFoundation.Python.3.10_qbz5n2kfra8p0\\\\LocalCache\\\\local-packages\\\\Python310\\\\site-packages\\\\tensorflow\\\\include\\\\external\\\\com_github_grpc_grpc\\\\src\\\\core\\\\ext\\\\filters\\\\client_channel\\\\lb_policy\\\\grpclb\\\\client_load_reporting_filter.h'
HINT: This error might have occurred since this system does not have Windows Long Path support enabled. You can find information on how to enable this at https://pip.pypa.io/warnings/enable-long-paths
"""
V["win_illegal_exit"] = """2022-02-02 02:02:02.000000: I tensorflow/core/platform/cpu_feature_guard.cc:142] This TensorFlow binary is optimized with oneAPI Deep Neural Network Library (oneDNN) to use the following CPU instructions in performance-critical operations:  AVX AVX2
Loading model...

Process finished with exit code -1073741795 (0xC000001D)
"""
V["ragged_batch"] = """Traceback (most recent call last):
  File "nlp.py", line 52, in <module>
    for batch in ds.batch(5):
tensorflow.python.framework.errors_impl.InvalidArgumentError: Cannot add tensor to the batch: number of elements does not match. Shapes are: [tensor]: [4], [batch]: [5] [Op:IteratorGetNext]
"""
V["mac_illegal4"] = """(tf) pat@MacBook-Pro ~ % python -c "import tensorflow"
Illegal instruction: 4
"""
V["sparse_label_range"] = """Traceback (most recent call last):
  File "cls.py", line 70, in <module>
    model.fit(x, y, epochs=5)
tensorflow.python.framework.errors_impl.InvalidArgumentError: Graph execution error:

Received a label value of 10 which is outside the valid range of [0, 10).  Label values: 3 7 10 1 0 2
\t [[{{node sparse_categorical_crossentropy/SparseSoftmaxCrossEntropyWithLogits/SparseSoftmaxCrossEntropyWithLogits}}]]
"""
V["reverb_so"] = """Traceback (most recent call last):
  File "/home/rl/acme_run.py", line 3, in <module>
    import reverb
  File "/home/rl/.venv/lib/python3.9/site-packages/reverb/__init__.py", line 27, in <module>
    from reverb import item_selectors as selectors
  File "/home/rl/.venv/lib/python3.9/site-packages/reverb/pybind.py", line 1, in <module>
    import tensorflow as _tf; from .libpybind import *; del _tf
ImportError: /home/rl/.venv/lib/python3.9/site-packages/reverb/libschema_cc_proto.so: undefined symbol: _ZNK6google8protobuf7Message11GetTypeNameB5cxx11Ev
"""
V["tfq_cirq"] = """Traceback (most recent call last):
  File "qnn.py", line 2, in <module>
    import tensorflow_quantum as tfq
  File "/usr/local/lib/python3.8/dist-packages/tensorflow_quantum/core/ops/load_module.py", line 48, in load_module
    return load_library.load_op_library(path)
tensorflow.python.framework.errors_impl.NotFoundError: /usr/local/lib/python3.8/dist-packages/tensorflow_quantum/core/ops/_tfq_simulate_ops.so: undefined symbol: _ZNK10tensorflow8OpKernel11TraceStringERKNS_15OpKernelContextEb
"""

# a fourth probe: version mismatches of Keras, NumPy and h5py as GitHub issues show them
def _tb(code: str, err: str, path: str = "/home/u/proj/run.py", lib: str = "") -> str:
    """A traceback: the user's frame, a library's frame when ``lib`` names one, the error."""
    s = f'Traceback (most recent call last):\n  File "{path}", line 12, in <module>\n    {code}\n'
    if lib:
        s += f'  File "{lib}", line 88, in fn\n    x = y\n'
    return s + err + "\n"
V["adam_get_updates"] = _tb("model.fit(x, y)", "AttributeError: 'Adam' object has no attribute 'get_updates'", lib="/usr/lib/python3/site-packages/keras/engine/training.py")
V["pad_sequences"] = _tb("from keras.preprocessing.sequence import pad_sequences", "ImportError: cannot import name 'pad_sequences' from 'keras.preprocessing.sequence' (/opt/conda/lib/python3.9/site-packages/keras/preprocessing/sequence.py)")
V["np_object"] = _tb("import tensorflow as tf", "AttributeError: module 'numpy' has no attribute 'object'.\n`np.object` was a deprecated alias for the builtin `object`. To avoid this error in existing code, use `object` by itself. Doing this will not modify any behavior and is safe.", lib="/opt/venv/lib/python3.10/site-packages/tensorflow/python/framework/dtypes.py")
V["np_typedict"] = _tb("import h5py", "AttributeError: module 'numpy' has no attribute 'typeDict'", lib="/opt/venv/lib/python3.10/site-packages/h5py/__init__.py")
V["str_decode"] = _tb("model = load_model('m.h5')", "AttributeError: 'str' object has no attribute 'decode'", lib="/usr/local/lib/python3.7/site-packages/keras/engine/saving.py")
V["layer_count"] = _tb("model.load_weights('w.h5')", "ValueError: Layer count mismatch when loading weights from file. Model expected 106 layers, found 107 saved layers.", lib="/usr/local/lib/python3.8/site-packages/tensorflow/python/keras/saving/hdf5_format.py")
V["module_wrapper"] = _tb("model.save('m.h5')", "NotImplementedError: Layer ModuleWrapper has arguments ['self', 'module', 'method_name'] in `__init__` and therefore must override `get_config()`.", lib="/usr/local/lib/python3.8/site-packages/keras/engine/base_layer.py")
V["internal_dispatch"] = _tb("import keras", "AttributeError: module 'tensorflow.compat.v2.__internal__' has no attribute 'dispatch'", lib="/usr/local/lib/python3.8/site-packages/keras/layers/core/tf_op_layer.py")
V["tf_estimator_missing"] = _tb("import tensorflow as tf", "ModuleNotFoundError: No module named 'tensorflow_estimator'", lib="/usr/local/lib/python3.8/site-packages/tensorflow/python/estimator/estimator_lib.py")
V["keras_src_engine"] = _tb("from keras.src.engine import data_adapter", "ModuleNotFoundError: No module named 'keras.src.engine'")
V["tfhub_keraslayer_sym"] = _tb("x = hub.KerasLayer(url)(inputs)", "ValueError: Exception encountered when calling layer 'keras_layer' (type KerasLayer).\n\nA KerasTensor is symbolic: it's a placeholder for a shape an a dtype. It doesn't have any actual numerical value. You cannot convert it to a NumPy array.", lib="/usr/local/lib/python3.11/site-packages/tensorflow_hub/keras_layer.py")
V["optimizer_lr_kw"] = _tb("opt = tf.keras.optimizers.Adam(lr=0.001)", "ValueError: Argument(s) not recognized: {'lr': 0.001}", lib="/usr/local/lib/python3.10/site-packages/keras/optimizers/optimizer_experimental/optimizer.py")
V["np_typedict_tf"] = """Traceback (most recent call last):
  File "/home/u/proj/run.py", line 1, in <module>
    import tensorflow as tf
  File "/opt/venv/lib/python3.10/site-packages/tensorflow/python/keras/saving/hdf5_format.py", line 38, in <module>
    import h5py
  File "/opt/venv/lib/python3.10/site-packages/h5py/__init__.py", line 46, in <module>
    from ._conv import register_converters as _register_converters
  File "h5py/h5t.pyx", line 293, in init h5py.h5t
AttributeError: module 'numpy' has no attribute 'typeDict'
"""

# a fifth probe: runtime InvalidArgumentErrors and their kin as GitHub issues show them
def _tb6(err: str, code: str = "model.fit(train_ds, epochs=10)") -> str:
    """A traceback whose only frame is the user's, ending in ``err``."""
    return ('Traceback (most recent call last):\n  File "/work/exp/train.py", line 55, in <module>\n    '
            + code + "\n" + err + "\n")
V["concat_dims"] = _tb6("tensorflow.python.framework.errors_impl.InvalidArgumentError: Graph execution error:\n\nConcatOp : Dimension 1 in both shapes must be equal: shape[0] = [8,64,37,37] vs. shape[1] = [8,64,38,38]\n\t [[{{node model/concatenate/concat}}]] [Op:__inference_train_function_5012]")
V["matmul_incompat"] = _tb6("tensorflow.python.framework.errors_impl.InvalidArgumentError: Exception encountered when calling layer 'dense_1' (type Dense).\n\n{{function_node __wrapped__MatMul_device_/job:localhost/replica:0/task:0/device:CPU:0}} Matrix size-incompatible: In[0]: [32,2048], In[1]: [512,10] [Op:MatMul]", code="out = model(x)")
V["reshape_size"] = _tb6("tensorflow.python.framework.errors_impl.InvalidArgumentError: Graph execution error:\n\nInput to reshape is a tensor with 401408 values, but the requested shape requires a multiple of 25088\n\t [[{{node sequential/flatten/Reshape}}]]")
V["decode_jpeg_png"] = _tb6("tensorflow.python.framework.errors_impl.InvalidArgumentError: Graph execution error:\n\nUnknown image file format. One of JPEG, PNG, GIF, BMP required.\n\t [[{{node decode_image/DecodeImage}}]]\n\t [[IteratorGetNext]] [Op:__inference_train_function_1210]")
V["nan_check"] = _tb6("tensorflow.python.framework.errors_impl.InvalidArgumentError: Graph execution error:\n\nloss : Tensor had NaN values\n\t [[{{node CheckNumerics}}]] [Op:__inference_train_function_901]")
V["gather_oob_gpu"] = _tb6("tensorflow.python.framework.errors_impl.InvalidArgumentError: Graph execution error:\n\nindices[5,17] = 30522 is not in [0, 30522)\n\t [[{{node model/embedding/embedding_lookup}}]] [Op:__inference_train_function_77]")
V["dtype_mismatch_add"] = _tb6("tensorflow.python.framework.errors_impl.InvalidArgumentError: cannot compute AddV2 as input #1(zero-based) was expected to be a double tensor but is a float tensor [Op:AddV2] name: ", code="y = a + b")
V["assign_shape_load"] = _tb6("ValueError: Cannot assign value to variable ' dense_2/kernel:0': Shape mismatch.The variable shape (128, 5), and the assigned value shape (128, 10) are incompatible.", code="model.load_weights('best.h5')")
V["ctc_invalid"] = _tb6("tensorflow.python.framework.errors_impl.InvalidArgumentError: Graph execution error:\n\nNot enough time for target transition sequence (required: 28, available: 24)0You can turn this error into a warning by using the flag ignore_longer_outputs_than_inputs\n\t [[{{node CTCLoss}}]]")
V["strided_oob"] = _tb6("tensorflow.python.framework.errors_impl.InvalidArgumentError: slice index 3 of dimension 1 out of bounds. [Op:StridedSlice] name: strided_slice/", code="cls = preds[:, 3]")
V["resource_var_missing"] = _tb6("tensorflow.python.framework.errors_impl.FailedPreconditionError: Could not find variable dense/kernel. This could mean that the variable has been deleted. In TF1, it can also mean the variable is uninitialized. Debug info: container=localhost, status error message=Resource localhost/dense/kernel/N10tensorflow3VarE does not exist.\n\t [[{{node dense/MatMul/ReadVariableOp}}]]", code="pred = sess.run(out, feed_dict={x: batch})")
V["tensorarray_size"] = _tb6("tensorflow.python.framework.errors_impl.InvalidArgumentError: Tried to write to index 10 but array is not resizeable and size is: 10 [Op:TensorListSetItem]", code="outputs = decode(tokens)")

# a sixth probe: installs (pip, conda, NumPy 2, ARM boards, musl)
V["numpy2_wheel"] = """A module that was compiled using NumPy 1.x cannot be run in
NumPy 2.0.0 as it may crash. To support both 1.x and 2.x
versions of NumPy, modules must be compiled with NumPy 2.0.
Some module may need to rebuild instead e.g. with 'pybind11>=2.12'.

Traceback (most recent call last):  File "/home/u/app.py", line 1, in <module>
    import tensorflow as tf
AttributeError: _ARRAY_API not found
ImportError: numpy.core._multiarray_umath failed to import
"""
V["pip_tf115_py38"] = """$ pip install tensorflow==1.15
ERROR: Could not find a version that satisfies the requirement tensorflow==1.15 (from versions: 2.2.0, 2.2.1, 2.3.0, 2.4.0, 2.5.0)
ERROR: No matching distribution found for tensorflow==1.15
"""
V["pip_py313"] = """PS C:\\Users\\sam> pip install tensorflow
ERROR: Could not find a version that satisfies the requirement tensorflow (from versions: none)
ERROR: No matching distribution found for tensorflow
PS C:\\Users\\sam> python --version
Python 3.13.0
"""
V["conda_unsat"] = """Collecting package metadata (current_repodata.json): done
Solving environment: failed with initial frozen solve. Retrying with flexible solve.
UnsatisfiableError: The following specifications were found to be incompatible with the existing python installation in your environment:

Specifications:

  - tensorflow-gpu=2.4 -> python[version='>=3.6,<3.7.0a0|>=3.7,<3.8.0a0|>=3.8,<3.9.0a0']

Your python: python=3.10
"""
V["pi_illegal"] = """pi@raspberrypi:~ $ python3 -c "import tensorflow as tf; print(tf.__version__)"
Illegal instruction
"""
V["alpine_musl"] = """/app # pip install tensorflow
ERROR: Could not find a version that satisfies the requirement tensorflow (from versions: none)
ERROR: No matching distribution found for tensorflow
/app # cat /etc/os-release
NAME="Alpine Linux"
ID=alpine
VERSION_ID=3.19.1
"""
V["tf_io_gcs_plugin"] = """Traceback (most recent call last):
  File "/srv/app.py", line 1, in <module>
    import tensorflow as tf
  File "/usr/local/lib/python3.9/site-packages/tensorflow/python/framework/load_library.py", line 54, in load_op_library
    lib_handle = py_tf.TF_LoadLibrary(library_filename)
tensorflow.python.framework.errors_impl.NotFoundError: /usr/local/lib/python3.9/site-packages/tensorflow_io_gcs_filesystem/core/python/ops/libtensorflow_io_gcs_filesystem.so: undefined symbol: _ZN10tensorflow9TensorKeyC1ERKS0_
"""
V["six_moves"] = """Traceback (most recent call last):
  File "train.py", line 3, in <module>
    import tensorflow as tf
  File "/usr/lib/python3/dist-packages/tensorflow/python/__init__.py", line 49, in <module>
    from tensorflow.python import pywrap_tensorflow
ModuleNotFoundError: No module named 'six.moves'
"""

# a seventh probe: GPU runtime failures (all read right at the sixth probe's code: a floor)
V["cudnn_cnn_infer"] = "Epoch 1/10\nCould not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: cannot open shared object file: No such file or directory\nAborted (core dumped)\n"
V["cannot_dlopen"] = "2023-10-10 10:10:10.000000: W tensorflow/core/common_runtime/gpu/gpu_device.cc:2211] Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly if you would like to use GPU. Follow the guide at https://www.tensorflow.org/install/gpu for how to download and setup the required libraries for your platform.\nSkipping registering GPU devices...\nGPUs: []\n"
V["cudnn_loaded_vs_compiled"] = "2021-05-05 05:05:05.000000: E tensorflow/stream_executor/cuda/cuda_dnn.cc:389] Loaded runtime CuDNN library: 8.0.5 but source was compiled with: 8.1.0.  CuDNN library needs to have matching major version and equal or higher minor version. If using a binary install, upgrade your CuDNN library.  If building from sources, make sure the library loaded at runtime is compatible with the version specified during compile configuration.\n"
V["driver_insufficient"] = "Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n    x = tf.zeros([2])\ntensorflow.python.framework.errors_impl.InternalError: cudaGetDevice() failed. Status: CUDA driver version is insufficient for CUDA runtime version\n"
V["eager_oom"] = "Traceback (most recent call last):\n  File \"big.py\", line 8, in <module>\n    y = x @ w\ntensorflow.python.framework.errors_impl.ResourceExhaustedError: failed to allocate memory [Op:MatMul]\n"
V["ptxas_sm89"] = "2023-07-07 07:07:07.000000: W tensorflow/compiler/xla/stream_executor/gpu/asm_compiler.cc:115] *** WARNING *** You are using ptxas 11.0.221, which is older than 11.1. ptxas before 11.1 is known to miscompile XLA code, leading to incorrect results or invalid-address errors.\nptxas fatal   : Value 'sm_89' is not defined for option 'gpu-name'\n"
V["no_cuda_drivers"] = "2024-04-04 04:04:04.000000: I external/local_tsl/tsl/cuda/cudart_stub.cc:32] Could not find cuda drivers on your machine, GPU will not be used.\n2024-04-04 04:04:04.000000: I tensorflow/core/platform/cpu_feature_guard.cc:210] This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations.\nEpoch 1/2\n100/100 [==============================] - 1s 5ms/step - loss: 0.3\n"
V["gpu_sync_failed"] = "Epoch 4/50\n2022-09-09 09:09:09.000000: E tensorflow/stream_executor/cuda/cuda_driver.cc:1010] failed to synchronize the stop event: CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure\n2022-09-09 09:09:09.000000: E tensorflow/stream_executor/gpu/gpu_timer.cc:55] INTERNAL: Error destroying CUDA event: CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure\n2022-09-09 09:09:09.000000: F tensorflow/stream_executor/cuda/cuda_dnn.cc:216] Check failed: status == CUDNN_STATUS_SUCCESS (7 vs. 0)Failed to set cuDNN stream.\nAborted (core dumped)\n"
V["xid_79"] = "Epoch 12/100\n2023-02-02 02:02:02.000000: E tensorflow/compiler/xla/stream_executor/cuda/cuda_event.cc:29] Error polling for event status: failed to query event: CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure\n$ dmesg | tail -2\n[12345.678] NVRM: Xid (PCI:0000:01:00): 79, pid=4242, GPU has fallen off the bus.\n"
V["mixed_cuda12_pip"] = "2024-01-01 00:00:00.000000: W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory\n$ nvcc --version\nCuda compilation tools, release 12.2, V12.2.140\n$ pip show tensorflow | grep Version\nVersion: 2.11.0\n"

# an eighth probe: conversion, serving, mixed precision, tf.data
V["quant_repr"] = "Traceback (most recent call last):\n  File \"quant.py\", line 20, in <module>\n    tflite = converter.convert()\nValueError: For full integer quantization, a `representative_dataset` must be specified.\n"
V["saved_model_tag"] = "Traceback (most recent call last):\n  File \"serve.py\", line 4, in <module>\n    m = tf.saved_model.load('export/1', tags=['train'])\nRuntimeError: MetaGraphDef associated with tags 'train' could not be found in SavedModel, with available tags '[{'serve'}]'. To inspect available tag-sets in the SavedModel, please use the SavedModel CLI: `saved_model_cli`.\n"
V["serving_rest_sig"] = "$ curl -d '{\"instances\": [[1.0, 2.0]]}' -X POST http://localhost:8501/v1/models/clf:predict\n{\n    \"error\": \"Serving signature name: \\\"serving_default\\\" not found in signature def\"\n}\n"
V["serving_rest_shape"] = "$ curl -d @req.json http://localhost:8501/v1/models/img:predict\n{\n    \"error\": \"input must be 4-dimensional[1,224,3]\\n\\t [[{{function_node __inference__wrapped_model_9911}}{{node model/conv2d/Conv2D}}]]\"\n}\n"
V["mixed_prec_dtype"] = "Traceback (most recent call last):\n  File \"amp.py\", line 33, in <module>\n    model.fit(ds)\nTypeError: Input 'y' of 'AddV2' Op has type float32 that does not match type float16 of argument 'x'.\n"
V["loss_scale_opt"] = "Traceback (most recent call last):\n  File \"amp.py\", line 40, in <module>\n    opt = mixed_precision.LossScaleOptimizer(tfa.optimizers.AdamW(1e-4, 1e-3))\nValueError: \"optimizer\" must be an instance of tf.keras.optimizers.Optimizer or tf.keras.optimizers.experimental.Optimizer, but got: <tensorflow_addons.optimizers.weight_decay_optimizers.AdamW object at 0x7f00>.\n"
V["tfrecord_feature_type"] = "Traceback (most recent call last):\n  File \"read.py\", line 25, in <module>\n    for ex in ds.take(1):\ntensorflow.python.framework.errors_impl.InvalidArgumentError: {{function_node __wrapped__IteratorGetNext_output_types_2_device_/job:localhost/replica:0/task:0/device:CPU:0}} Feature: image/encoded (data type: string) is required but could not be found. [Op:IteratorGetNext]\n"
V["from_generator_sig"] = "Traceback (most recent call last):\n  File \"gen.py\", line 30, in <module>\n    model.fit(ds, epochs=2)\ntensorflow.python.framework.errors_impl.InvalidArgumentError: Graph execution error:\n\nTypeError: `generator` yielded an element of shape (128, 128, 1) where an element of shape (128, 128, 3) was expected.\nTraceback (most recent call last):\n\n  File \"/usr/local/lib/python3.10/dist-packages/tensorflow/python/ops/script_ops.py\", line 268, in __call__\n    ret = func(*args)\n\n\t [[{{node PyFunc}}]]\n\t [[IteratorGetNext]] [Op:__inference_train_function_1234]\n"
V["py_function_graph"] = "Traceback (most recent call last):\n  File \"aug.py\", line 15, in <module>\n    ds = ds.map(lambda x: cv2.resize(x.numpy(), (64, 64)))\nAttributeError: 'Tensor' object has no attribute 'numpy'\n"

# a ninth probe: tf.function, saving and loading
def _tb10(err: str, code: str = "model.fit(x, y)") -> str:
    """A traceback whose only frame is the user's, ending in ``err``."""
    return 'Traceback (most recent call last):\n  File "/work/m.py", line 9, in <module>\n    ' + code + "\n" + err + "\n"
V["opnotallowed_bool"] = _tb10("tensorflow.python.framework.errors_impl.OperatorNotAllowedInGraphError: Using a symbolic `tf.Tensor` as a Python `bool` is not allowed: AutoGraph did convert this function. This might indicate you are trying to use an unsupported feature.")
V["var_in_tf_function"] = _tb10("ValueError: tf.function only supports singleton tf.Variables created on the first call. Make sure the tf.Variable is only created once or created outside tf.function.", code="step(x)")
V["iter_tensor"] = _tb10("TypeError: Tensor objects are only iterable when eager execution is enabled. To iterate over this tensor use tf.map_fn.", code="for row in t:")
V["h5_group_missing"] = _tb10("OSError: Unable to open file (file signature not found)", code="model = tf.keras.models.load_model('model.h5')")
V["keras_save_format"] = _tb10("ValueError: Invalid filepath extension for saving. Please add either a `.keras` extension for the native Keras format (recommended) or a `.h5` extension. Use `model.export(filepath)` if you want to export a SavedModel for use with TFLite/TFServing/etc. Received: filepath=saved_models/my_model.", code="model.save('saved_models/my_model')")
V["ckpt_prefix"] = _tb10("tensorflow.python.framework.errors_impl.NotFoundError: Unsuccessful TensorSliceReader constructor: Failed to find any matching files for ckpt/model.ckpt-1000", code="saver.restore(sess, 'ckpt/model.ckpt-1000')")
V["unknown_layer_custom"] = _tb10("ValueError: Unknown layer: 'Attention'. Please ensure you are using a `keras.utils.custom_object_scope` and that this object is included in the scope. See https://www.tensorflow.org/guide/keras/save_and_serialize#registering_the_custom_object for details.", code="model = load_model('att.h5')")
V["lambda_unsafe"] = _tb10("ValueError: Requested the deserialization of a `Lambda` layer with a Python `lambda` inside it. This carries a potential risk of arbitrary code execution and thus it is disallowed by default. If you trust the source of the saved model, you can pass `safe_mode=False` to the loading function in order to allow `Lambda` layer loading.", code="model = keras.models.load_model('m.keras')")

# benign logs of the same families (VALID twins as a whole: each must read "nothing wrong")
B: dict[str, str] = {}
B["onednn_train"] = """2024-03-01 10:00:00.000000: I tensorflow/core/util/port.cc:113] oneDNN custom operations are on. You may see slightly different numerical results due to floating-point round-off errors from different computation orders. To turn them off, set the environment variable `TF_ENABLE_ONEDNN_OPTS=0`.
2024-03-01 10:00:01.000000: I tensorflow/core/platform/cpu_feature_guard.cc:210] This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations.
To enable the following instructions: AVX2 AVX512F FMA, in other operations, rebuild TensorFlow with the appropriate compiler flags.
Epoch 1/3
1875/1875 [==============================] - 6s 3ms/step - loss: 0.2954 - accuracy: 0.9148
Epoch 2/3
1875/1875 [==============================] - 5s 3ms/step - loss: 0.1421 - accuracy: 0.9580
"""
B["tflite_xnnpack"] = """INFO: Created TensorFlow Lite XNNPACK delegate for CPU.
Predicted class: 281 (tabby cat), score 0.87
Inference time: 12.4 ms
"""
B["metal_init"] = """2023-11-11 11:11:11.000000: I metal_plugin/src/device/metal_device.cc:1154] Metal device set to: Apple M1 Pro
2023-11-11 11:11:11.000000: I metal_plugin/src/device/metal_device.cc:296] systemMemory: 16.00 GB
2023-11-11 11:11:11.000000: I metal_plugin/src/device/metal_device.cc:313] maxCacheSize: 5.33 GB
2023-11-11 11:11:11.000000: I tensorflow/core/common_runtime/pluggable_device/pluggable_device_factory.cc:306] Could not identify NUMA node of platform GPU ID 0, defaulting to 0. Your kernel may not have been built with NUMA support.
2023-11-11 11:11:11.000000: I tensorflow/core/common_runtime/pluggable_device/pluggable_device_factory.cc:272] Created TensorFlow device (/job:localhost/replica:0/task:0/device:GPU:0 with 0 MB memory) -> physical PluggableDevice (device: 0, name: METAL, pci bus id: <undefined>)
Epoch 1/2
2023-11-11 11:11:13.000000: I tensorflow/core/grappler/optimizers/custom_graph_optimizer_registry.cc:117] Plugin optimizer for device_type GPU is enabled.
469/469 [==============================] - 9s 17ms/step - loss: 0.3502 - accuracy: 0.8991
"""
B["trt_warning"] = """2023-06-06 06:06:06.000000: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT
Epoch 1/2
782/782 [==============================] - 14s 15ms/step - loss: 1.51 - accuracy: 0.45
"""
B["untraced_save"] = """WARNING:absl:Found untraced functions such as _jit_compiled_convolution_op, _jit_compiled_convolution_op, _update_step_xla while saving (showing 3 of 3). These functions will not be directly callable after loading.
INFO:tensorflow:Assets written to: export/model/assets
"""
B["keras3_input_shape"] = """/usr/local/lib/python3.11/site-packages/keras/src/layers/core/dense.py:87: UserWarning: Do not pass an `input_shape`/`input_dim` argument to a layer. When using Sequential models, prefer using an `Input(shape)` object as the first layer in the model instead.
  super().__init__(activity_regularizer=activity_regularizer, **kwargs)
Epoch 1/5
32/32 ━━━━━━━━━━━━━━━━━━━━ 1s 4ms/step - loss: 0.6931 - accuracy: 0.5020
"""
B["mirrored_info"] = """INFO:tensorflow:Using MirroredStrategy with devices ('/job:localhost/replica:0/task:0/device:GPU:0', '/job:localhost/replica:0/task:0/device:GPU:1')
INFO:tensorflow:Collective ops is not configured at program startup. Some performance features may not be enabled.
Epoch 1/2
INFO:tensorflow:batch_all_reduce: 8 all-reduces with algorithm = nccl, num_packs = 1
390/390 [==============================] - 20s 38ms/step - loss: 1.4 - accuracy: 0.49
"""
B["tfa_eol_only"] = """/usr/local/lib/python3.10/dist-packages/tensorflow_addons/utils/tfa_eol_msg.py:23: UserWarning:

TensorFlow Addons (TFA) has ended development and introduction of new features.
TFA has entered a minimal maintenance and release mode until a planned end of life in May 2024.
Please modify downstream libraries to take dependencies from other repositories in our TensorFlow community (e.g. Keras, Keras-CV, and Keras-NLP).

For more information see: https://github.com/tensorflow/addons/issues/2807

  warnings.warn(
Epoch 1/3
100/100 [==============================] - 3s 20ms/step - loss: 0.51
"""
B["xla_service_info"] = """2023-05-05 05:05:05.000000: I tensorflow/compiler/xla/service/service.cc:169] XLA service 0x55d0c8e0a0b0 initialized for platform CUDA (this does not guarantee that XLA will be used). Devices:
2023-05-05 05:05:05.000000: I tensorflow/compiler/xla/service/service.cc:177]   StreamExecutor device (0): NVIDIA A100-SXM4-40GB, Compute Capability 8.0
2023-05-05 05:05:05.000000: I tensorflow/compiler/jit/xla_compilation_cache.cc:477] Compiled cluster using XLA!  This line is logged at most once for the lifetime of the process.
Epoch 1/10
938/938 [==============================] - 7s 5ms/step - loss: 0.21
"""
B["handled_fit_retry"] = """2024-04-04 04:04:04.000000: I tensorflow/core/platform/cpu_feature_guard.cc:182] This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations.
trial 3: batch 512 too big for the configured budget, retrying with 256
Epoch 1/2
200/200 [==============================] - 2s 9ms/step - loss: 0.44
"""
