"""What the one answer costs: `tfperf profile SCRIPT` against `python SCRIPT` on an eager
training script shaped like the VAE tutorial of issue 30, and what `--try-fixes` adds.

The script (written to a temporary folder; synthetic data, no download) trains a VAE-shaped
model (784 → 512 → 20 → 512 → 784 dense layers, Adam, GradientTape, a discarded
`tf.clip_by_norm` per gradient) for `--steps` batches in an eager Python loop, and prints the
loop's own time. Each round runs, one after the other in fresh processes:

* plain: `python train.py`;
* profiled: `tfperf profile train.py --json` (watch + a TF profiler capture, the causes);
* profiled without capture: `--no-capture`.

Figures: the training loop's time as the script measures it, and each process's wall time,
medians over rounds, and the median of per-round ratios (load drifting during the run hits
the three alike). Then one `--try-fixes` run: its wall time beyond the profile, and the gain
it measured for `@tf.function` on the step (its own median and interval).

Run: .venv/bin/python benchmarks/bench_profile_why.py [--rounds N] [--steps N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

SCRIPT = """\
import time
import numpy as np
import tensorflow as tf

tf.random.set_seed(22)
np.random.seed(22)
x_train = np.random.rand({samples}, 784).astype(np.float32)
image_size, h_dim, z_dim, batch_size = 784, 512, 20, 100


class VAE(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.fc1 = tf.keras.layers.Dense(h_dim)
        self.fc2 = tf.keras.layers.Dense(z_dim)
        self.fc3 = tf.keras.layers.Dense(z_dim)
        self.fc4 = tf.keras.layers.Dense(h_dim)
        self.fc5 = tf.keras.layers.Dense(image_size)

    def call(self, x):
        h = tf.nn.relu(self.fc1(x))
        mu, log_var = self.fc2(h), self.fc3(h)
        z = mu + tf.random.normal(tf.shape(mu)) * tf.exp(log_var * 0.5)
        return self.fc5(tf.nn.relu(self.fc4(z))), mu, log_var


model = VAE()
optimizer = tf.keras.optimizers.Adam(1e-3)
dataset = tf.data.Dataset.from_tensor_slices(x_train).shuffle(500).batch(batch_size)
t0, c0 = time.perf_counter(), time.process_time()
for epoch in range(1):
    for step, x in enumerate(dataset):
        with tf.GradientTape() as tape:
            logits, mu, log_var = model(x)
            rec = tf.reduce_sum(tf.nn.sigmoid_cross_entropy_with_logits(labels=x, logits=logits))
            kl = -0.5 * tf.reduce_sum(1. + log_var - tf.square(mu) - tf.exp(log_var), axis=-1)
            loss = rec / batch_size + tf.reduce_mean(kl)
        gradients = tape.gradient(loss, model.trainable_variables)
        for g in gradients:
            tf.clip_by_norm(g, 15)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
print("LOOP_S", time.perf_counter() - t0, time.process_time() - c0, flush=True)
"""


def _run(cmd: list[str], cwd: Path) -> tuple[float, float, float, str]:
    """(wall s, the loop's own wall s and CPU s, stdout) of one process."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - t0
    text = proc.stdout + proc.stderr
    loop, cpu = next(((float(line.split()[1]), float(line.split()[2]))
                      for line in text.splitlines() if line.startswith("LOOP_S")),
                     (float("nan"), float("nan")))
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{text[-2000:]}")
    return wall, loop, cpu, proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=60, help="batches the script trains")
    ap.add_argument("--fix-steps", type=int, default=20)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="tfperf-bench-why-"))
    script = folder / "train.py"
    script.write_text(textwrap.dedent(SCRIPT.format(samples=args.steps * 100)))
    tfperf = [sys.executable, "-m", "tfperf"]
    commands = {
        "plain": [sys.executable, str(script)],
        "profile": [*tfperf, "profile", str(script), "--json"],
        "profile --no-capture": [*tfperf, "profile", str(script), "--json", "--no-capture"],
    }
    walls: dict[str, list[float]] = {k: [] for k in commands}
    loops: dict[str, list[float]] = {k: [] for k in commands}
    cpus: dict[str, list[float]] = {k: [] for k in commands}
    for _ in range(args.rounds):
        for name, cmd in commands.items():
            wall, loop, cpu, _ = _run(cmd, folder)
            walls[name].append(wall)
            loops[name].append(loop)
            cpus[name].append(cpu)
    print(f"tfperf profile on a VAE-shaped eager training script ({args.steps} steps), "
          f"median of {args.rounds} rounds (cpu count {os.cpu_count()}, load "
          f"{os.getloadavg()[0]:.1f})")
    print(f"{'run':<22} {'loop':>8} {'ratio':>6} {'loop CPU':>9} {'ratio':>6} "
          f"{'process':>8} {'ratio':>6}")

    def ratio(table: dict[str, list[float]], name: str) -> float:
        return statistics.median(a / b for a, b in zip(table[name], table["plain"],
                                                       strict=True))

    for name in commands:
        print(f"{name:<22} {statistics.median(loops[name]):>7.2f}s {ratio(loops, name):>5.2f}× "
              f"{statistics.median(cpus[name]):>8.2f}s {ratio(cpus, name):>5.2f}× "
              f"{statistics.median(walls[name]):>7.2f}s {ratio(walls, name):>5.2f}×")

    wall, _, _, out = _run([*tfperf, "profile", str(script), "--json", "--no-capture",
                         "--try-fixes", "--fix-steps", str(args.fix_steps)], folder)
    doc = json.loads(out)
    extra = wall - statistics.median(walls["profile --no-capture"])
    print(f"--try-fixes ({args.fix_steps} steps × 2 rounds × 2 sides, child processes): "
          f"{wall:.1f} s in all, {extra:.1f} s beyond the profile")
    for cause in doc["causes"]:
        measured = cause.get("measured")
        if measured:
            low, high = measured["interval"] or (None, None)
            print(f"  {measured['fix']}: {measured['before_step_s'] * 1e3:.1f} ms → "
                  f"{measured['after_step_s'] * 1e3:.1f} ms a step, "
                  f"{measured['speedup']:.2f}× (95 % interval {low:.2f}–{high:.2f}×); "
                  f"results {measured['results']}")
    top = doc["causes"][0] if doc["causes"] else None
    if top:
        print(f"top cause: {top['title']} ({100 * top['share']:.0f} % of the run)")


if __name__ == "__main__":
    main()
