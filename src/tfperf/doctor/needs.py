"""Which CUDA library files the installed TensorFlow will dlopen (decided before it runs)."""

from __future__ import annotations

from tfperf.doctor.facts import Facts


def needed_sonames(facts: Facts) -> list[str]:
    """SONAMEs of the installed GPU build, from the knowledge tables; [] when none apply.

    Read from the package version, not the running TF, so the library probe can run side by
    side with the TF subprocess. Linux only: the probe searches Linux SONAMEs.
    """
    version = facts.tensorflow_version
    if facts.os != "linux" or not version or facts.cpu_only_package:
        return []
    from tfperf.doctor.knowledge import needed_libraries

    return needed_libraries(version, "wsl" if facts.wsl else "linux")
