"""The five models the memory benchmark predicts and measures (benchmarks/bench_memory.py):
a CNN, an RNN (LSTM), a Transformer block, an MLP with a large embedding, and the article's
case study (§5.2: the weighted sum over a window). Each ``build(name, batch)`` returns a
step (a ``tf.function``) and its inputs with ``batch`` rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MODELS = ("cnn", "rnn", "transformer", "embedding", "case_study")


def _train_step(model: Any, loss: Callable[[Any, Any], Any]) -> Any:
    import keras
    import tensorflow as tf

    opt = keras.optimizers.Adam()

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            value = loss(y, model(x, training=True))
        grads = tape.gradient(value, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return value

    return step


def build(name: str, batch: int) -> tuple[Any, tuple[Any, ...]]:
    import keras
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(0)
    layers = keras.layers

    def mse(y: Any, p: Any) -> Any:
        return tf.reduce_mean((tf.cast(p, tf.float32) - y) ** 2)

    if name == "cnn":
        m = keras.Sequential([keras.Input((64, 64, 3)),
                              layers.Conv2D(32, 3, padding="same", activation="relu"),
                              layers.MaxPooling2D(),
                              layers.Conv2D(64, 3, padding="same", activation="relu"),
                              layers.GlobalAveragePooling2D(), layers.Dense(10)])
        x, y = rng.random((batch, 64, 64, 3)), rng.random((batch, 10))
    elif name == "rnn":
        m = keras.Sequential([keras.Input((50, 32)), layers.LSTM(128), layers.Dense(1)])
        x, y = rng.random((batch, 50, 32)), rng.random((batch, 1))
    elif name == "transformer":
        inp = keras.Input((64, 128))
        h = layers.LayerNormalization()(inp + layers.MultiHeadAttention(4, 32)(inp, inp))
        f = layers.Dense(128)(layers.Dense(512, activation="relu")(h))
        m = keras.Model(inp, layers.LayerNormalization()(h + f))
        x = rng.random((batch, 64, 128))
        y = rng.random((batch, 64, 128))
    elif name == "embedding":
        m = keras.Sequential([keras.Input((20,), dtype="int32"), layers.Embedding(200_000, 64),
                              layers.GlobalAveragePooling1D(),
                              layers.Dense(256, activation="relu"), layers.Dense(1)])
        x = rng.integers(0, 200_000, (batch, 20)).astype(np.int32)
        y = rng.random((batch, 1))
        return _train_step(m, mse), (tf.constant(x), tf.constant(y, tf.float32))
    elif name == "case_study":
        @tf.function
        def weighted(samples, weights):  # §5.2: materialises [batch, 500, 128]
            return tf.reduce_sum(samples * tf.reshape(weights, [1, -1, 1]), axis=1)

        s, w = rng.random((batch, 500, 128)), rng.random((500,))
        return weighted, (tf.constant(s, tf.float32), tf.constant(w, tf.float32))
    else:
        raise ValueError(f"unknown model {name!r}; one of {', '.join(MODELS)}")
    return _train_step(m, mse), (tf.constant(x, tf.float32), tf.constant(y, tf.float32))
