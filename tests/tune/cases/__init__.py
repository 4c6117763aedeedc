"""tune's cases: small user files, each with a function to tune (the baseline variant), its
inputs and the variants a person would write by hand. tests/tune and benchmarks/bench_tune.py
share them. Each file sets ``SMALL`` (test shapes) and ``CALLS`` (None: rank by the steady
state; N: by the time of N calls, first call included)."""
