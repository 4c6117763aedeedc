"""How the held-out rounds' explain tests read an explanation (shared by the test modules
here): the first cause of a log and the words it leads with."""

from __future__ import annotations

from tfperf.doctor.explainer import Cause, explain_log


def first_cause(text: str) -> tuple[Cause, str]:
    """The first cause ``explain`` finds in ``text`` and its lead: the most likely reading of
    a low-confidence cause, else its cause and fix without their "Otherwise:" alternatives."""
    ex = explain_log(text)
    assert ex.causes, ex.verdict
    cause = ex.causes[0]
    lead = (" ".join(cause.likely[0]) if cause.confidence == "low" and cause.likely else
            " ".join(t.split(" Otherwise: ")[0] for t in (cause.cause, cause.fix)))
    return cause, lead


def assert_reads(text: str, label: str, words: str) -> None:
    """``text``'s first cause has ``label`` and leads with a reading that holds ``words``."""
    cause, lead = first_cause(text)
    assert cause.label == label
    assert words in lead
