"""``tfperf.serve_profiler(port)``: the one line a training job needs for ``--remote``.

It starts TensorFlow's own profiler server (``tf.profiler.experimental.server.start``) in the
job's process; ``tfperf profile --remote HOST:PORT,...`` (or TensorBoard's capture button)
then captures the job while it runs. Nothing runs until a capture is asked for.
"""

from __future__ import annotations


def serve_profiler(port: int) -> int:
    """Start TF's profiler server on ``port`` in this process and return the port.

    Call it once per process, early (before training); each worker of a multi-worker job
    gets a port of its own.
    """
    if not isinstance(port, int) or not 0 < port < 65536:
        raise ValueError(f"serve_profiler needs a TCP port number (1-65535), not {port!r}")
    import tensorflow as tf

    tf.profiler.experimental.server.start(port)
    return port
