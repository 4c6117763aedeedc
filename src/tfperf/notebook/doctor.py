"""``%tfdoctor``: the doctor's facts and checks, as text and (in a notebook) as HTML."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tfperf.core.findings import Finding
from tfperf.notebook import display
from tfperf.notebook.errors import MagicError


@dataclass
class DoctorResult:
    """The doctor's facts and verdicts; shown as its text report or an HTML table."""

    facts: Any
    findings: list[Finding]

    @property
    def exit_status(self) -> int:
        from tfperf.doctor.report import exit_status

        return exit_status(self.findings)

    def text(self) -> str:
        from tfperf.doctor.report import report_text

        return report_text(self.facts, self.findings)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.text())

    def _repr_html_(self) -> str:
        """The doctor's HTML report (facts → verdicts → fixes), as a notebook output."""
        from tfperf.core.html import report_fragment
        from tfperf.doctor.report import report_json

        return report_fragment("doctor", report_json(self.facts, self.findings))

    def to_html(self) -> str:
        """The same as one self-contained HTML page (``tfperf doctor --html``)."""
        from tfperf.doctor.report import report_html

        return report_html(self.facts, self.findings)


def run_doctor(shell: Any, *, compute: bool, timeout: float) -> tuple[DoctorResult, Any]:
    """The doctor's result, and the progress display to show it in."""
    from tfperf.doctor.checks import judge
    from tfperf.doctor.gather import gather
    from tfperf.doctor.probe import GatherOptions

    progress = display.Progress(shell, "tfdoctor")
    progress(0.0, "gathering facts (TensorFlow is imported in a subprocess)")
    try:
        options = GatherOptions(timeout=timeout, tool_timeout=min(10.0, timeout),
                                compute=compute)
        facts = gather(options)
        progress(0.8, "judging")
        findings = judge(facts, compute=compute)
    except KeyboardInterrupt:  # one line, not the probes' thread-pool frames
        progress.close()
        raise MagicError("tfdoctor", "interrupted") from None
    except BaseException:
        progress.close()
        raise
    return DoctorResult(facts, findings), progress
