"""Which of an out-of-memory's causes the log itself points at: ranked by what it shows.

An OOM has four usual causes, and their fixes differ: the batch is too large (lower it), one
sample is too large (a full-resolution image or a 3-D volume with a batch of one: tile it or
downscale it, a smaller batch cannot help), another process holds the GPU's memory (close it),
or memory is fragmented (``explain_memory``). The log says which more often than not:

- the GPU's free memory when TensorFlow created its device (``totalMemory: 11.17GiB
  freeMemory: 0.52GiB``) far below its total: another process held it before this one started;
- the failing tensor's shape and dtype (``OOM when allocating tensor with shape[1,32,195,666,
  1024] and type float``): a leading 1 with gigabytes behind it is one sample too large; a
  leading dimension in the hundreds or thousands is the batch (or batch x sequence);
- a small request (``Ran out of memory trying to allocate 392.00MiB``) with no shape pointing
  at the batch: the memory was already taken when it was asked for, most often by another
  process (an idle notebook kernel keeps all the memory TensorFlow reserved).

Round 8 of the held-out logs (stardist-napari#24, cryoCARE_pip#20, ghost-free-shadow-removal#15,
BERT-BiLSTM-CRF-NER#343, tf-faster-rcnn#7) were all answered "lower the batch size" before this.
"""

from __future__ import annotations

import math
import re

Reading = tuple[str, str, str]  # (cause, fix, the log's words that show it)

_SHAPE = re.compile(r"OOM when allocating tensor (?:with|of) shape ?[\[(](?P<shape>[\d, ]+)[\])]"
                    r"(?: and type (?P<dtype>\w+))?")
_REQUEST = re.compile(r"[Rr]an out of memory trying to allocate (?P<n>[\d.]+) ?(?P<u>[KMGT]i?B)")
# the device's memory when TensorFlow created it: TF 1.5+ on one line, TF 1.0-1.4 on two
_FREE_AT_START = re.compile(r"[Tt]otal ?[Mm]emory: (?P<total>[\d.]+) ?(?P<tu>[MG])iB\s*"
                            r"[Ff]ree ?[Mm]emory: (?P<free>[\d.]+) ?(?P<fu>[MG])iB")
# the BFC allocator's stats: the memory TensorFlow could use on that device, in bytes
_LIMIT = re.compile(r"^\s*Limit:\s+(?P<n>\d+)\s*$", re.M)
_DTYPE_BYTES = {"float": 4, "float32": 4, "int32": 4, "uint32": 4, "half": 2, "float16": 2,
                "bfloat16": 2, "double": 8, "float64": 8, "int64": 8, "complex64": 8,
                "uint8": 1, "int8": 1, "bool": 1, "int16": 2, "complex128": 16}
_UNIT = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_ONE_SAMPLE_LARGE = 1 << 30  # a single sample's tensor this large is the input's size, not a batch
_SMALL_REQUEST = 512 << 20  # a request this small fails only when the memory was already taken
_BATCH_LIKE = 32  # a leading dimension this large reads as the batch (or batch x sequence)
_VOCABULARY_LIKE = 100_000  # a 2-D tensor with more rows reads as a vocabulary-sized table
_MATRIX_LIKE = 10_000  # a 2-D tensor this large on both axes is a matrix, not a batch of rows
_LARGE_SAMPLE = 256 << 20  # one sample's share this large: the input's size matters as much
_SMALL_GPU = 2 << 30  # an allocator limit below this is a small GPU or one mostly held elsewhere
_LAYER_SHARE = 0.1  # a wide tensor this share of the limit is itself the cause, not the last straw
_LAYER_LARGE = 1 << 30  # ... or, with no limit shown, this large
_HELD_ELSEWHERE = 0.5  # free below this share of total at start: another process holds the rest

_OTHER_PROCESS_FIX = ("Run nvidia-smi and stop the other processes using this GPU (shut down idle "
                      "Jupyter kernels and finished scripts: TensorFlow keeps all the memory it "
                      "reserved until its process ends), then run again; when processes must "
                      "share the GPU, enable memory growth (TF_FORCE_GPU_ALLOW_GROWTH=true) in "
                      "each.")


def _gib(n: float) -> str:
    return f"{n / (1 << 30):.2f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.0f} MiB"


def _held_elsewhere(text: str) -> Reading | None:
    m = _FREE_AT_START.search(text) if "reeMemory" in text or "ree memory" in text else None
    if m is None:
        return None
    total = float(m["total"]) * _UNIT[m["tu"]]
    free = float(m["free"]) * _UNIT[m["fu"]]
    if total <= 0 or free >= _HELD_ELSEWHERE * total:
        return None
    return (f"Another process held the GPU's memory before this one started: TensorFlow found "
            f"only {_gib(free)} free of {_gib(total)} when it created the device, so this run "
            "had a fraction of the GPU to work with.", _OTHER_PROCESS_FIX, m.group(0))


