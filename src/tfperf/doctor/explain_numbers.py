"""Readings decided by the numbers an error message gives, not by its words alone.

Two shapes in one message say which of a class's causes it is: a concatenation whose inputs
differ by one pixel in height or width is a skip connection over an input size that the poolings
do not divide; logits and labels with the same batch and another class count are a class count
that differs (a stray class folder), with the same class count and batches a factor apart a
reshape with -1 over the wrong sample size, and labels of shape [1, batch] are class ids given to
a loss that takes one-hot rows.
"""

from __future__ import annotations

import re

Reading = tuple[str, str, str]  # (cause, fix, the log's words that show it)

_CONCAT = re.compile(r"ConcatOp ?: Dimensions of inputs should match: shape\[0\] = "
                     r"\[(?P<a>[\d,]+)\] vs\. shape\[1\] = \[(?P<b>[\d,]+)\]")
_INCOMPATIBLE = re.compile(r"Incompatible shapes: \[(?P<a>\d+),(?P<x>\d+)\] vs\. "
                          r"\[(?P<b>\d+),(?P<y>\d+)\]")
_LOGITS = re.compile(r"logits and labels must be (?:broadcastable|same size): "
                     r"logits_size=\[(?P<l>\d+),(?P<lc>\d+)\] "
                     r"labels_size=\[(?P<y>\d+),(?P<yc>\d+)\]")


def _dims(text: str) -> list[int]:
    return [int(d) for d in text.split(",") if d]


def concat_off_by_one(text: str) -> Reading | None:
    """A runtime ConcatOp of two rank-4 tensors whose batch agrees and whose spatial sizes differ
    by exactly one: the encoder's odd feature map against the decoder's doubled one."""
    if "ConcatOp" not in text or (m := _CONCAT.search(text)) is None:
        return None
    a, b = _dims(m["a"]), _dims(m["b"])
    if len(a) != 4 or len(b) != 4 or a[0] != b[0]:
        return None
    # NCHW or NHWC: the two spatial axes are 2, 3 or 1, 2; the channel axis may differ freely
    for spatial in ((2, 3), (1, 2)):
        diffs = [abs(a[i] - b[i]) for i in spatial]
        if max(diffs) == 1 and all(a[i] > 1 for i in spatial):
            sizes = " vs ".join("x".join(str(t[i]) for i in spatial) for t in (a, b))
            return (f"The two tensors joined differ by one pixel ({sizes}): a skip connection (a "
                    "U-Net or encoder-decoder) meets the upsampled tensor one pixel off, because a "
                    "pooling floored an odd height or width and the upsampling doubled it back. "
                    "The input's size is not a multiple of 2 to the number of poolings.",
                    "Resize or pad the input so its height and width are multiples of 2**levels "
                    "(16 for four poolings, 32 for five), or use fewer levels for this size, or "
                    "crop/pad the larger tensor before concatenating.", m.group(0))
    return None


def rows_per_sample(text: str) -> Reading | None:
    """Two rank-2 shapes with the same width: rows a square factor apart (25 = 5x5) are a reshape
    to [-1, width] over images larger than the size the width was computed for (each sample
    several rows, one per extra cell of the feature map); a batch-sized count (a multiple of 8)
    against a smaller count that does not divide it is the epoch's partial last batch meeting a
    tensor built for the full batch."""
    if "Incompatible shapes" not in text or (m := _INCOMPATIBLE.search(text)) is None:
        return None
    a, b, x, y = int(m["a"]), int(m["b"]), int(m["x"]), int(m["y"])
    if x != y or a == b or min(a, b) == 0:
        return None  # an empty side (a batch of 0 rows) has no ratio to read
    big, small = max(a, b), min(a, b)
    if big % small:  # not a whole factor: a configured batch against a partial last batch
        return _last_batch(big, small, x, m.group(0)) if big % 8 == 0 else None
    k = max(a, b) // min(a, b)
    side = round(k ** 0.5)
    if k < 4 or side * side != k:  # no square: the full batch against a last batch that divides it
        return _last_batch(big, small, x, m.group(0)) if big % 8 == 0 else None
    return _square_rows(a, b, x, k, side, m.group(0))


