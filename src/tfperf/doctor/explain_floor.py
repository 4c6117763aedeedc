"""The floor under every error: a log that holds a TensorFlow error is never "not recognised".

When no knowledge row explains a failure, the error itself still says a lot: its class (the
``tf.errors`` status, a Keras ``ValueError``, an ``ImportError`` while importing TensorFlow, a
``Check failed``, a crash, a CUDA status), the op and device it names, the shapes and dtypes in
its message, and the user's own frame in the traceback above it. This module finds that error
and reads it; the likely causes for its class come ranked from ``data/error_class_causes.csv``
(rows whose ``when`` matches the message first). The result is a cause marked
``confidence="low"``: a generic reading, weaker than a row that knows the message.

What counts as an error line: a Python exception (``SomethingError: ...``, ``...Exception: ...``,
TensorFlow's private ``_SymbolicException``, also as VS Code's JSON error cell, ``"name":
"ValueError"`` with its ``"message"``, or its debugger's ``Exception has occurred: OSError`` with
the message on the next line), R's ``Error in py_call_impl(...) :`` (reticulate; the Python class on
the same or the next line), JavaScript's ``Error: ...`` (also ``Uncaught (in promise) TypeError:``),
TensorFlow Lite's error reporter (``ERROR: Didn't find op for builtin opcode ...``), an E- or
F-level TensorFlow log line (``E tensorflow/...cc:123] ...``, absl's ``E0713 10:26:18 ...]``), a
``Check failed``, a crash, a CUDA status, a program the loader could not start, and a message in
one of TensorFlow's known wordings printed without its class (``data/tf_message_shapes.csv``:
``Tried to convert 'shape' to a tensor and failed``).

It is read as TensorFlow's (``tf_reason``) only when the error itself ties it to TensorFlow:

1. its form is TensorFlow's: a ``tf.errors`` class or status, TensorFlow's private exception
   classes, a CHECK, a CUDA status, a known TensorFlow wording, an E/F line from TensorFlow's own
   source files, TFLite's error reporter, a TensorFlow program the loader could not start;
2. its message block (the error line and the lines that continue it, up to a blank line, a log
   line or a line a row explained) names TensorFlow things (tensorflow, keras, ``tf.``, a tensor,
   a layer, a shape, a dtype, CUDA...);
3. its traceback runs through TensorFlow: a frame of the traceback that ends in it (Python's
   above it, back to where that traceback starts; R's ``Detailed traceback`` and JavaScript's
   ``at ...`` frames below it) is in TensorFlow-family code (tensorflow, keras, tf_keras, tflearn,
   tfjs, tflite...) or its code line calls TensorFlow;
4. a crash (no message of its own) counts when the process printed TensorFlow's lines before it
   (within 200 lines).

Anything else is the application's own error or another library's, however often the log names
TensorFlow elsewhere (an audio file the program cannot open, after TFLite's start-up line): it is
not blamed on TensorFlow, and the explainer lists it apart as "not TensorFlow's". Lines a
knowledge row already matched (informational ones included) are never read again here.

Beyond the class, the reading names the third-party library whose frames raised it
(``library``: tflearn's own module, not the user's code and not TensorFlow's) and the command a
shell prompt shows was run (``command``: a tool such as ``scaden``, not ``python``), which the
ranked causes use ("the library and the installed TensorFlow do not match").
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from tfperf.doctor.explain_clause import clause_causes

# a status word in TF 1.x's spelling, as a glog line carries it ("W op_kernel.cc:1192] Not found:
# Unsuccessful TensorSliceReader ..."): an error at any level unless a row says it is benign
# (without the '] ' before it: a needle starting with ']', on every glog line, cost 2 ms more)
_MIXED_STATUS_NEEDLES = tuple(f"{w}: " for w in (
    "Not found", "Invalid argument", "Resource exhausted", "Failed precondition", "Internal",
    "Data loss", "Unimplemented", "Permission denied", "Unavailable", "Aborted", "Unknown",
    "Deadline exceeded", "Already exists"))
# what any error line holds (case-sensitive, as TensorFlow and Python print them): literals
# found with str.find (a regex alternation tried at every position of a long log cost 30-60 ms),
# and the two that must fill a line
_TRIGGER_WORDS = ("Error", "Exception", "Check failed", "core dumped", "Segmentation fault",
                  "Fatal Python error", "CUDA_ERROR_", "cudaError", "CUBLAS_STATUS_",
                  "CUDNN_STATUS_", "OP_REQUIRES failed", "exit code",
                  "error while loading shared libraries", "ERROR: ", "FATAL: ", "CRITICAL: ",
                  "' failed.", "terminate called after throwing", "zsh: segmentation fault",
                  "zsh: bus error", "zsh: abort",
                  "Could not locate ", "Could not load library ", "Received signal",
                  "malloc: ***", "double free or corruption", "free(): invalid pointer",
                  # native crashes outside TensorFlow's log format: a debugger's stop reason
                  # (LLDB/gdb), Apple's framework assertions, the shell's signal report, malloc
                  "EXC_BAD_ACCESS", "EXC_BAD_INSTRUCTION", "failed assertion",
                  "terminated by signal", "Incorrect checksum for freed object",
                  "received signal SIG",
                  # TF Serving's REST answer: {"error": "input must be 4-dimensional[1,224,3]..."}
                  # (Python's print(response.json()) writes it {'error': '...'})
                  '"error": "', "'error': '",
                  # a W-level line of TF 1.x that carries a status in its mixed-case spelling
                  *_MIXED_STATUS_NEEDLES, *(
                      f"{status.upper().replace(' ', '_')}: " for status in (
                          "invalid argument", "not found", "internal", "unknown",
                          "failed precondition", "resource exhausted", "unimplemented",
                          "data loss", "permission denied", "unavailable", "aborted",
                          "deadline exceeded")))
# _CRASH wants the first two to fill the line; zsh reports a SIGKILL as 'zsh: killed  python ...'
_TRIGGER_LINE_WORDS = ("Aborted", "Killed", "zsh: killed")
# a TensorFlow runtime error's op context ('[[node X (defined at ...)]]', TF 1.x's '[[Node: X =
# Op[...]]]', '[[{{node X}}]]'): the line before it is the error's message, which logs and pastes
# often show without its class ('Assign requires shapes of both tensors to match ...')
_OP_CONTEXT_WORDS = ("[[node ", "[[Node: ", "[[{{node ")
_OP_CONTEXT = re.compile(r"^\s*\[\[(?:node |Node: |\{\{node )")
# the status class a classless message's wording names (the first that matches; else UnknownError)
_WORDING_CLASS = (
    (re.compile(r"not implemented|[Uu]nimplemented|not supported"), "UnimplementedError"),
    (re.compile(r"\bOOM\b|[Oo]ut of memory|[Rr]esource exhausted"), "ResourceExhaustedError"),
    (re.compile(r"[Nn]ot found|No such file|does not exist|Unsuccessful TensorSliceReader"),
     "NotFoundError"),
    (re.compile(r"[Pp]ermission denied"), "PermissionDeniedError"),
    (re.compile(r"uninitiali[sz]ed|not initiali[sz]ed|[Pp]recondition"), "FailedPreconditionError"),
    (re.compile(r"[Ss]hape|[Ii]nvalid|\bmust\b|[Ee]xpected|[Ii]ncompatible|match|[Cc]annot|"
                r"dtype|\bindex\b"), "InvalidArgumentError"))
# an E- or F-level log line's level and origin, tried where a line starts with E or F and after
# a timestamp's ': ' (a regex tried at every position of a long log cost 20-30 ms)
_LEVEL_AT = re.compile(r"[EF](?:\d{4} [\d:.]+ +\d+)? ?[\w./\\-]+\.(?:cc|h|cpp|c):\d+\]")
# an E- or F-level line of TensorFlow's C++ logging (glog, or absl's E0713 10:26:18.1  31433 ...)
_LOGGED = re.compile(r"^(?:[^\n]{0,60}?\d\d:\d\d:\d\d[.,]\d+:? )?(?P<level>[EF])"
                     r"(?:\d{4} [\d:.]+ +\d+)? ?(?P<file>[\w./\\-]+\.(?:cc|h|cpp|c)):\d+\] ?"
                     r"(?P<msg>.*)$")
# a W-level line of TensorFlow's that carries a status (an op's failure as the kernel logs it:
# "W tensorflow/core/framework/op_kernel.cc:1733] INVALID_ARGUMENT: ValueError: callback ...")
_STATUS_LOGGED = re.compile(r"^(?:[^\n]{0,60}?\d\d:\d\d:\d\d[.,]\d+:? )?W(?:\d{4} [\d:.]+ +\d+)? ?"
                            r"(?P<file>[\w./\\-]+\.(?:cc|h|cpp)):\d+\] ?"
                            r"(?P<status>[A-Z][A-Z_]{4,}|[A-Z][a-z]+(?: [a-z]+)?): (?P<msg>.*)$")
_TF_SOURCE = re.compile(r"tensorflow|tf_serving|xla|tsl[/\\]|stream_executor")
# VS Code's notebook error cell (JSON): "name": "ValueError", then "message": "..."
_JSON_NAME = re.compile(r'^\s*"e?name": "(?P<cls>[A-Z]\w*(?:Error|Exception))",?\s*$')
# TF Serving's REST error answer, one JSON line; TensorFlow's own when it names a node or an op
# (pretty-printed, its own line; the raw body, one line: { "error": "..." }; or Python's dict)
_SERVING_JSON = re.compile(r"""^\s*(?:\{\s*)?(?P<q>["'])error(?P=q): (?P=q)(?P<msg>\S.*?)(?P=q)"""
                           r"\s*,?\s*\}?\s*$")
_SERVING_REQUEST = re.compile(r"/v1/models/[\w.-]+(?:/versions/\d+)?(?:/labels/\w+)?:"
                              r"(?:predict|classify|regress)")
_RUNTIME_MARK = re.compile(r"\{\{(?:function_)?node |\[Op:|\[\[node ")
_JSON_MESSAGE = re.compile(r'^\s*"(?:message|evalue)": "(?P<msg>.*?)",?\s*$')
# (each run of a word starts where the run does: tried at every position inside a long token,
# the searches were quadratic in its length)
_LOADER = re.compile(r"(?<![\w./\\-])(?P<prog>[\w./\\-]+): error while loading shared "
                     r"libraries: (?P<msg>.*)")
# TensorFlow-family code or a call into it, in a traceback's frames and code lines
TF_CODE = re.compile(r"(?i:tensorflow|keras|tflearn|tfjs|deeplearn\.js|tflite|edgetpu|pycoral)|"
                      r"\btf\.|tf[-_]nightly|\btf-(?:layers|core|converter|backend)|@tensorflow|"
                      # add-ons whose module names do not say tensorflow
                      r"\btf_(?:agents|slim)\b")
_PY_EXC = re.compile(r"^\s*(?:>\s*|E {2,})*(?:[\w.]+\.)?(?P<cls>_?[A-Z]\w*(?:Error|Exception))"
                     r"(?: \(see above for traceback\))?:(?P<msg>.*)$")
# a tf.errors class a TF 1.x training loop caught and logged ("Caught OutOfRangeError. Stopping
# Training. FIFOQueue '_3_prefetch_queue' is closed and has insufficient elements ..."): an error
# when the input never came (current size 0); otherwise the routine end of num_epochs
_CAUGHT = re.compile(r"\bCaught (?:[\w.]+\.)?(?P<cls>[A-Z]\w*Error)\b[.:]?\s*(?P<msg>.*)$")
# TensorFlow's own private exception classes (tensorflow/python/eager/core.py)
_TF_PRIVATE = frozenset({"_SymbolicException", "_NotOkStatusException", "_FallbackException"})
# exception classes only TensorFlow and its family raise: TensorFlow's even without a traceback
_TF_FAMILY = frozenset({"ConverterError", "OperatorNotAllowedInGraphError",
                        "InaccessibleTensorError", "NonMatchingChecksumError"})
# R's reticulate: "Error in py_call_impl(callable, dots$args, dots$keywords) : ValueError: ..."
_R_CALL = re.compile(r"^\s*Error in py_\w+\(.*?\)\s*:\s*(?P<rest>.*?)\s*$")
_CLASS_MSG = re.compile(r"^\s*(?P<cls>_?[A-Z]\w*(?:Error|Exception)): ?(?P<msg>.*)$")
# VS Code's debugger: "Exception has occurred: OSError", the message on the next line
_VSCODE = re.compile(r"^\s*Exception has occurred: (?:[\w.]+\.)?(?P<cls>\w+)\s*$")
# JavaScript: "Error: msg", "Uncaught (in promise) TypeError: msg"
# (a browser console may put the script's location first: "tensor.ts:398 Uncaught (in promise)")
_JS_ERROR = re.compile(r"^\s*(?:\S+\.(?:js|ts|mjs)(?:\?\w+)?:\d+\s+)?"
                       r"(?:Uncaught (?:\(in promise\) )?(?:\w{1,3} )?(?P<cls>(?:[A-Z]\w*)?Error)|"
                       r"(?P<bare>Error)): (?P<msg>\S.*)$")
# the script a browser console names before an uncaught error ("tf-core.esm.js:17 Uncaught
# Error: ..."); TensorFlow.js's own bundle (or deeplearn.js, its predecessor) ties it to TensorFlow
_JS_SOURCE = re.compile(r"^\s*(?P<src>\S+\.(?:js|ts|mjs))(?:\?\w+)?:\d+\s+Uncaught\b")
# TensorFlow Lite's error reporter ("ERROR: " at the start of a line) about its own things
_TFLITE_ERROR = re.compile(r"^\s*ERROR: (?P<msg>.*?\b(?:op|opcode|builtin|[Tt]ensors?|[Dd]elegate|"
                           r"[Ii]nterpreter|[Ss]ubgraph|[Nn]ode|TfLite|TFLite|flatbuffer|"
                           r"[Rr]egistration|kernel)\b.*)$")
# any tool's "ERROR: ..." line (pip, conda, a build, a launcher) read after TFLite's own
_TOOL_ERROR = re.compile(r"^\s*(?:\[[^\]]{1,40}\]\s*)?(?:ERROR|FATAL|CRITICAL): (?P<msg>\S.*)$")
# a library a loader could not find, in the words of cuDNN 8's own loader, dlopen wrappers and
# Windows programs ("Could not locate zlibwapi.dll", "Could not load library
# cudnn_cnn_infer64_8.dll. Error code 126")
_LIB_MISSING = re.compile(r"Could not (?:locate|load library|load|find|open) '?(?P<lib>[\w.+-]+\."
                          r"(?:dll|so(?:\.\d+)*|dylib))'?")
# libraries of TensorFlow's GPU stack and TensorFlow itself: a loader message naming one is
# TensorFlow's (zlibwapi is cuDNN 8's own dependency on Windows)
_GPU_LIBRARY = re.compile(r"(?i)cudnn|cublas|cudart|cufft|curand|cusolver|cusparse|nvinfer|nvrtc|"
                          r"nvcuda|libcuda|nccl|zlibwapi|tensorflow|_pywrap|nvJitLink")
_JUPYTER_HEAD = re.compile(r"^\s*(?P<cls>[A-Z]\w*(?:Error|Exception))\s{3,}"
                           r"Traceback \(most recent call last\)")
_CHECK = re.compile(r"Check failed: (?P<msg>.*)")
# C's assert() (glibc: "prog: file:line: function: Assertion `expr' failed."): a CHECK of the
# library named in the line (Eigen's GPU device, a CUDA wrapper), read with the file and function
_ASSERT = re.compile(r"^\S*?:? ?(?P<msg>\S+:\d+: [^\n]*?Assertion [`'][^\n]+' failed)")
_OP_REQUIRES = re.compile(r"OP_REQUIRES failed at (?P<file>[\w./\\-]+(?::\d+)?) : "
                          r"(?P<status>[A-Za-z][A-Za-z _]*?): (?P<msg>.*)")
_CRASH = re.compile(r"^\s*(?P<msg>Segmentation fault|Aborted|Bus error|Killed)(?: \(core dumped\))?"
                    # macOS's shells add the signal's number ("Segmentation fault: 11")
                    r"(?::\s*\d{1,2})?\s*$|Fatal Python error: (?P<msg2>.*)|(?P<msg3>core dumped|"
                    r"\*\*\* Received signal \d+ \*\*\*|malloc: \*\*\* error for object|"
                    r"double free or corruption|free\(\): invalid pointer|"
                    r"corrupted size vs\. prev_size|stop reason = EXC_BAD_\w+[^\n]*|"
                    r"EXC_BAD_(?:ACCESS|INSTRUCTION)[^\n]*|"
                    # (a file name read from where its run starts: linear in a long token)
                    r"(?<![^\s:])[^\s:]+:\d+: failed assertion [^\n]*|"
                    r"terminated by signal SIG\w+[^\n]*|received signal SIG\w+[^\n]*|"
                    r"Incorrect checksum for freed object[^\n]*)|"
                    r"(?P<msg4>(?:exit code|exited with code|exit status) "
                    r"(?:-\d+ \(0x[0-9A-Fa-f]+\)|\d{9,} \(0x[0-9A-Fa-f]+\)|"
                    r"(?:13[47]|139|-9|-11)\b))|"
                    # the shell's report of a SIGKILL naming the job: zsh's 'zsh: killed  python
                    # x.py', bash's './run.sh: line 40: 10644 Killed  python x.py'
                    # (and zsh's other signals: 'zsh: segmentation fault  python x.py')
                    r"(?P<msg5>\bzsh: (?:killed|segmentation fault|bus error|abort)\s.*|"
                    r"\bline \d+:\s+\d+ Killed\s.*)")
# the shell's report that SIGKILL ended the job: bash's bare 'Killed' (or its job line) and zsh's
_SHELL_KILLED = re.compile(r"^\s*Killed\s*$|\bline \d+:\s+\d+ Killed\s|\bzsh: killed\s")
# (a Windows NTSTATUS, signed or not: -1073741819 / 3221225477 (0xC0000005); 0 (0x0) is no crash)
# glog/absl INFO or WARNING lines: a CUDA status named there is a report, not the failure
_INFO_LINE = re.compile(r"^(?:[\d\-: .]+)?[IW](?:\d{4} [\d:.]+ +\d+)? [\w/.\\-]+\.(?:cc|h):\d+\]")
# glog/absl I- or W-level lines of any source file (C++ or Python): information and warnings
_QUIET_LEVEL = re.compile(r"^(?:[^\n]{0,60}?\d\d:\d\d:\d\d[.,]\d+:? )?[IW](?:\d{4} [\d:.]+ +\d+)? ?"
                          r"[\w./\\:-]+\.(?:cc|h|cpp|c|py):\d+\]")
_CUDA = re.compile(r"(?P<code>CUDA_ERROR_[A-Z_]+|cudaError\w+|CUBLAS_STATUS_[A-Z_]+|"
                   r"CUDNN_STATUS_[A-Z_]+)")
# literals a line needs before these regexes are tried (a search over a long line is not free)
_CRASH_WORDS = ("Segmentation fault", "Aborted", "Bus error", "Killed", "killed",
                "zsh: segmentation fault", "zsh: bus error", "zsh: abort",
                "Fatal Python error",
                "core dumped", "exit", "Received signal", "malloc: ***", "double free",
                "free(): invalid", "corrupted size", "EXC_BAD_", "failed assertion",
                "terminated by signal", "received signal SIG", "Incorrect checksum")
_CUDA_WORDS = ("CUDA_ERROR_", "cudaError", "CUBLAS_STATUS_", "CUDNN_STATUS_")

# the tf.errors classes (errors_impl.py) and the absl/C++ status spellings that map to them
_STATUS_CLASS = {
    "cancelled": "CancelledError", "unknown": "UnknownError",
    "invalid argument": "InvalidArgumentError", "deadline exceeded": "DeadlineExceededError",
    "not found": "NotFoundError", "already exists": "AlreadyExistsError",
    "permission denied": "PermissionDeniedError", "unauthenticated": "UnauthenticatedError",
    "resource exhausted": "ResourceExhaustedError",
    "failed precondition": "FailedPreconditionError", "aborted": "AbortedError",
    "out of range": "OutOfRangeError", "unimplemented": "UnimplementedError",
    "internal": "InternalError", "unavailable": "UnavailableError", "data loss": "DataLossError",
}
TF_ERRORS = frozenset(_STATUS_CLASS.values())
# tflite/tfjs as a package's name (tflite-runtime, tfjs-node), not a file's extension (model.tflite:
# a program's own open() of it is not TensorFlow's error)
TF_CONTEXT = re.compile(r"(?i:tensorflow|keras)|(?<![.\w])(?i:tflite|tfjs)|tf_keras|\btf\.|"
                         r"[Tt]ensor|\b[Ll]ayer|\b[GT]PUs?\b|"
                         r"\bOps?\b|data adapter|\b(?:Physical|Virtual|[Ll]ogical) devices?\b|"
                         r"tfhub|\bgradients?\b|[Mm]ixed precision|"
                         r"\bshape|dtype|cuda|CUDA|cudnn|libtensorflow|_pywrap|\bTF_[A-Z]\w+|"
                         r"\b(?:lib)?(?:cublas|cufft|curand|cusolver|cusparse|nvinfer|nccl)|"
                         r"\bnvcuda\b|^\s*\w*Error: in user code:|\bops?\b|\bcheckpoint|"
                         r"SavedModel|saved_model|\beager\b|\bgraph\b|"
                         # add-ons whose module names do not say tensorflow; a model's
                         # TensorFlow weights file and class names (Hugging Face's TF* models)
                         r"\btf_(?:agents|slim)\b|\btf_model\.h5\b|\bTF[A-Z]\w*Model\w*|\bfrom_pt\b|"
                         # a Keras layer's call signature in a traced or restored function's
                         # argument error ("f(inputs, training, ...) missing 1 required argument")
                         r"\(inputs, training\b")
_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_NB_FRAME = re.compile(r"^\s*(?P<path><ipython-input-[\w-]+>|(?:[A-Za-z]:)?[~\w./\\ -]+\.py)"
                       r"(?::(?P<line>\d+))? in (?P<func>[\w<>.]+)")
_NOT_USER = re.compile(r"site-packages|dist-packages|[/\\]lib[/\\]python\d|[/\\]Lib[/\\]|"
                       r"<frozen|<string>|[/\\]lib[/\\]python[/\\]|importlib|runpy|ipykernel|"
                       r"IPython|tornado|asyncio|traitlets|[/\\]tensorflow[/\\]|[/\\]keras[/\\]|"
                       r"[/\\.]egg[/\\]",
                       re.I)
# a frame inside an installed package (site-packages, dist-packages, an egg): the package
_PACKAGE_FRAME = re.compile(r"(?:site-packages|dist-packages|\.egg|[/\\]egg)[/\\]"
                            r"(?P<pkg>[A-Za-z_]\w*)[/\\.]")
_NOT_A_LIBRARY = frozenset({
    "tensorflow", "tensorflow_core", "keras", "tf_keras", "tensorflow_estimator", "numpy",
    "h5py", "google", "absl", "IPython", "ipykernel", "six", "wrapt", "tornado", "traitlets",
    "asyncio", "importlib", "runpy", "threading", "concurrent", "multiprocessing", "jupyter_core",
    "zmq", "pydevd", "_pydevd_bundle", "debugpy", "ipywidgets", "tqdm", "pkg_resources",
    "setuptools"})
# a shell prompt and the command after it: "(env) [user@host ~]$ scaden example", "$ python x.py"
# (a '#' only after user@host:path, so a code comment is no prompt)
_PROMPT = re.compile(r"(?:^|[\s\]>)~])\$ +(?P<cmd>[A-Za-z][\w.-]*)(?: |$)|"
                     r"^\S+@\S+# +(?P<cmd2>[A-Za-z][\w.-]*)(?: |$)|"
                     r"^(?:PS )?[A-Za-z]:\\[^>\n]*> *(?P<cmd3>[A-Za-z][\w.-]*)(?: |$)")
_NOT_A_TOOL = frozenset({"python", "python2", "python3", "py", "ipython", "jupyter", "bash", "sh",
                         "zsh", "sudo", "cd", "pip", "pip3", "conda", "source", "export", "ls",
                         "cat", "echo", "docker", "nvidia-smi", "srun", "sbatch", "time", "env",
                         "CUDA_VISIBLE_DEVICES"})
_NODE = re.compile(r"\{\{node (?P<a>[^}]+)\}\}|\[\[node (?P<b>[^\s\]]+)|\[\[Node: (?P<c>[^\s=]+)"
                   r" = (?P<optype>\w+)\[|Detected at node '(?P<d>[^']+)'|Node: '(?P<e>[^']+)'|"
                   r"\[Op:(?P<op>\w+)\]|op (?P<f>[A-Z]\w+)\b")
_DEVICE = re.compile(r"/job:\w+/replica:\d+/task:\d+/device:(?P<a>[A-Z_]+:\d+)|"
                     r"\bon (?:device:)?(?P<b>[GCT]PU:\d+)")
_SHAPE = re.compile(r"\[(?:-?\d+|\?|None)(?:,\s*(?:-?\d+|\?|None))+\]|"
                    r"\((?:None|\d+)(?:,\s*(?:None|\d+))+,?\)|shape=\([^)]*\)|shape\[[\d,]*\]")
_DTYPE = re.compile(r"\b(?:DT_[A-Z0-9]+|float16|float32|float64|bfloat16|half|double|int8|int16|"
                    r"int32|int64|uint8|bool|string|complex64|complex128)\b")
_PROGRESS = re.compile(r"^\s*(?P<step>\d+)/(?:\d+|Unknown) \[|^\s*Epoch (?P<epoch>\d+)/\d+|"
                       r"\bstep[ =:]+(?P<step2>\d+)", re.I)
_CONTEXT_STOP = re.compile(r"^\s*(?:During handling of the above exception|"
                           r"The above exception was the direct cause|Traceback \(most recent)")
_MAX_CONTEXT = 40  # lines of message read after the error line
_MAX_BACK = 200  # lines searched above it for the traceback
_TOP_CAUSES = 3


@dataclass
class ErrorSite:
    """One error the log holds, read as far as its text allows."""

    line: int  # 0-based index of the error line
    cls: str  # InvalidArgumentError, ValueError, CheckFailed, ProcessCrash, CudaError...
    message: str
    context: str  # the message with the lines that belong to it (nodes, 'defined at' frames)
    context_lines: list[int] = field(default_factory=list)
    op: str = ""
    device: str = ""
    shapes: list[str] = field(default_factory=list)
    dtypes: list[str] = field(default_factory=list)
    user_frame: str = ""
    first_step: bool | None = None  # True: nothing ran before it; None: the log does not say
    library: str = ""  # the third-party package whose frame raised it (tflearn), if any
    library_code: str = ""  # that frame's code line ("with tf.name_scope(name, values=(x,)):")
    command: str = ""  # the tool a shell prompt shows was run (scaden), not python
    severity: str = "failure"  # a logged E-level line alone: "warning" (the run may go on)
    ignored: bool = False  # raised in a __del__ Python ignored ("Exception ignored in: ...")
    in_tf_init: bool = False  # raised by the code of TensorFlow's own package __init__.py
    frames: str = ""  # the traceback's frames above the error (what ran: iterator_get_next)
    inferred: str = ""  # how the class was read when the log prints none (explain_floor_loose)


@dataclass(frozen=True)
class Reading:
    """The generic reading of an error: its meaning and likely causes, most likely first."""

    site: ErrorSite
    meaning: str
    likely: tuple[tuple[str, str], ...]  # (cause, fix)
    source: str


def _line_starts(text: str) -> list[int]:
    starts, pos = [0], 0
    while (pos := text.find("\n", pos) + 1) > 0:
        starts.append(pos)
    return starts


@functools.lru_cache(maxsize=2)
def distinct_lines(text: str) -> str:
    """The log's distinct lines (split at newlines only), each once, in order: a literal or a
    one-line regex absent from them is absent from the log, and a log of repeated lines is
    much shorter this way. (Its line numbers are not the log's.)"""
    return "\n".join(dict.fromkeys(text.split("\n")))


def _candidate_lines(text: str, lines: list[str], skip: set[int]) -> list[int]:
    """0-based indices of the lines holding an error word or a known TensorFlow wording, in
    order, not already explained."""
    starts = _line_starts(text)
    distinct = distinct_lines(text)
    # a word absent from the distinct lines is not searched for in the whole log
    absent = distinct if len(distinct) < len(text) // 2 else ""
    found: set[int] = {li for li, at in enumerate(starts)
                       if text[at:at + 1] in ("E", "F") and _LEVEL_AT.match(text, at)}
    for prefix in (": E ", ": F "):
        at = text.find(prefix)
        while at >= 0:
            if _LEVEL_AT.match(text, at + 2):
                found.add(bisect.bisect_right(starts, at) - 1)
            at = text.find(prefix, at + 1)
    for needle in (*_TRIGGER_WORDS, *_TRIGGER_LINE_WORDS, *_shape_needles()):
        if absent and needle not in absent:
            continue
        at = text.find(needle)
        while at >= 0:  # one hit per line is enough: go on from the next line
            li = bisect.bisect_right(starts, at) - 1
            found.add(li)
            at = text.find(needle, starts[li + 1]) if li + 1 < len(starts) else -1
    found.update(_before_op_context(text, starts, lines))
    return sorted(found - skip)


def _before_op_context(text: str, starts: list[int], lines: list[str]) -> set[int]:
    """The message lines just above an op context whose block holds no error word (a message
    printed without its class): ``_classify`` reads them."""
    out: set[int] = set()
    for needle in _OP_CONTEXT_WORDS:
        at = text.find(needle)
        while at >= 0:
            li = bisect.bisect_right(starts, at) - 1
            prev = next((i for i in range(li - 1, max(-1, li - 3), -1)
                         if i < len(lines) and lines[i].strip()), None)
            if prev is not None and not _OP_CONTEXT.match(lines[prev]):
                block = [lines[i] for i in range(max(0, prev - 5), prev + 1)]
                if not any(w in b for b in block for w in _TRIGGER_WORDS):
                    out.add(prev)
            at = text.find(needle, starts[li + 1]) if li + 1 < len(starts) else -1
    return out


def wording_class(msg: str) -> str:
    """The status class a classless message's wording names (UnknownError when none)."""
    return next((cls for rx, cls in _WORDING_CLASS if rx.search(msg)), "UnknownError")



@functools.cache
def _shapes() -> tuple[tuple[str, str, re.Pattern[str]], ...]:
    """(class, needle, regex) of TensorFlow's messages as they are printed without a class."""
    from tfperf.doctor.knowledge.tables import read_table

    return tuple((r["class"], r["needle"], re.compile(r["pattern"]))
                 for r in read_table("tf_message_shapes.csv"))


@functools.cache
def _shape_needles() -> tuple[str, ...]:
    return tuple(dict.fromkeys(needle for _, needle, _ in _shapes()))


def _known_wording(cls: str, msg: str) -> bool:
    """A Python exception whose message is one of TensorFlow's known wordings (a TensorFlow
    function's name in a TypeError) is TensorFlow's even without a traceback."""
    return any(c == cls and needle in msg and rx.search(msg) for c, needle, rx in _shapes())


def _next_text(lines: list[str], li: int) -> tuple[int, str]:
    """(index, text) of the first non-blank line after ``li`` within 2 lines, or (-1, '')."""
    for nxt in range(li + 1, min(len(lines), li + 3)):
        if lines[nxt].strip():
            return nxt, lines[nxt].strip()
    return -1, ""


def _classify(lines: list[str], li: int) -> tuple[str, str, bool] | None:
    """(class, message, surely TensorFlow's) of the error line ``li``, or None."""
    line = lines[li]
    if m := _PY_EXC.match(line):  # TensorFlow's when its class is private or its wording known
        msg = m["msg"].strip()
        return m["cls"], msg, (m["cls"] in _TF_PRIVATE or m["cls"] in _TF_FAMILY
                               or _known_wording(m["cls"], msg))
    if "Caught " in line and (m := _CAUGHT.search(line)) and m["cls"] in TF_ERRORS and (
            m["cls"] != "OutOfRangeError" or "current size 0)" in line):
        return m["cls"], m["msg"].strip(), True
    if "Error in py_" in line and (m := _R_CALL.match(line)):
        rest = m["rest"]
        if not rest:  # the message on the next line: a Python class there is read on its own
            _, rest = _next_text(lines, li)
            if not rest or _PY_EXC.match(rest):
                return None
        if c := _CLASS_MSG.match(rest):
            return c["cls"], c["msg"].strip(), c["cls"] in _TF_PRIVATE
        return "RError", rest, False
    if "Exception has occurred" in line and (m := _VSCODE.match(line)):
        return m["cls"], _next_text(lines, li)[1], m["cls"] in _TF_PRIVATE
    if "ERROR: " in line and (m := _TFLITE_ERROR.match(line)):
        return "TfLiteError", m["msg"].strip(), True
    if "Error: " in line and (m := _JS_ERROR.match(line)):
        return m["cls"] or m["bare"], m["msg"].strip(), False
    if any(w in line for w in ("ERROR: ", "FATAL: ", "CRITICAL: ")) and (
            m := _TOOL_ERROR.match(line)):
        return "ToolError", m["msg"].strip(), False
    if "Could not " in line and (m := _LIB_MISSING.search(line)):
        return "LibraryLoadError", m.group(0).strip(), bool(_GPU_LIBRARY.search(m["lib"]))
    if m := _OP_REQUIRES.search(line):
        cls = _STATUS_CLASS.get(m["status"].strip().lower().replace("_", " "))
        return (cls or "UnknownError"), m["msg"].strip(), True
    if m := _CHECK.search(line):
        return "CheckFailed", m["msg"].strip(), True
    if "terminate called after throwing" in line:  # an uncaught C++ exception: its type and what()
        what = _next_text(lines, li)[1]
        return "ProcessCrash", " ".join(filter(None, [line.strip(), what.strip()])), False
    if "Assertion " in line and (m := _ASSERT.search(line)):
        return "CheckFailed", m["msg"].strip(), bool(_TF_SOURCE.search(line)) or "Eigen" in line
    if any(w in line for w in _CRASH_WORDS) and (m := _CRASH.search(line)):
        msg = m["msg"] or m["msg2"] or m["msg3"] or m["msg4"] or m["msg5"] or ""
        return "ProcessCrash", msg.strip(), False
    if ('"error": "' in line or "'error': '" in line) and (m := _SERVING_JSON.match(line)):
        msg = (m["msg"].replace('\\"', '"').replace("\\'", "'").replace("\\n", " ")
               .replace("\\t", " "))
        # TensorFlow's status when it names a node or an op, or when a TF Serving request
        # (its REST path) is just above; another service's JSON error is not read
        if _RUNTIME_MARK.search(msg) or any(_SERVING_REQUEST.search(ln)
                                            for ln in lines[max(0, li - 8):li]):
            return wording_class(msg), msg, True
    if m := _JSON_NAME.match(line):
        msg = next((j["msg"] for nxt in lines[li + 1:li + 3] if (j := _JSON_MESSAGE.match(nxt))),
                   "")
        return m["cls"], msg.replace('\\"', '"'), False
    if m := _JUPYTER_HEAD.match(line):
        return m["cls"], "", False
    if (any(w in line for w in _CUDA_WORDS) and (m := _CUDA.search(line))
            and not _INFO_LINE.match(line)):
        return "CudaError", m["code"], True
    if "error while loading shared libraries" in line and (m := _LOADER.search(line)):
        return "LibraryLoadError", m["msg"].strip(), bool(_TF_SOURCE.search(m["prog"]))
    if not _QUIET_LEVEL.match(line):  # an I/W-level line's words do not make it an error
        for cls, needle, rx in _shapes():
            if needle in line and rx.search(line):
                return cls, line.strip(), True
    if m := _LOGGED.match(line):
        return "LoggedError", m["msg"].strip(), bool(_TF_SOURCE.search(m["file"]))
    if not _OP_CONTEXT.match(line) and (nxt := _next_text(lines, li))[0] >= 0 and (
            _OP_CONTEXT.match(nxt[1])) and not _QUIET_LEVEL.match(line):
        msg = line.strip()  # a runtime error's message above its op context, without its class
        return wording_class(msg), msg, True
    if (m := _STATUS_LOGGED.match(line)) and _TF_SOURCE.search(m["file"]):
        cls = _STATUS_CLASS.get(m["status"].lower().replace("_", " "))
        if cls and cls not in ("OutOfRangeError", "CancelledError"):  # routine ends of input
            return cls, m["msg"].strip(), True
    return None


def _context(lines: list[str], at: int) -> list[int]:
    out = [at]
    # TF 2.9+ prints "Graph execution error:" and, below it, the op's own message: for a
    # tf.py_function or a generator that is the Python exception it raised ("TypeError:
    # `generator` yielded an element of shape ..."), part of this error, not a new one
    nested = lines[at].rstrip().endswith("Graph execution error:")
    for li in range(at + 1, min(len(lines), at + 1 + _MAX_CONTEXT)):
        if _CONTEXT_STOP.match(lines[li]) or (_PY_EXC.match(lines[li]) and not nested):
            break
        nested = nested and not lines[li].strip()  # only the first line of the message
        out.append(li)
    return out


# a line that is part of a traceback: a frame, its code (indented or numbered), a notebook's
# arrows and rules, a blank line between notebook frames
_TRACEBACK_LINE = re.compile(r'^\s*(?:File "|at |-+>|\d+ |\.\.\.|\[\.\.\. skipping|$)|^\s+\S|'
                             r"^-{3,}|^\S+\.py:?\d* in |^<ipython-input|^\S+\.py:\d+: in \S")
# a frame line (Python's, a notebook's, pytest's): the line after it is its code, whatever its
# indent
_FRAME_LINE = re.compile(r'^\s*File "|^\S+\.py:?\d* in |^<ipython-input|^\S+\.py:\d+: in \S')
_BLOCK_END = re.compile(r"^\s*$|^(?:[^\n]{0,40}?\d\d:\d\d:\d\d[.,]\d+:? )?[IWEF](?:\d{4} )?[ \d:.]*"
                        r"[\w./\\-]+\.(?:cc|h|cpp|c|py):\d+\]|^\s*(?:INFO|WARNING|ERROR)\b|"
                        r"^\s*Traceback \(most recent|^\s*Detailed traceback")
_MAX_BLOCK = 12  # lines a message may continue over


def _message_block(lines: list[str], at: int, explained: AbstractSet[int]) -> list[int]:
    """The error line and the lines that continue its message: up to a blank line, a log line, a
    traceback's start or a line a row explained."""
    out = [at]
    for li in range(at + 1, min(len(lines), at + 1 + _MAX_BLOCK)):
        if _list_after_blank(lines, li, out):  # "...:" then a blank line and "  - item" (conda)
            continue
        if li in explained or _BLOCK_END.match(lines[li]) or _PY_EXC.match(lines[li]):
            break
        out.append(li)
    return out


def _list_after_blank(lines: list[str], li: int, block: list[int]) -> bool:
    """A blank line between a message that ends with ':' and the list it introduces (conda's
    "not available from current channels:", a blank line, "  - tensorflow==1.14"), or the
    list's own heading (conda's UnsatisfiableError: "...environment:", a blank line,
    "Specifications:", a blank line, "  - tensorflow-gpu=2.4 -> python[...]"), or between two
    items of such a list (Hugging Face's "Make sure that:", a blank line, "- 'x' is a correct
    model identifier", a blank line, "- or 'x' is the correct path ... tf_model.h5")."""
    if lines[li].strip() or li + 1 >= len(lines):
        return False
    before, after = lines[block[-1]].strip(), lines[li + 1]
    item = after.lstrip().startswith("- ")
    return ((before.endswith(":") and (item or bool(_LIST_HEADING.match(after))))
            or (item and before.startswith("- ") and len(block) > 1))


_LIST_HEADING = re.compile(r"\s*[A-Z][\w ]{0,40}:\s*$")  # "Specifications:", "Package x conflicts:"


def _traceback_lines(lines: list[str], at: int, after: int) -> list[str]:
    """The frames of the traceback that ends in the error at ``at``: Python's above it, back to
    the traceback's start (only traceback-shaped lines), and R's ``Detailed traceback`` or
    JavaScript's ``at ...`` frames below its message (from ``after`` on)."""
    out: list[str] = []
    for li in range(at - 1, max(-1, at - _MAX_BACK), -1):
        text = lines[li]
        if _CONTEXT_STOP.match(text) or _JUPYTER_HEAD.match(text):
            break
        if not (_TRACEBACK_LINE.match(text) or (li > 0 and _FRAME_LINE.match(lines[li - 1]))):
            break
        out.append(text)
    for li in range(after, min(len(lines), after + _MAX_CONTEXT)):
        text = lines[li]
        # R prints a blank line, then "Detailed traceback:" (or "Run `reticulate::py_last_error()`")
        if text.strip().startswith(("Detailed traceback", "Run `reticulate")) or (
                not text.strip() and not out and li + 1 < len(lines)
                and lines[li + 1].strip().startswith("Detailed traceback")):
            continue
        if not (text.lstrip().startswith(("at ", 'File "')) or (text[:1].isspace() and out)):
            break
        out.append(text)
    return out


# the dynamic loader's own words: a shared library, a symbol or a symbol version it could not find
_NATIVE_LOAD = re.compile(r"version [`']?(?:GLIBC|GLIBCXX|CXXABI)_[\d.]+'? not found|"
                          r"undefined symbol: |cannot open shared object file|DLL load failed|"
                          r"\.(?:so|dylib|dll)\b[^\n]*(?:[Ss]ymbol not found|image not found)")


def tf_reason(lines: list[str], at: int, cls: str, surely_tf: bool,
              explained: AbstractSet[int] = frozenset()) -> str:
    """Why the error at line ``at`` is TensorFlow's: '' when nothing in it ties it to TensorFlow
    (the application's own error, or another library's)."""
    if surely_tf or cls in TF_ERRORS or cls in ("CheckFailed", "CudaError", "TfLiteError"):
        return "its form is TensorFlow's"
    if cls in ("ImportError", "OSError") and _NATIVE_LOAD.search(lines[at]):
        # what importing TensorFlow or an add-on prints when its native library cannot load
        # (round 11's ghostplant1: a bare 'GLIBC_2.23 not found' was set aside)
        return "a native library failed to load at import, as TensorFlow's and its add-ons' do"
    if cls == "ProcessCrash":
        if "Received signal" in lines[at] and "BEGIN MANGLED STACK TRACE" in "\n".join(
                lines[at:at + 3]):
            return "TensorFlow's own crash handler printed it"
        # Python's faulthandler prints the threads' frames after "Fatal Python error"
        after = "\n".join(ln for ln in lines[at + 1:at + _MAX_CONTEXT] if 'File "' in ln)
        if after and TF_CODE.search(after):
            return "the crashed thread's frames run through TensorFlow"
        window = "\n".join(lines[max(0, at - _MAX_BACK):at + _MAX_CONTEXT])
        if component := crashed_component(window):
            return f"the crash's lines name {component}, a part of TensorFlow's stack"
        above = "\n".join(lines[max(0, at - _MAX_BACK):at + 1])
        if TF_CODE.search(above) or re.search("cuda", above, re.I):
            return "the process printed TensorFlow's lines before it crashed"
        if _SHELL_KILLED.search(lines[at]):
            # the shell's report of SIGKILL: no program's own error but the system's (the OOM
            # killer, a memory limit), whatever ran, so it is read, never "not recognised"
            # (round 31: a TensorFlow tool whose own log lines name no TensorFlow)
            return "the shell reports the process was killed (SIGKILL), the system's doing"
        return ""
    if (m := _JS_SOURCE.match(lines[at])) and TF_CODE.search(m["src"]):
        return "the browser console names TensorFlow.js's own script as the error's source"
    block = _message_block(lines, at, explained)
    if TF_CONTEXT.search("\n".join(lines[li] for li in block)):
        return "its message names TensorFlow things"
    frames = _traceback_lines(lines, at, block[-1] + 1)
    if TF_CODE.search("\n".join(frames)):
        return "its traceback runs through TensorFlow code or a TensorFlow call"
    if _keras_call_filtered(lines, at, frames):
        return "it was raised by a Keras model method whose own frames Keras hid"
    return ""


# a Keras model method called in the user's code line; Keras (tf.keras since 2.9, Keras 3)
# filters its own frames out of the traceback, so the user's frame is all that is left
_KERAS_CALL = re.compile(r"\.(?:fit|fit_generator|evaluate|evaluate_generator|predict|"
                         r"predict_generator|train_on_batch|test_on_batch|predict_on_batch)\(")


# what a Keras method prints as it runs: "Epoch 1/20", a progress bar ("0/Unknown 1s 0s/step",
# "3/100 [>....] - ETA: 10s", "1/1 ━━━━ 0s 40ms/step")
_KERAS_RAN = re.compile(r"^\s*Epoch \d+/\d+\s*$|"
                        r"^\s*\d+/(?:\d+|Unknown)\b[^\n]*(?:/step|ETA|━|\[[=>.])", re.M)


def _keras_call_filtered(lines: list[str], at: int, frames: list[str]) -> bool:
    """The traceback holds only the user's frames (no library's: scikit-learn's ``fit`` shows
    its own), its last code line calls a Keras model method, and above it TensorFlow's lines and
    Keras's own epoch or progress lines show that method ran (review 43: TensorFlow's import
    banner is in every log of a script that imports it, and any object can have a .fit/.predict:
    a trimmed xgboost ``fit`` or the user's own ``lookup.predict`` read as Keras's)."""
    # a frame line in Python's form or IPython 8's (File ~/.../site-packages/x.py:12, in f)
    if not frames or any(f.lstrip().startswith("File ") and _NOT_USER.search(f) for f in frames):
        return False
    code = next((f for f in frames if not f.lstrip().startswith("File ")), "")
    if not _KERAS_CALL.search(code):
        return False
    above = "\n".join(lines[max(0, at - _MAX_BACK):at])
    return bool(TF_CODE.search(above)) and bool(_KERAS_RAN.search(above))


# the native libraries of TensorFlow's stack a crash's frames or assertion can name, most specific
# first (the crashed component: error_class_causes.csv ranks its fix first)
_COMPONENTS = (
    ("the tensorflow-metal plugin (Apple's Metal Performance Shaders)",
     re.compile(r"libmetal_plugin|metal_plugin::|Metal device set to|MetalPerformanceShaders|"
                r"\bMPS(?:Matrix|NDArray|"
                r"Graph|Kernel|Core)|tensorflow[-_]macos|tensorflow[-_]metal")),
    ("DirectML (tensorflow-directml)", re.compile(r"(?i)directml")),
    ("cuDNN", re.compile(r"libcudnn|cudnn\w*64_\d+\.dll")),
    ("cuBLAS", re.compile(r"libcublas|cublas\w*64_\d+\.dll")),
    ("NCCL", re.compile(r"libnccl|ncclComm|ncclAllReduce")),
    ("the CUDA driver or runtime", re.compile(r"libcuda\.so|libcudart|nvcuda\.dll|cudart64")),
    ("a custom op library", re.compile(r"[\w.-]+_ops?\.(?:so|dylib|dll)\b")),
    ("TensorFlow's native core", re.compile(r"libtensorflow_framework|_pywrap_tensorflow_internal|"
                                            r"libtensorflow_cc|libtensorflow\.so|"
                                            r"tensorflow::")),
)


def crashed_component(text: str) -> str:
    """The component of TensorFlow's native stack a crash's lines name ('' if none)."""
    return next((name for name, rx in _COMPONENTS if rx.search(text)), "")


def _library(lines: list[str], at: int) -> tuple[str, str]:
    """The third-party package of the innermost traceback frame above the error, if that frame
    is in an installed package other than TensorFlow's own, Keras's or Python's machinery, and
    that frame's code line."""
    for li in range(at - 1, max(-1, at - _MAX_BACK), -1):
        text = lines[li]
        m = _FRAME.search(text) or _NB_FRAME.match(text)
        if not m:
            if _CONTEXT_STOP.match(text):
                return "", ""
            continue
        pkg = _PACKAGE_FRAME.search(m["path"].replace("\\\\", "\\"))
        if pkg is None or pkg["pkg"] in _NOT_A_LIBRARY:
            return "", ""
        code = lines[li + 1].strip() if li + 1 < at else ""
        return pkg["pkg"], code
    return "", ""


# TensorFlow's own package initialisers (tensorflow_core: the 2.0/2.1 layout)
_TF_INIT = re.compile(r"[/\\]tensorflow(?:_core)?(?:[/\\]python)?[/\\]__init__\.py$")


def _in_tf_init(lines: list[str], at: int) -> bool:
    """The innermost traceback frame above the error is a TensorFlow package's __init__.py: the
    installed TensorFlow's own import code raised it (round 20: a nightly whose
    tensorflow_core/__init__.py used sys without importing it)."""
    for li in range(at - 1, max(-1, at - _MAX_BACK), -1):
        m = _FRAME.search(lines[li])
        if m:
            return bool(_TF_INIT.search(m["path"]))
        if _CONTEXT_STOP.match(lines[li]):
            return False
    return False


def raising_library(lines: list[str], at: int) -> str:
    """The third-party package (not TensorFlow's, Keras's or Python's machinery) whose frame
    raised the error at line ``at``, or ''."""
    return _library(lines, at)[0]


def _command(lines: list[str], at: int) -> str:
    """The tool the last shell prompt above the error ran ('scaden'), when it is not python."""
    for li in range(at - 1, max(-1, at - _MAX_BACK), -1):
        if m := _PROMPT.search(lines[li]):
            cmd = m["cmd"] or m["cmd2"] or m["cmd3"]
            return "" if cmd in _NOT_A_TOOL or cmd.startswith("python") else cmd
    return ""


def _user_frame(lines: list[str], at: int, context_lines: list[int]) -> str:
    """The innermost frame of the user's own code: 'defined at' frames in the message first,
    then the traceback above the error."""
    def scan(indices) -> str:
        best = ""
        for li in indices:
            text = lines[li]
            m = _FRAME.search(text) or _NB_FRAME.match(text)
            if not m or _NOT_USER.search(m["path"]):
                continue
            where = m["path"] + (f":{m['line']}" if m["line"] else "") + f" in {m['func']}"
            code = lines[li + 1].strip() if li + 1 < len(lines) else ""
            if code and not _FRAME.search(code) and not code.startswith(("File ", "----")):
                where += f": {code[:100]}"
            best = where
        return best

    return (scan(context_lines[1:]) or scan(range(max(0, at - _MAX_BACK), at)))


def _first_step(lines: list[str], at: int) -> bool | None:
    """True when the log shows training starting and no step finishing before the error."""
    epoch_seen = False
    for li in range(max(0, at - _MAX_BACK), at):
        m = _PROGRESS.search(lines[li])
        if not m:
            continue
        if m["epoch"]:
            epoch_seen = int(m["epoch"]) <= 1
            continue
        return False  # a step finished
    return True if epoch_seen else None


def _site(lines: list[str], at: int, cls: str, message: str) -> ErrorSite:
    ctx = _context(lines, at)
    context = "\n".join(lines[li] for li in ctx)
    site = ErrorSite(line=at, cls=cls, message=message, context=context, context_lines=ctx)
    for m in _NODE.finditer(context):
        node = next((v for k, v in m.groupdict().items() if v and k != "optype"), "")
        if node and not site.op:
            site.op = node + (f" ({m['optype']})" if m["optype"] else "")
    if dm := _DEVICE.search(context):
        site.device = dm["a"] or dm["b"]
    site.shapes = list(dict.fromkeys(_SHAPE.findall(context)))[:4]
    site.dtypes = list(dict.fromkeys(_DTYPE.findall(context)))[:4]
    site.user_frame = _user_frame(lines, at, ctx)
    site.first_step = _first_step(lines, at)
    site.library, site.library_code = _library(lines, at)
    site.command = _command(lines, at)
    site.in_tf_init = _in_tf_init(lines, at)
    site.frames = "\n".join(_traceback_lines(lines, at, len(lines)))
    if cls == "LoggedError":
        site.severity = "warning"
    if _ignored_by_python(lines, at):
        site.severity = "notice"
        site.ignored = True
    return site


site_at = _site  # explain_floor_loose builds its sites the same way


def _ignored_by_python(lines: list[str], at: int) -> bool:
    """The error was raised in a __del__ or a callback Python ignored ("Exception ignored in:
    <function IteratorResourceDeleter.__del__ ...>", usually at exit): reported, not raised."""
    for li in range(at - 1, max(-1, at - _MAX_CONTEXT), -1):
        text = lines[li]
        if text.lstrip().startswith("Exception ignored in"):
            return True
        if _PY_EXC.match(text) or not text.strip():
            return False
    return False


_RANK = {"CheckFailed": 2.0, "CudaError": 2.0, "LibraryLoadError": 2.0, "LoggedError": 2.5,
         "ToolError": 1.5,
         "TfLiteError": 2.0,
         "ProcessCrash": 3.0}


@dataclass(frozen=True)
class ForeignError:
    """An error line the floor did not blame on TensorFlow: nothing in it ties it to TensorFlow."""

    line: int  # 0-based
    cls: str
    message: str


def scan_errors(text: str, lines: list[str],
                explained: set[int]) -> tuple[ErrorSite | None, list[ForeignError]]:
    """The error of the log no row explained (a tf.errors class first, then the first other
    TensorFlow error, then a C++ CHECK, a CUDA status or a library the loader did not find, then
    an E-level log line, then a crash), and the error lines that are not TensorFlow's."""
    found: list[tuple[float, int, str, str]] = []  # (rank, line, class, message)
    foreign: list[ForeignError] = []
    for li in _candidate_lines(text, lines, explained):
        got = _classify(lines, li)
        if got is None:
            continue
        cls, msg, surely_tf = got
        if not tf_reason(lines, li, cls, surely_tf, explained):
            foreign.append(ForeignError(li, cls, msg))
            continue
        rank = 0.0 if cls in TF_ERRORS else _RANK.get(cls, 1.0)
        if not msg:  # a notebook header: its message comes later, keep it last of its rank
            rank += 0.5
        found.append((rank, li, cls, msg))
    if not found:
        return None, foreign
    _, li, cls, msg = min(found, key=lambda f: (f[0], f[1]))
    return _site(lines, li, cls, msg), foreign


# what shows a program runs TensorFlow or one of its runtimes when no line of TensorFlow's is
# in the log: a model file of its formats on the command line or in a message, TF_CODE's names
_TF_PROGRAM = re.compile(r"\.(?:tflite|pb|h5|keras)\b|saved_model|" + TF_CODE.pattern)


# the packages that run TensorFlow's work or ship with it: its native runtimes and add-ons
# (tflite_runtime, pycoral, TF-DF, TF Serving's client, TF.js's converter) and OpenCV, which
# shares the process's native libraries with TensorFlow's
_COMPANION_PACKAGE = re.compile(r"tensorflow\w*|tflite\w*|tfjs\w*|tensorflowjs\w*|pycoral|"
                                r"edgetpu|ydf|cv2|tensorrt")
# a message that names such a component's library or device, or the C++ runtime's own
# exceptions (not a model file's name: 'model.tflite' in the program's own open() is its own)
_COMPANION_WORDS = re.compile(r"(?i)edgetpu|/dev/apex_\d|delegate|\bcv2\b|opencv|"
                              r"libtensorflow|tf_serving|_ops?\.(?:so|dll|dylib)\b|std::")
# native failures that are no Python program's own error (a loader's is one only when it names
# a component: an ordinary library's missing .so is the environment's, not TensorFlow's stack's)
_NATIVE_CLASSES = frozenset({"ProcessCrash", "CheckFailed", "LoggedError", "TfLiteError"})


CPP_RUNTIME = "the C++ runtime"


def foreign_component(lines: list[str], f: ForeignError) -> str:
    """The component of a TensorFlow program that raised the error ``f`` when it is one that
    runs TensorFlow's work or ships with it (a runtime, an add-on, OpenCV, the C++ runtime),
    or '' for the program's own error or an ordinary library's (pandas, NumPy, os)."""
    lib = raising_library(lines, f.line)
    if lib and _COMPANION_PACKAGE.fullmatch(lib):
        return lib
    named = _COMPANION_WORDS.search(f.message)
    if named and named.group(0) == "std::":
        return CPP_RUNTIME
    if lib:  # an ordinary library's own frame raised it
        return ""
    if named:
        return f"the component the message names ('{named.group(0)}')"
    if f.cls in _NATIVE_CLASSES:
        return "a native library of the program"
    return ""


def site_in_tf_program(text: str, lines: list[str],
                       foreign: list[ForeignError]) -> tuple[ErrorSite, str, str] | None:
    """The first error of a component that runs TensorFlow's work or ships with it (OpenCV,
    the Edge TPU runtime, the C++ runtime: ``foreign_component``), not TensorFlow's itself, in
    a log that shows a TensorFlow program (a model file, a runtime's name): the site, what shows
    the program, the component. The program's own error or an ordinary library's (a pandas
    FileNotFoundError in a Keras script) gives None: it stays "not TensorFlow's"."""
    if not foreign or not (m := _TF_PROGRAM.search(text)):
        return None
    named = [(f, c) for f in foreign if (c := foreign_component(lines, f))]
    if not named:
        return None
    f, component = min(named, key=lambda fc: (_RANK.get(fc[0].cls, 1.0), fc[0].line))
    return _site(lines, f.line, f.cls, f.message), m.group(0), component


# an uncaught C++ exception (other than std::bad_alloc, a row) in a TensorFlow program
_CPP_CAUSES = (
    ("A native library the program loaded (a TensorFlow runtime, an add-on's op library, OpenCV) "
     "threw a C++ exception nothing caught, so the process aborted; the what() line says what "
     "failed (a file, a device, a thread or a lock it could not get).",
     "Read the what() line and act on what it names; to see which library threw, run under gdb "
     "(catch throw) and read the backtrace's library names."),
    ("Two native libraries in one process were built against different C++ runtimes "
     "(libstdc++ releases, an old conda or system copy loaded first).",
     "Import TensorFlow first, or install the libraries from one channel (pip or conda, not "
     "both), so one libstdc++ serves them all."),
)


def component_reading(site: ErrorSite, component: str, shows: str) -> Reading:
    """The reading of an error another component of a TensorFlow program raised: its meaning and
    causes are the component's (the message's own clause first), not TensorFlow's."""
    meaning = (f"{site.cls} was raised by {component}, not by TensorFlow (no TensorFlow frame, "
               f"name or op in the error), in a program that uses TensorFlow (the log names "
               f"'{shows}').")
    own = _CPP_CAUSES if component == CPP_RUNTIME else (
        (f"{component} does not match the rest of the install: its release, the runtime or "
         f"driver it needs, or the TensorFlow/Python it was built for.",
         f"Install the release of {component} made for the installed runtime, TensorFlow and "
         f"Python (its install page), then import it alone to check."),
        (f"What {component} was given cannot be used by it: a model file made for another "
         f"runtime or compiler, a device that is absent or busy, a path that does not exist.",
         f"Check the file, device or path the message and your frame name, and run {component}'s "
         f"own example on this machine."),
        (f"A defect of {component} itself.",
         f"Search {component}'s issue tracker for the message's words."),
    )
    text = _site_text(site)
    ranked = [*clause_causes(text, "first"), *own]
    return Reading(site=site, meaning=meaning, likely=tuple(ranked[:_TOP_CAUSES]),
                   source=f"the failing component: {component} (its own causes, not "
                          f"data/error_class_causes.csv's)")


def find_error(text: str, lines: list[str], explained: set[int]) -> ErrorSite | None:
    """The TensorFlow error of the log no row explained (``scan_errors``), or None."""
    return scan_errors(text, lines, explained)[0]


@functools.cache
def _classes() -> dict[str, dict[str, str]]:
    from tfperf.doctor.knowledge.tables import read_table

    return {r["class"]: r for r in read_table("tf_error_classes.csv")}


@functools.cache
def _causes() -> tuple[tuple[str, re.Pattern[str] | None, str, str, str], ...]:
    from tfperf.doctor.knowledge.tables import read_table

    def compiled(when: str) -> re.Pattern[str] | None:
        if when.startswith(_FRAMES):  # a regex over the traceback's frames, not the message
            return re.compile(when[len(_FRAMES):])
        return re.compile(when) if when and not when.startswith("@") else None

    return tuple((r["class"], compiled(r["when"]), r["when"], r["cause"], r["fix"]) for r in
                 read_table("error_class_causes.csv"))


_FRAMES = "@frames:"  # error_class_causes' prefix for a condition on what ran (the frames)


def class_known(cls: str) -> bool:
    """A class the floor has a meaning for (tf.errors, Python's, the floor's own)."""
    return cls in TF_ERRORS or cls in _classes()


def class_meaning(cls: str) -> tuple[str, str]:
    row = _classes().get(cls)
    if row is None:
        return (f"{cls} was raised while TensorFlow or Keras ran.",
                "Python exception raised by TensorFlow/Keras")
    return row["meaning"], row["source"]


_ITERATOR_NEXT = re.compile(r"iterator_get_next|IteratorGetNext|_next_internal")
# conditions a ranked cause can have besides a regex over the message: what the site read
_CONDITIONS = {"@first-step": lambda site: bool(site.first_step),
               "@library": lambda site: bool(site.library),
               "@command": lambda site: bool(site.command) and not site.first_step,
               "@tf-init": lambda site: site.in_tf_init,
               # the error came out of a dataset iterator's next element (its frames or node)
               "@iterator-next": lambda site: bool(_ITERATOR_NEXT.search(
                   f"{site.frames}\n{site.context}\n{site.op}"))}


def likely_causes(site: ErrorSite) -> tuple[tuple[str, str], ...]:
    """(cause, fix) for the site's class, those whose condition the message meets first.
    ``{library}`` and ``{command}`` in a row's text name what the site read."""
    rows = [r for r in _causes() if r[0] == site.cls] or [r for r in _causes() if r[0] == "*"]
    text = _site_text(site)
    hits, generic = [], []
    for _cls, rx, when, cause, fix in rows:
        if when in _CONDITIONS:
            if _CONDITIONS[when](site):
                hits.append((cause, fix))
        elif rx is None:
            generic.append((cause, fix))
        elif when.startswith(_FRAMES):
            if rx.search(_capped(f"{site.frames}\n{site.context}")):
                hits.append((cause, fix))
        elif rx.search(text):
            hits.append((cause, fix))
    names = {"library": site.library, "command": site.command}
    # what the message's own clause names (a size of 0, a missing tag, an unknown field, a
    # component's source file) comes before what the class usually means
    ranked = [*clause_causes(text, "first"), *hits, *clause_causes(text, "after-class"),
              *generic]
    return tuple((_fill(c, names), _fill(f, names)) for c, f in ranked[:_TOP_CAUSES])


_LINE_CAP = 4096  # a line's head and tail this long together are what the cause rows read


def _capped(text: str) -> str:
    """Each line cut to its head and tail: the rows' regexes (``(?s)Incompatible shapes.*...``)
    backtrack over a whole line, minutes on a 1 MB one (review 41); a message's words and its
    node name sit at a line's two ends."""
    if len(text) <= _LINE_CAP:
        return text
    half = _LINE_CAP // 2
    return "\n".join(ln if len(ln) <= _LINE_CAP else f"{ln[:half]} ... {ln[-half:]}"
                      for ln in text.split("\n"))


def _site_text(site: ErrorSite) -> str:
    return _capped(f"{site.message}\n{site.context}\n{site.op}")


def clause_leads(site: ErrorSite) -> bool:
    """The message's own clause names the cause (a reading of rank ``first``): the log's other
    evidence does not go before it."""
    return bool(clause_causes(_site_text(site), "first"))


def _fill(text: str, names: dict[str, str]) -> str:
    return re.sub(r"\{(library|command)\}", lambda m: names[m.group(1)], text)


def read_error(site: ErrorSite) -> Reading:
    meaning, source = class_meaning(site.cls)
    return Reading(site=site, meaning=meaning, likely=likely_causes(site), source=source)


# TensorFlow names a library written for another release looks for (TF1's, tf.contrib...)
_TF_NAME = re.compile(r"'tensorflow[\w.]*'|\btensorflow\.|'(?:contrib|placeholder|Session|"
                      r"InteractiveSession|get_variable|variable_scope|ConfigProto|layers|estimator|"
                      r"compat|keras|app|flags|train|summary|logging|to_float|get_default_graph)'")


# a call whose signature differs between versions: an argument the installed function lacks
_SIGNATURE = re.compile(r"unexpected keyword argument|takes (?:from )?\d+ (?:to \d+ )?positional "
                        r"arguments? but \d+|missing \d+ required (?:positional|keyword-only)")


def library_mismatch(site: ErrorSite) -> bool:
    """A TensorFlow name the installed TensorFlow lacks, looked for inside a third-party
    library's own frames, or a TensorFlow call there with a signature the installed TensorFlow
    does not have (``tf.name_scope(name, values=...)``, TF 1's): that library and the
    TensorFlow do not match."""
    if not site.library:
        return False
    if site.cls in ("AttributeError", "ImportError", "ModuleNotFoundError"):
        return bool(_TF_NAME.search(site.message))
    return (site.cls == "TypeError" and bool(_SIGNATURE.search(site.message))
            and bool(re.search(r"\btf\.|\btensorflow\.|\bK\.|\bkeras\.", site.library_code)))


def label_of(cls: str) -> str:
    """InvalidArgumentError -> invalid-argument-error; CheckFailed -> check-failed."""
    return re.sub(r"(?<!^)(?=[A-Z])", "-", cls.lstrip("_")).lower()


def detail_of(site: ErrorSite) -> str:
    parts = []
    if site.op:
        parts.append(f"op {site.op}")
    if site.device:
        parts.append(f"device {site.device}")
    if site.shapes:
        parts.append("shapes " + " ".join(site.shapes))
    if site.dtypes:
        parts.append("dtypes " + ", ".join(site.dtypes))
    if site.user_frame:
        parts.append(f"your code: {site.user_frame}")
    if site.library:
        parts.append(f"raised inside the library {site.library}")
    if site.command:
        parts.append(f"the command run: {site.command}")
    if site.first_step:
        parts.append("at the first step (nothing ran before it)")
    if site.ignored:
        parts.append("raised in a destructor Python ignored ('Exception ignored in'), usually at "
                     "exit: it did not stop the run")
    return "; ".join(parts)
