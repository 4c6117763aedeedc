"""A Keras train step written eagerly: forward, loss, gradients, optimizer update. Stateful:
every candidate gets a fresh model and optimizer from the same seed."""

import tensorflow as tf

import tfperf

SMALL = {"batch": 32, "features": 16, "units": 32}
FULL = {"batch": 256, "features": 64, "units": 256}
CALLS = None
SIZE = dict(SMALL)


@tfperf.inputs
def make():
    tf.keras.utils.set_random_seed(5)
    model = tf.keras.Sequential([tf.keras.Input([SIZE["features"]]),
                                 tf.keras.layers.Dense(SIZE["units"], activation="relu"),
                                 tf.keras.layers.Dense(1)])
    opt = tf.keras.optimizers.SGD(0.01)
    g = tf.random.Generator.from_seed(6)
    return model, opt, g.normal([SIZE["batch"], SIZE["features"]]), g.normal([SIZE["batch"], 1])


@tfperf.variant(baseline=True)
def train_step(model, opt, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    return loss


@tf.function
def hand_tf_function(model, opt, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
    return loss


tfperf.variant(name="hand_tf_function")(hand_tf_function)