def _last_batch(big: int, small: int, x: int, shown: str) -> Reading:
    return (f"The two tensors have the same width {x} but {big} against {small} rows: the last "
            f"batch of an epoch holds {small} samples (the data's size is not a multiple of "
            f"{big}) while a tensor in the model, the loss or a metric was built for exactly "
            f"{big} rows (a batch size written into a shape, a placeholder, a state or a "
            "constant).",
            "Drop the partial batch (dataset.batch(n, drop_remainder=True), or steps = "
            "len(data) // batch_size), or build that tensor from the real batch "
            "(tf.shape(x)[0]) instead of the configured batch size.", shown)


def _square_rows(a: int, b: int, x: int, k: int, side: int, shown: str) -> Reading:
    return (f"The two tensors have the same width {x} but {max(a, b)} against {min(a, b)} rows: "
            f"{k} = {side}x{side} rows per sample. A reshape to [-1, {x}] (a flatten written "
            f"with a hard-coded size) over a feature map {side} times larger per side than the "
            "one the size was computed for: the input images are larger than the size the "
            "model was written for.",
            "Feed images of the size the model was written for (resize them), or flatten with "
            "the real size (tf.keras.layers.Flatten, tf.reshape(x, [tf.shape(x)[0], -1])) and "
            "give the next layer that width.", shown)


def logits_labels_numbers(text: str) -> Reading | None:
    """What logits_size=[n,c] against labels_size=[m,d] says: the class count, the batch, or
    class ids where one-hot rows were expected."""
    if "logits_size=" not in text or (m := _LOGITS.search(text)) is None:
        return None
    n, c, k, d = (int(m[g]) for g in ("l", "lc", "y", "yc"))
    shown = m.group(0)
    if n == k and c != d:
        return (f"The output has {c} units and the labels {d} classes (same batch of {n}): the "
                "class count differs. With labels from a folder per class, a stray folder or "
                "file read as a class (desktop.ini, .ipynb_checkpoints, a 'test' folder) adds "
                "one; otherwise the last layer's units= is not the number of classes.",
                f"Give the last layer as many units as classes ({d} here if the labels are right): "
                "print(len(train_generator.class_indices)) or the distinct labels, and remove "
                "folders that are not classes from the data directory.", shown)
    if k == 1 and d == n:
        return (f"The labels are {d} class ids in one row (labels_size=[1,{d}] for a batch of "
                f"{n}): a loss that takes one-hot rows ({c} columns) got integer ids.",
                "Use the sparse loss for integer ids (sparse_softmax_cross_entropy_with_logits, "
                f"sparse_categorical_crossentropy), or one-hot the labels to {c} columns "
                "(tf.one_hot(labels, depth)).", shown)
    if c == d and n != k and min(n, k) > 0 and max(n, k) % min(n, k) == 0:
        f = max(n, k) // min(n, k)
        many = "logits" if n > k else "labels"
        return (f"Logits and labels have the same {c} classes but batches of {n} and {k} ({many} "
                f"{f}x): a reshape with -1 over another sample size than the data's (x reshaped "
                "to [-1, N] with N not the size of one sample, e.g. images of another size than "
                "the model assumes) multiplied or divided the batch.",
                "Print the shapes of the input and labels per batch; reshape with the real sample "
                "size (or tf.shape) and resize the data to the size the model was built for.",
                shown)
    return None


_FLAT = re.compile(r"Incompatible shapes: \[(?P<a>\d+(?:,\d+)*)\] vs\. \[(?P<b>\d+(?:,\d+)*)\]")
# an accuracy metric's node: error_class_causes.csv's row for it reads that case better
_METRIC_NODE = re.compile(r"\bmetrics?(?:_\d+)?/[\w/]*?acc\w*/Equal")


# a loss or metric named by the op, its node or a frame near the message: only there are the
# two sides labels and outputs
_LOSS_OR_METRIC = re.compile(r"(?i)loss|metric|accuracy|crossentropy|squared_error|absolute_error|"
                             r"[/_]acc\b|\bfit\b|train_step|train_function|compile")
_AROUND = 4000  # characters read on each side of the message
# what names where the error was raised: an eager op, a graph node, a traceback's frame
_WHERE = re.compile(r"\[Op:|\bnode |^\s*File \"", re.M)


