"""Functions whose main op is a dot or a convolution, and their inputs: compiled by XLA for
the cross-check against XLA's own cost analysis (make_xla_capture.py), traced plainly for
tfperf's formulas."""

import tensorflow as tf


def _normal(*shape):
    return lambda: tf.random.stateless_normal(shape, seed=(1, 2))


XLA_CASES = {
    "matmul": (lambda a, b: tf.matmul(a, b), lambda: (_normal(128, 256)(), _normal(256, 64)())),
    "matmul_t": (lambda a, b: tf.matmul(a, b, transpose_b=True),
                 lambda: (_normal(96, 32)(), _normal(48, 32)())),
    "batch_matmul": (lambda a, b: tf.matmul(a, b),
                     lambda: (_normal(8, 64, 32)(), _normal(8, 32, 16)())),
    "einsum": (lambda a, b: tf.einsum("bij,bjk->bik", a, b),
               lambda: (_normal(4, 24, 40)(), _normal(4, 40, 12)())),
    "conv_valid": (lambda x, k: tf.nn.conv2d(x, k, 1, "VALID"),
                   lambda: (_normal(2, 16, 16, 8)(), _normal(3, 3, 8, 16)())),
    "conv_same": (lambda x, k: tf.nn.conv2d(x, k, 1, "SAME"),
                  lambda: (_normal(2, 12, 12, 4)(), _normal(3, 3, 4, 8)())),
    "conv_stride2": (lambda x, k: tf.nn.conv2d(x, k, 2, "SAME"),
                     lambda: (_normal(1, 15, 15, 3)(), _normal(5, 5, 3, 6)())),
}
