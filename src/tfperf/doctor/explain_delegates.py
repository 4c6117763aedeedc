"""A TensorFlow Lite delegate the code sets up that never took the graph.

TensorFlow Lite logs ``Replacing N node(s) with delegate (NAME) node`` for every delegate that
takes part of a graph, and the CPU's XNNPACK delegate announces itself as it is created. A log
whose code names an accelerator delegate (NNAPI, GPU, Hexagon, Core ML) and shows the XNNPACK
line, but no line of that delegate taking nodes, ran on the CPU: the delegate (or the Options
holding it) was never handed to the Interpreter, or it took no op.
"""

from __future__ import annotations

import re

# the accelerator delegate's class in Java/Kotlin/C++/Python code, and the name TFLite's
# "Replacing ... with delegate (NAME)" line gives it
_DELEGATES = (("NNAPI", re.compile(r"\bNnApiDelegate\b|\bStatefulNnApiDelegate\b"),
               re.compile(r"with delegate \(TfLiteNnapiDelegate\)")),
              ("GPU", re.compile(r"\bGpuDelegate(?:V2)?\b|\bTfLiteGpuDelegateV2Create\b"),
               re.compile(r"with delegate \(TfLiteGpuDelegate\w*\)|Created (?!0 )\d+ GPU "
                          r"delegate kernels")),
              ("Hexagon", re.compile(r"\bHexagonDelegate\b"),
               re.compile(r"with delegate \(TfLiteHexagonDelegate\)")),
              ("Core ML", re.compile(r"\bCoreMLDelegate\b"),
               re.compile(r"with delegate \(TfLiteCoreMlDelegate\)|with delegate \(CoreML")))
_CPU_ONLY = re.compile(r"Created TensorFlow Lite XNNPACK delegate for CPU")


def delegate_not_applied(text: str) -> tuple[str, int] | None:
    """(delegate, 0-based line of the XNNPACK line) when the code names an accelerator delegate
    that no line shows taking nodes, while the CPU's XNNPACK delegate was created; else None."""
    if "Delegate" not in text or (cpu := _CPU_ONLY.search(text)) is None:
        return None
    for name, code, took in _DELEGATES:
        if code.search(text) and not took.search(text):
            return name, text.count("\n", 0, cpu.start())
    return None