def flattened_labels(text: str) -> Reading | None:
    """Incompatible shapes of one element count and two ranks ([7600] vs. [400,19]): one side
    was flattened, so a loss or metric compares labels and outputs of another rank (per-step
    outputs of a sequence model against flattened labels, or a metric written for 2-D
    outputs)."""
    if "Incompatible shapes" not in text or (m := _FLAT.search(text)) is None:
        return None
    a, b = _dims(m["a"]), _dims(m["b"])
    if len(a) == len(b) or min(len(a), len(b)) == 0 or 0 in a or 0 in b:
        return None
    flat, full = (a, b) if len(a) < len(b) else (b, a)
    if len(flat) != 1 or len(full) < 2 or flat[0] != _prod(full):
        return None
    if _METRIC_NODE.search(text, m.end(), m.end() + 2000):
        return None  # the accuracy metric's own node: its class cause says more
    lo, hi = max(0, m.start() - _AROUND), m.end() + _AROUND
    if _WHERE.search(text, lo, hi) and not _LOSS_OR_METRIC.search(text, lo, hi):
        # the op, node or frames are named and none is a loss or metric (x + y [Op:AddV2]): no
        # labels in it (review 41); a message alone keeps the reading
        return None
    whose = " (most often a metric, such as accuracy, on per-step outputs)"
    shape = ",".join(str(d) for d in full)
    return (f"The two sides hold the same {flat[0]} values in another rank: [{flat[0]}] against "
            f"[{shape}]. One side was flattened, so a loss or metric compares labels and outputs "
            f"of different ranks{whose}: per-step outputs of a sequence model against labels "
            "flattened to one axis, or a metric written for 2-D outputs given 3-D ones.",
            f"Give the labels the output's shape ([{shape}] or with a trailing 1) instead of "
            "flattening them, or reshape both inside the metric/loss (tf.reshape(y_true, [-1]), "
            "tf.reshape(y_pred, [-1, classes])), or drop the metric that does not take this "
            "rank.", m.group(0))


# Keras 1.x-2.3's target check: the output the model gives against the labels' array
_TARGET_SHAPE = re.compile(r"expected (?P<layer>\w+) to have shape \((?P<want>[^)\n]*)\) but got "
                           r"array with shape \((?P<got>[^)\n]*)\)")
_TARGET_NDIM = re.compile(r"expected (?P<layer>\w+) to have (?P<want>\d+) dimensions?, but got "
                          r"array with shape \((?P<got>[^)\n]*)\)")


def _sizes(shape: str) -> list[str]:
    return [d.strip() for d in shape.split(",") if d.strip()]


def target_check_numbers(text: str) -> Reading | None:
    """Keras's "Error when checking target" with its two shapes: labels one column wider than
    the output's units are class ids 1..N one-hot encoded from 0 (to_categorical makes N+1
    columns, column 0 unused); an output of more dimensions than the 2-D labels is a per-step
    output (a recurrent layer that returns sequences, no Flatten before the last Dense)."""
    at = text.find("Error when checking")
    while at >= 0 and not text.startswith("target", text.find(":", at) - 6):
        at = text.find("Error when checking", at + 1)
    if at < 0:
        return None
    end = text.find("\n", at)
    line = text[at:end if end >= 0 else len(text)]
    if m := _TARGET_SHAPE.search(line):
        want, got = _sizes(m["want"]), _sizes(m["got"])
        if (len(want) == len(got) == 2 and want[-1].isdigit() and got[-1].isdigit()
                and int(got[-1]) == int(want[-1]) + 1):
            n = int(want[-1])
            return (f"The labels have one column more than the output's {n} units "
                    f"({got[-1]} against {n}): class ids 1..{n} one-hot encoded by "
                    f"to_categorical, which counts from 0 and so makes {n + 1} columns "
                    "(column 0 never used).",
                    f"Number the classes from 0: to_categorical(y - 1, num_classes={n}) (or "
                    f"to_categorical(y, num_classes={n}) on ids 0..{n - 1}); a last layer of "
                    f"{n + 1} units would only learn an empty class.", m.group(0))
        return None
    if m := _TARGET_NDIM.search(line):
        rank, got = int(m["want"]), _sizes(m["got"])
        if rank > len(got) == 2:
            return (f"The model's output {m['layer']} has {rank} dimensions and the labels 2 "
                    f"(shape ({m['got']})): the last layer gives one output per time step, as "
                    "a recurrent layer with return_sequences=True (or a Dense on a 3-D "
                    "tensor) does, where the labels hold one value per sample.",
                    "Set return_sequences=False on the last LSTM/GRU before the output layer "
                    "(or add Flatten / GlobalAveragePooling1D before the last Dense); keep "
                    "return_sequences=True only when the labels are per step too.", m.group(0))
    return None


