"""A loaded SavedModel's function called with arguments its traced signatures do not take.

"Could not find matching (concrete) function to call loaded from the SavedModel" lists what the
call passed ("Got:") and each signature the model was saved with ("Option N:"); comparing the
first argument of the call with the first option's says which of dtype, shape or nesting
differs, so the fix names the cast, the resize or the list to pass.
"""

from __future__ import annotations

import re

Reading = tuple[str, str, str]  # (cause, fix, the log's words that show it)

_HEAD = "function to call loaded from the SavedModel"
# the call's first tensor: <tf.Tensor 'x:0' shape=(1, 2) dtype=uint8> or Tensor("x:0", shape=(1,
# 2), dtype=float32)
_GOT = re.compile(r"Got:\s*\n\s*Positional arguments \(\d+ total\):\s*\n\s*\* (?:<tf\.Tensor "
                  r"'[^']*' shape=\((?P<s1>[^)]*)\) dtype=(?P<d1>\w+)>|Tensor\(\"[^\"]*\", "
                  r"shape=\((?P<s2>[^)]*)\), dtype=(?P<d2>\w+)\))")
_OPTION = re.compile(r"Option \d+:\s*\n\s*Positional arguments \(\d+ total\):\s*\n\s*\* "
                     r"(?P<list>\[)?TensorSpec\(shape=\((?P<shape>[^)]*)\), "
                     r"dtype=tf\.(?P<dtype>\w+)")


def _dims(shape: str) -> list[str]:
    return [d.strip() for d in shape.split(",") if d.strip()]


def _fits(got: list[str], want: list[str]) -> bool:
    if len(got) != len(want):
        return False
    return all(w == "None" or g == w for g, w in zip(got, want, strict=True))


def signature_mismatch(text: str) -> Reading | None:
    """(cause, fix, words) for a SavedModel call whose first argument differs from the saved
    signature's in dtype, shape or nesting; None when they agree or the message is cut."""
    at = text.find(_HEAD)
    if at < 0:
        return None
    block = text[at:at + 4000]
    got, options = _GOT.search(block), list(_OPTION.finditer(block))
    if got is None or not options:
        return None
    g_dtype = got["d1"] or got["d2"]
    g_shape = _dims(got["s1"] if got["s1"] is not None else got["s2"])
    g_list = "[" in block[got.start():got.end()]
    # the first argument fits some saved signature: what differs is another argument or a
    # keyword (training=True where only training=False was saved), not read here
    if any(o["dtype"] == g_dtype and _fits(g_shape, _dims(o["shape"]))
           and bool(o["list"]) == g_list for o in options):
        return None
    opt = options[0]
    w_dtype, w_shape = opt["dtype"], _dims(opt["shape"])
    wrong = []
    fixes = []
    if g_dtype != w_dtype:
        wrong.append(f"dtype {g_dtype} where the saved function takes {w_dtype}")
        fixes.append(f"cast the input (tf.cast(x, tf.{w_dtype}), with the scaling the model "
                     "expects)")
    if not _fits(g_shape, w_shape):
        wrong.append(f"shape ({', '.join(g_shape)}) where it takes ({', '.join(w_shape)})")
        fixes.append("give it the saved shape (resize images to the model's input size, add the "
                     "batch axis with tf.expand_dims)")
    if not wrong and opt["list"] and not g_list:
        wrong.append("one tensor where the saved function takes a list of tensors")
        fixes.append("pass the input inside a list, as it was when the model was saved")
    if not wrong:
        return None
    return ("The SavedModel's function was traced (saved) only for other arguments: the call "
            f"passes {'; '.join(wrong)}. A loaded SavedModel cannot trace again, so only the "
            "saved signatures can be called.",
            f"Call it as it was saved: {'; '.join(fixes)}; or save the model again with a "
            "signature for the input you feed (tf.function input_signature, a None batch axis).",
            block[:block.find("\n")] if "\n" in block else block)