def _from_shape(dims: list[int], dtype: str, shown: str, limit: int | None = None
                ) -> Reading | None:
    if not dims or 0 in dims:
        return None  # an empty tensor cannot exhaust memory: no size to read
    size = math.prod(dims) * _DTYPE_BYTES.get(dtype, 4)
    shape = "[" + ",".join(map(str, dims)) + "]"
    if dims[0] == 1 and len(dims) >= 3 and size < _ONE_SAMPLE_LARGE:
        return _batch_of_one(shape, size, shown, limit)
    if dims[0] == 1 and len(dims) >= 3 and size >= _ONE_SAMPLE_LARGE:
        return (f"A single sample is too large: the tensor that failed, {shape} ({_gib(size)}), "
                "has a batch of 1, so the input itself (a full-resolution image, a long "
                "sequence or a 3-D volume) makes activations larger than the GPU's memory; a "
                "smaller batch cannot help.",
                "Process the input in tiles or patches (a sliding window; in StarDist, CSBDeep, "
                "CARE or cryoCARE pass n_tiles, e.g. (1,2,4) or more, to predict), or downscale "
                "(resize) the image before the model; then stitch the tiles' outputs.",
                shown)
    if len(dims) == 2 and dims[1] > _VOCABULARY_LIKE >= dims[0] and (
            size >= _LAYER_SHARE * limit if limit else size >= _LAYER_LARGE):
        share = (f", {100 * size / limit:.0f} % of the {_gib(limit)} TensorFlow could use"
                 if limit else "")
        return (f"One layer is too big: the tensor that failed, {shape} ({_gib(size)}{share}), is "
                f"{dims[0]} rows of {dims[1]:,} values: the output (logits) of a layer with "
                f"{dims[1]:,} units, a softmax over that many classes or a vocabulary; it, its "
                "gradient and the optimizer's copies do not fit, and no allocator setting "
                "(fragmentation) changes that.",
                "Make that layer smaller: fewer classes (merge or drop rare ones), a sampled "
                "softmax (tf.nn.sampled_softmax_loss) or another loss that needs no full "
                "[batch, classes] matrix, a lower batch size; or split the layer across GPUs.",
                shown)
    if len(dims) == 2 and (dims[0] > _VOCABULARY_LIKE or min(dims) >= _MATRIX_LIKE):
        return None  # an embedding or output table, or a full matrix: not a batch
    per_sample = size // dims[0]
    if 2 <= dims[0] < _BATCH_LIKE and len(dims) >= 3 and per_sample >= _LARGE_SAMPLE:
        return (f"Each sample is large: the tensor that failed, {shape} ({_gib(size)}), holds "
                f"{dims[0]} samples of {_gib(per_sample)} each, so the input resolution (image "
                "or volume size) as much as the batch decides the memory.",
                "Lower the batch size (down to 1 if need be), and downscale the input or train on "
                "crops or tiles (patches) of it; mixed precision halves the activations.",
                shown)
    if dims[0] >= _BATCH_LIKE and len(dims) >= 2:
        return (f"The batch is too large: the leading dimension of the tensor that failed, "
                f"{dims[0]} in {shape} ({_gib(size)}), is the batch (or batch x sequence "
                "length), and its activations do not fit in the GPU's memory.",
                f"Lower the batch size (halve it until it fits). If the same leading dimension "
                f"({dims[0]}) comes back after you lowered it, the value you edited is not the "
                "one in use: a command-line flag, a config file or the entry point's default "
                "overrides it; pass it where the program reads it.",
                shown)
    return None


def _batch_of_one(shape: str, size: int, shown: str, limit: int | None) -> Reading:
    """A batch of 1 that still does not fit: the input's size and the GPU's memory decide (round 9:
    hzy46/fast-neural-style-tensorflow#21, a large photo; anishathalye/neural-style#60, a GPU with
    370 MB for TensorFlow; both were told to lower a batch that was already 1)."""
    small = limit is not None and limit < _SMALL_GPU
    cause = (f"The batch is already 1: the tensor that failed, {shape} ({_gib(size)}), holds one "
             "sample, so a smaller batch cannot help; the input's size (an image's resolution, a "
             "sequence's length) and the GPU's memory decide")
    if small and limit is not None:
        return (f"{cause}, and TensorFlow could use only {_gib(limit)} of GPU memory (its "
                "allocator's limit): a small GPU, or other processes hold the rest.",
                "Give TensorFlow more GPU memory (nvidia-smi lists the processes holding it: close "
                "them; or use a GPU with more memory), or use a smaller input (resize the image "
                "before the model, or process it in tiles).", shown)
    return (f"{cause}.",
            "Use a smaller input (resize or downscale the image before the model, shorter "
            "sequences, or process it in tiles and stitch the outputs), or a GPU with more free "
            "memory (nvidia-smi lists other processes holding it).", shown)