# an input check with both shapes (Keras 1.x-2.3, TensorFlow.js): expected X to have shape ...
_INPUT_SHAPES = re.compile(r"expected (?P<layer>\w*input\w*) to have shape "
                           r"(?P<want>[\[(][^\])\n]*[\])]) but got array with shape "
                           r"(?P<got>[\[(][^\])\n]*[\])])")


def input_holds_sample_count(text: str) -> Reading | None:
    """An input of shape [null, n, k] given [1, m, k]: the rows (m) came as one sample of a
    model whose input shape holds a row count (n, the training set's): inputShape or
    input_shape was given the data's whole shape instead of one sample's."""
    if "to have shape" not in text or (m := _INPUT_SHAPES.search(text)) is None:
        return None
    want, got = _sizes(m["want"].strip("[]()")), _sizes(m["got"].strip("[]()"))
    if (len(want) < 3 or len(want) != len(got) or want[0] not in ("null", "None")
            or got[0] != "1" or want[1:2] == got[1:2] or want[2:] != got[2:]
            or not want[1].isdigit()):
        return None
    sample = ", ".join(want[2:])
    return (f"The model's input shape holds a number of rows: it wants {want[1]} rows of "
            f"[{sample}] per sample ({m['want']}), so the {got[1]} rows given came as one "
            f"sample ({m['got']}). The input shape (inputShape in TensorFlow.js, input_shape in "
            f"Keras) was set to the training data's shape ({want[1]} rows), but it is the shape "
            "of one sample: the number of samples is the batch axis, left out.",
            f"Give the input layer one sample's shape (inputShape: [{sample}] / input_shape=("
            f"{sample},)) and pass the rows as the batch (a tensor of shape [N, {sample}]); for "
            "a sequence model keep the time axis but not the number of sequences.", m.group(0))


def _prod(dims: list[int]) -> int:
    out = 1
    for d in dims:
        out *= d
    return out


_LABEL_RANGE = re.compile(r"Received a label value of (?P<v>\d+) which is outside the valid range "
                          r"of \[0, (?P<n>\d+)\)")
# ids this many times the class count come from another class list (67 for 2 classes), not a
# count off by one or a few (32 for 11 stays the general reading)
_OTHER_MAP = 4
_MASK_OR_VOID = 255  # a mask's white, or VOC/Cityscapes' label for 'ignore'


def label_from_other_map(text: str) -> Reading | None:
    """A label id far past the class count (67 for 2 classes): not labels off by one but class
    ids of another, larger class list (the data written with COCO's or VOC's ids, or the full
    list, while the model was built for a subset)."""
    if "Received a label value" not in text or (m := _LABEL_RANGE.search(text)) is None:
        return None
    value, n = int(m["v"]), int(m["n"])
    if n == 0 or value < max(n + 2, _OTHER_MAP * n):
        return None
    if value == _MASK_OR_VOID or n == 1:
        # simpler causes the general reading names (review 41): 255 is a 0/255 mask or VOC's
        # void/ignore label; a range [0, 1) is a one-unit output under a sparse loss
        return None
    return (f"A label id of {value} for a model of {n} classes is no off-by-one: the labels are "
            "class ids of another, larger class list. The records or annotation files were "
            "written with the original data set's ids (COCO's 80, VOC's 20, the full label map) "
            f"while the model and its class-names file have {n} classes.",
            f"Write the labels again with your own class list so they run 0..{n - 1} (rebuild the "
            "TFRecords/annotations with the same classes file the training uses, or map the ids), "
            "or build the model for the class list the data was written with (units = the "
            "largest id + 1).", m.group(0))


_RAN_OUT = re.compile(r"ran out of data[^\n]{0,200}?\(in this case, (?P<n>\d+) batches\)")
_BAR_DONE = re.compile(r"^\s*(?P<n>\d+)/(?P=n) \[=", re.M)
_VAL_STEPS = re.compile(r"validation_steps\s*[=:]\s*(?P<n>\d+)")
_NEAR = 6000  # characters read on each side of the warning
_EPOCH_SUMMARY = re.compile(r"^\s*(?P<n>\d+)/(?P=n) \[=+\] - \d[^\n]*$", re.M)


