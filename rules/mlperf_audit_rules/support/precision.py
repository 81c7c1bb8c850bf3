"""The arithmetic precision a result evidently trained in, from its launch configuration.

The logs and the system description do not say which precision a run's matrix products used; the
implementation's configuration often does: MaxText's `quantization=int8` (Google's TPU v5p gpt3
launch scripts), NeMo's and Transformer Engine's `FP8=True`, `FP8_HYBRID=True`, `--fp8`. Utilisation
(AUD002, AUD003) is measured against the peak of that precision when the result is traced to its
configuration with certainty, else against the best peak the accelerator offers, and says which.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mlperf_audit import BenchmarkResult, CheckContext, hardware

from . import sources

_TRUTHY = {"1", "true", "yes", "on", "hybrid", "e4m3"}
#: Active (not commented) text that switches a lower precision on.
_TEXT = (
    ("INT8", re.compile(r"\bquantization\s*[=:]\s*['\"]?int8\b|--int8\b|\bint8_training\s*[=:]\s*(?:1|true)\b", re.I)),
    ("FP8", re.compile(r"--fp8\b(?![-_])|\bfp8\s*[=:]\s*['\"]?(?:1|true|hybrid|e4m3)\b", re.I)),
)


@dataclass(frozen=True)
class Evidence:
    precision: str  # "INT8", "FP8"
    why: str  # where the configuration says so


def evident(result: BenchmarkResult, context: CheckContext) -> Evidence | None:
    """What the result's launch configuration, traced with certainty, says about its precision."""
    submission = sources.submission_of(result.folder, context)
    if submission is None or not submission.source_dirs:
        return None
    trace = context.memo(result, "rep-trace", lambda: sources.trace(result.folder, submission, result.runs))
    if trace.config is None or trace.certainty is not sources.Certainty.CERTAIN:
        return None
    name = trace.config.entry.path.rsplit("/", 1)[-1]
    for precision in ("INT8", "FP8"):
        for variable, assignment in sorted(trace.config.variables.items()):
            if precision in variable.upper() and assignment.value.strip("'\"").lower() in _TRUTHY:
                return Evidence(precision, f"{assignment.path.rsplit('/', 1)[-1]} sets {variable}={assignment.value}")
    text = sources.read_text(trace.config.entry) or ""
    active = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    for precision, pattern in _TEXT:
        match = pattern.search(active)
        if match:
            return Evidence(precision, f"{name} sets {match.group(0).strip()}")
    return None


@dataclass(frozen=True)
class Peak:
    tflops: float
    precision: str
    why: str

    def describe(self) -> str:
        return f"{self.precision} peak {self.tflops:g} TFLOP/s ({self.why})"


def peak_for(accelerator: hardware.Accelerator, evidence: Evidence | None) -> Peak | None:
    """The peak a result is held to: that of the precision it evidently used, else the best one."""
    if evidence is not None:
        value = accelerator.peak(evidence.precision)
        if value is not None:
            return Peak(value, evidence.precision, evidence.why)
    best, precision = accelerator.best_peak_tflops, accelerator.best_precision
    if best is None or precision is None:
        return None
    why = (
        f"the package names {evidence.precision}, whose peak the hardware reference lacks; the best it offers"
        if evidence is not None
        else "the best the accelerator offers: neither the logs nor a launch configuration traced with certainty "
        "say which precision ran"
    )
    return Peak(best, precision, why)