# the failing allocation is an input's conversion to one tensor (eager convert_to_eager_tensor,
# the copy to the device), in a log where arrays are handed to fit/predict/evaluate whole
_CONVERTING = re.compile(r"convert_to_eager_tensor|Failed copying input tensor|"
                         r"_convert_numpy_or_python_types|Failed to convert a NumPy array")
_WHOLE_ARRAY_CALL = re.compile(r"\.(?P<call>fit|predict|evaluate)\(\s*(?P<x>[A-Za-z_]\w*)\s*[,)]")
_BYTES_REQUEST = re.compile(r"[Rr]an out of memory trying to allocate (?P<n>\d+) ?Bytes")


def _whole_array(text: str) -> Reading | None:
    """An out-of-memory while a NumPy array given to fit(x, y) was converted whole: the request
    is the array's size, far above a batch, and no batch size helps (round 25: 10.5 GB on an
    Intel XPU)."""
    if not (c := _CONVERTING.search(text)) or not (call := _WHOLE_ARRAY_CALL.search(text)):
        return None
    size = 0.0
    if r := _REQUEST.search(text):
        size = float(r["n"]) * _UNIT[r["u"][0]]
    elif b := _BYTES_REQUEST.search(text):
        size = float(b["n"])
    if size < _ONE_SAMPLE_LARGE:  # a small request is no whole data set
        return None
    return (f"The request that failed ({_gib(size)}) is the whole input, not a batch: "
            f"{call['call']}({call['x']}, ...) was given a NumPy array, and TensorFlow converts it "
            f"into one tensor on the device before it slices batches ({c.group(0)} in the log), "
            "so the array must fit in the device's memory at once; a smaller batch size does not "
            "help.",
            "Keep the arrays on the host and feed batches: a generator or keras.utils.Sequence "
            "that yields one batch at a time, or build the dataset on the CPU (with "
            "tf.device('/CPU:0'): ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)) and "
            "pass ds to fit; or use smaller arrays (float32, not float64; fewer samples at once).",
            call.group(0))


def rank_oom(text: str) -> Reading | None:
    """The cause of an out-of-memory the log shows, with its fix; None when it shows none."""
    if held := _held_elsewhere(text):
        return held
    if whole := _whole_array(text):
        return whole
    m = _SHAPE.search(text) if "OOM when allocating" in text else None
    if m is not None:
        dims = [int(d) for d in m["shape"].replace(" ", "").split(",") if d]
        lim = _LIMIT.search(text) if "Limit:" in text else None
        limit = int(lim["n"]) if lim else None
        if dims and (got := _from_shape(dims, (m["dtype"] or "float").lower(), m.group(0),
                                        limit)):
            return got
        if dims and (math.prod(dims) * _DTYPE_BYTES.get((m["dtype"] or "float").lower(), 4)
                     >= _SMALL_REQUEST):
            return None
    r = _REQUEST.search(text) if "out of memory trying to allocate" in text else None
    if r is None:
        return None
    request = float(r["n"]) * _UNIT[r["u"][0]]
    lim = _LIMIT.search(text) if "Limit:" in text else None
    if lim and int(lim["n"]) < _SMALL_GPU:
        return (f"TensorFlow could use only {_gib(int(lim['n']))} of GPU memory (its allocator's "
                "limit) and it is used up: a small GPU, or other processes hold the rest, so even "
                f"a small request ({_gib(request)}) fails.",
                "Give TensorFlow more GPU memory (nvidia-smi lists the processes holding it: close "
                "them; or use a GPU with more memory), or make the model's work smaller (a smaller "
                "input or batch).", lim.group(0).strip())
    if request >= _SMALL_REQUEST or "InUse:" in text:  # the allocator's own stats judge it then
        return None
    return (f"The request that failed is small ({_gib(request)}): the GPU's memory was already "
            "taken when it was asked for, most often by another process (a second script, an "
            "idle Jupyter kernel that used TensorFlow), else by this model's own weights and "
            "earlier batches.",
            f"{_OTHER_PROCESS_FIX} If nothing else uses the GPU, lower the batch size or the "
            "model size.", r.group(0))