def validation_ran_out(text: str) -> tuple[str, str, str] | None:
    """(cause, fix, words) when the input Keras says ran out is the validation data: the batches
    the warning names equal the printed ``validation_steps``, or are fewer than one full
    training epoch (a training shortfall counts steps_per_epoch x epochs), or the epochs after
    the first lose their val_ metrics."""
    if "ran out of data" not in text or (m := _RAN_OUT.search(text)) is None:
        return None
    n = int(m["n"])
    # the fit the warning belongs to: its progress bars and epoch summaries lie around it
    near = text[max(0, m.start() - _NEAR):m.end() + _NEAR]
    vs = _VAL_STEPS.search(near)
    bars = [int(b["n"]) for b in _BAR_DONE.finditer(near)]
    summaries = [s.group(0) for s in _EPOCH_SUMMARY.finditer(near)]
    lost_val = ("val_" in summaries[0] and any("val_" not in s for s in summaries[1:])
                if summaries else False)
    why = ""
    if vs and int(vs["n"]) == n:
        why = f"the {n} batches it names are validation_steps={n}"
    elif bars and n < max(bars):
        why = (f"the {n} batches it names are fewer than one training epoch ({max(bars)} steps), "
               "so they are the validation steps, not steps_per_epoch x epochs")
    elif lost_val:
        why = "epoch 1 has val_ metrics and the later epochs have none"
    if not why:
        return None
    return (f"The input that ran out is the validation data ({why}): fit asks it for "
            "validation_steps batches at every epoch's end, it gave them once, so later epochs "
            "skip validation (no val_loss: callbacks monitoring it skip): the validation "
            "dataset is not repeated.",
            "Add .repeat() to the validation dataset (or leave validation_steps unset for a "
            "finite tf.data dataset, so Keras reads it to its end each epoch; a generator must "
            "loop); the training input is fine.", m.group(0)[:120])


# an id outside a gather's table, with the position it sits at (TensorFlow's gather check)
_GATHER_ID = re.compile(r"indices\[(?P<pos>[\d,]+)\] = (?P<id>\d+) is not in \[0, (?P<size>\d+)\)")
# words that name a table of positions in the message or its node (a model's name, BERT or
# GPT, is no such word: its word embedding is a gather too; review 40)
_POSITION_WORDS = re.compile(r"position(?:_ids|_embeddings?|al)|PositionEmbedding|"
                             r"max_position_embeddings", re.I)
# the position tables' sizes pretrained models ship (BERT 512, RoBERTa 514, GPT-2 1024, ...)
_POSITION_SIZES = frozenset({512, 514, 1024, 2048, 4096, 8192})


def position_past_table(text: str) -> Reading | None:
    """(cause, fix, words) when the id out of range is a position: the ids are a batch of
    sequences (2-D or more), the id equals its own index along the sequence (``indices[0,529] =
    529``: the ids are 0, 1, 2 ... along the axis) or the table's size, and the table is one of
    positions: the message or its node names one, or its size is a pretrained position table's.
    The sequence is longer than the model's position table: truncate it, the table's size is the
    model's, not a vocabulary. (A 1-D ``tf.gather(x, tf.range(n))`` or a vocabulary the size of
    its id is no position table: the row's reading stays.)"""
    if "is not in [0, " not in text or (m := _GATHER_ID.search(text)) is None:
        return None
    pos, got, size = _dims(m["pos"]), int(m["id"]), int(m["size"])
    if len(pos) < 2 or not (pos[-1] == got or got == size):
        return None
    own_index = pos[-1] == got
    line_end = text.find("\n", m.end())  # the message's line and the node line after it
    line_end = text.find("\n", line_end + 1) if line_end >= 0 else -1
    message = text[text.rfind("\n", 0, m.start()) + 1:line_end if line_end >= 0 else None]
    if not (_POSITION_WORDS.search(message) or size in _POSITION_SIZES):
        return None
    why = (f"the id {got} sits at index {got} of its sequence, so the ids count positions"
           if own_index else f"the id {got} is exactly the size of a table of positions")
    return (f"The sequence is longer than the model's table of positions ({why}): a position "
            f"embedding of {size} rows (BERT and most transformers: 512) has no row for position "
            f"{got}. The table's size is fixed by the pretrained model; it is not a vocabulary "
            "to enlarge.",
            f"Truncate or split the input to at most {size} tokens before the model (the "
            f"tokenizer's truncation=True, max_length={size}, or a sliding window over long "
            "texts); keep the pretrained embedding's size.",
            m.group(0))


