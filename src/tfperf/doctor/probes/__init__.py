"""One module per fact source. Each probe returns plain facts, never raises, and is bounded
in time: a missing tool is the fact "not found", a hung one "timed out after Ns"."""