# fit(..., validation_data=NAME): the name of the validation input
_VAL_NAME = re.compile(r"validation_data\s*=\s*(?P<name>[A-Za-z_]\w*)\b(?!\s*[\[(.])")
_NDIM = re.compile(r"expected (?:min_)?ndim=(?P<want>\d+), found ndim=(?P<got>\d+)")


# a tf.data source that yields single elements (unlike image_dataset_from_directory & co.)
_UNBATCHED_SOURCE = re.compile(r"\bDataset\.(?:from_tensor_slices|from_tensors|from_generator|"
                               r"range|zip|list_files)\(|\b(?:TFRecord|TextLine|"
                               r"FixedLengthRecord)Dataset\(")


def validation_unbatched(text: str) -> Reading | None:
    """(cause, fix, words) when a rank-one-short input error comes from a validation dataset the
    log's code builds without .batch() while the training one is batched: Keras reads each of
    its elements as a batch, one axis short."""
    if "found ndim=" not in text or "validation_data" not in text:
        return None
    nd, vm = _NDIM.search(text), _VAL_NAME.search(text)
    if nd is None or vm is None or int(nd["want"]) != int(nd["got"]) + 1:
        return None
    name = vm["name"]
    built = _assignments(text, name)
    if not built or any(".batch(" in ln or "padded_batch(" in ln for ln in built):
        return None
    if not any(_UNBATCHED_SOURCE.search(ln) for ln in built):
        return None  # the log must show it built from elements (a helper's name proves nothing)
    if not re.search(r"\.(?:padded_)?batch\(", text):  # the training input is batched
        return None
    return (f"The validation dataset '{name}' is never batched (the log's code builds it "
            f"without .batch()), while the training one is: Keras reads each validation element "
            f"as a batch, one axis short (ndim={nd['got']} where the model wants "
            f"ndim={nd['want']}).",
            f"Batch the validation dataset like the training one: {name} = {name}.batch(BATCH) "
            "(before prefetch), or pass validation_data as arrays with validation_batch_size.",
            built[0].strip())


def _assignments(text: str, name: str) -> list[str]:
    """The lines of ``text`` that assign ``name`` (``name = ...``), found by str.find: a regex
    over every line of a long log costs tens of milliseconds."""
    out, at = [], text.find(name)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        line = text[start:end if end >= 0 else len(text)]
        if re.match(rf"\s*{re.escape(name)}\s*=[^=]", line):
            out.append(line)
        at = text.find(name, (end if end >= 0 else len(text)))
    return out


_SHAPES = re.compile(r"Incompatible shapes: \[(?P<a>\d+(?:,\d+)*)\] vs\. \[(?P<b>\d+(?:,\d+)*)\]")
_STRIDE = 32  # a detection head's coarsest grid (YOLO, SSD, RetinaNet): one cell per 32 pixels


# where the failing op is a loss's: a traceback frame in a function named for a loss, or the op's
# node or name in a loss scope ('name: loss/sub/', '[[node yolo_loss/sub')
_LOSS_FRAME = re.compile(r'^\s*File "[^"\n]*", line \d+, in \w*loss\w*\s*$', re.M | re.I)
_LOSS_NODE = re.compile(r"(?:name: |[Nn]ode:? )[\w/]*loss", re.I)


def _in_loss(text: str, m: re.Match[str]) -> bool:
    return bool(_LOSS_NODE.search(text, m.end(), m.end() + 2000) or _LOSS_FRAME.search(text))


def grid_size_mismatch(text: str) -> Reading | None:
    """Two tensors of rank 4 or more equal in every axis but the two spatial ones, each side a
    square grid ([1,13,13,3,2] vs. [1,10,10,3,2]): a model's output map (a detection grid, a
    segmentation map) against targets built for another input size, so the images are not at
    the size the model, its labels or its anchors were made for."""
    if "Incompatible shapes" not in text or (m := _SHAPES.search(text)) is None:
        return None
    a, b = _dims(m["a"]), _dims(m["b"])
    if len(a) != len(b) or len(a) < 4:
        return None
    if not _in_loss(text, m):
        return None  # inside the model (a residual or skip add of two stages): no targets
    for spatial in ((1, 2), (2, 3)):
        rest = [i for i in range(len(a)) if i not in spatial]
        if any(a[i] != b[i] for i in rest):
            continue
        ha, wa, hb, wb = a[spatial[0]], a[spatial[1]], b[spatial[0]], b[spatial[1]]
        # both square, both over 1 (not a broadcast axis), and at least 2 cells apart (a 1-cell
        # difference of a skip connection is concat_off_by_one's reading)
        if ha != wa or hb != wb or min(ha, hb) < 2 or abs(ha - hb) < 2:
            continue
        big, small = max(ha, hb), min(ha, hb)
        return (f"The two tensors agree in every axis but the spatial grid ({ha}x{wa} against "
                f"{hb}x{wb}): the model's output map and the targets it is compared with were "
                "made for different input sizes. The images fed are not at the input size the "
                "model (or its labels and anchors) was built for; at a detector's stride of "
                f"{_STRIDE} the grids are {big * _STRIDE} and {small * _STRIDE} pixels (a "
                f"{big * _STRIDE}x{big * _STRIDE} model fed {small * _STRIDE}x{small * _STRIDE} "
                "images, or the reverse).",
                "Resize the images to the model's input size before training or inference (the "
                "size its grid and labels are built from, e.g. tf.image.resize to 416x416 for a "
                "YOLOv3 at 416), or build the model and the label transform for the image size "
                "you feed; print the model's output shape and the label tensor's shape.",
                m.group(0))
    return None


# a Keras loss node's weighting multiply ('loss/dense_1_loss/mul', its gradient 'mul_grad')
_LOSS_MUL = re.compile(r"\bloss(?:_\d+)?/[\w/]*?loss(?:_\d+)?/mul(?:_grad)?\b")


def loss_over_batch(text: str) -> Reading | None:
    """Two rank-1 shapes in a Keras loss node's multiply by the sample weights ([5] vs. [32]):
    the loss returned one value per output column, not one per sample, so a custom loss reduces
    over axis 0 (the batch) instead of the last axis."""
    if "Incompatible shapes" not in text or (m := _SHAPES.search(text)) is None:
        return None
    a, b = _dims(m["a"]), _dims(m["b"])
    if len(a) != 1 or len(b) != 1 or a == b or min(a[0], b[0]) < 2:
        return None
    if _LOSS_MUL.search(text, m.end(), m.end() + 2000) is None:
        return None  # only the loss's weighting compares the loss with one weight per sample
    # Keras multiplies in this order (score_array * weights, keras/engine/training_utils.py
    # weighted_masked_objective): the first shape is the loss's, the second the batch's weights
    cols, batch = a[0], b[0]
    return (f"The loss returned {cols} values where Keras multiplies it by one weight per sample "
            f"({batch}): a custom loss reduces over axis 0, the batch (K.mean(..., axis=0), "
            "tf.reduce_sum(..., axis=0)), so it gives one value per output column instead of "
            "one per sample.",
            "Reduce over the last axis in the custom loss (K.mean(K.square(y_pred - y_true), "
            "axis=-1)), so it returns shape [batch]; Keras averages over the batch itself.",
            m.group(0))


_DENSE_BOUNDS = re.compile(r"indices\[\d+\] = \[(?P<idx>\d+(?:,\d+)+)\] is out of bounds: need "
                           r"0 <= index < \[(?P<shape>\d+(?:,\d+)+)\]")


def dense_length_exceeded(text: str) -> Reading | None:
    """A sparse-to-dense index at or past the dense shape in a non-leading axis ([240,9] for
    [300,9]): the data hold longer sequences (more tokens, path nodes, subtokens) than the
    maximum length the reader's dense shape is configured for."""
    if "is out of bounds" not in text or (m := _DENSE_BOUNDS.search(text)) is None:
        return None
    idx, shape = _dims(m["idx"]), _dims(m["shape"])
    if len(idx) != len(shape):
        return None
    over = [i for i in range(1, len(idx)) if idx[i] >= shape[i]]
    if not over or idx[0] >= shape[0]:
        return None  # the leading axis (rows, the batch) is another story: a count, not a length
    ax = over[0]
    # the same message comes from a bag of ids densified (a vocabulary or hashed feature id
    # past the dense width): the reading names both, the sequences first (code2seq's case)
    return (f"An element sits at position {idx[ax]} of axis {ax}, whose dense size is "
            f"{shape[ax]}: the data hold more along that axis than the dense shape the reader "
            "is built from. Either the sequences are longer (tokens, path nodes, "
            "subtokens) than the maximum length in the model's config (the preprocessing ran "
            "with a larger one, or none), or, where that axis holds ids, an id is past the "
            "vocabulary or feature count the dense shape was made for.",
            f"Make the config's maximum length (max path/sequence/subtoken length) at least the "
            f"one the data were preprocessed with (more than {shape[ax]} here), or preprocess "
            "again with the model's limits, or truncate the sequences before densifying; for "
            "ids, build the dense shape from the vocabulary's real size (or map unknown ids to "
            "an out-of-vocabulary id).",
            m.group(0))


# the sparse losses' two wordings: TensorFlow's kernel, and Keras's check before it
_FIRST_DIM = re.compile(r"logits and labels must have the same first dimension, got logits shape "
                        r"\[(?P<r>\d+),(?P<c>\d+)\] and labels shape \[(?P<n>\d+)\]")
_KERAS_SPARSE = re.compile(r"The shape of labels \(received \((?P<n>\d+),?\)\) should equal the "
                           r"shape of logits except for the last dimension \(received "
                           r"\((?P<r>\d+), (?P<c>\d+)\)\)")


def onehot_to_sparse(text: str) -> Reading | None:
    """A sparse loss given labels whose count is the logits' rows times their classes (2500 =
    250 x 10): each label is a one-hot row (or a mask with a channel per class), flattened by
    the sparse loss, which wants one class id per row."""
    if "first dimension" in text:
        m = _FIRST_DIM.search(text)
    elif "except for the last dimension" in text:
        m = _KERAS_SPARSE.search(text)
    else:
        return None
    if m is None:
        return None
    n, rows, classes = int(m["n"]), int(m["r"]), int(m["c"])
    if classes < 2 or rows == 0 or n != rows * classes:
        return None  # another count: sequences or a batch of another size, the row's reading
    # the same product is a batch of sequences of length == classes against a model that gives
    # one prediction per sequence: with a recurrent model in the log, both are named
    seq = (f" Or, since the log shows a sequence model ({s[0]}), the labels are {rows} "
           f"sequences of {classes} steps each against a model that outputs one prediction per "
           "sequence (return_sequences=False on the last recurrent layer): then set "
           "return_sequences=True (or TimeDistributed) so each step is predicted."
           if (s := _sequence_model(text)) else "")
    return (f"The labels hold {n} values for {rows} rows of {classes} classes: {n} = {rows} x "
            f"{classes}, so each label is a one-hot row (or a mask with one channel per class) "
            "given to a sparse loss, which wants one integer class id per row and flattens "
            f"what it gets.{seq}",
            "Use the categorical loss for one-hot labels (categorical_crossentropy / "
            "CategoricalCrossentropy, softmax_cross_entropy_with_logits), or turn the labels "
            "into class ids for the sparse loss (np.argmax(y, axis=-1) / tf.argmax; for masks, "
            "a single channel of ids).", m.group(0))


# the words of a sequence model, without a leading \b: led by their literals the engine skips to
# one of their first letters; a word boundary before the match is checked after (4 ms on a
# 10,000-line log with the \b, which leaves the engine no literal to skip to)
_SEQUENCE = re.compile(r"(?:LSTM|GRU|SimpleRNN|Bidirectional|TimeDistributed|"
                       r"return_sequences|dynamic_rnn|lstm_cell|gru_cell)\b")


def _sequence_model(text: str) -> re.Match[str] | None:
    """The first sequence-model word of ``text`` as a whole word (what ``\\b(?:...)\\b`` finds)."""
    for m in _SEQUENCE.finditer(text):
        at = m.start()
        if at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "_"):
            return m
    return None
