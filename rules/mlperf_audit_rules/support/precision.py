"""The arithmetic precision a result evidently trained in, from its launch configuration.

The logs and the system description do not say which precision a run's matrix products used; the
implementation's configuration often does: MaxText's `quantization=int8` (Google's TPU v5p gpt3
launch scripts), NeMo's and Transformer Engine's `FP8=True`, `FP8_HYBRID=True`, `--fp8`, and
`FP4=True` (NVIDIA's v5.1 NVFP4 recipes). Utilisation
(AUD002, AUD003) is measured against the peak of that precision when the result is traced to its
configuration with certainty, else against the best peak the accelerator offers, and says which.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mlperf_audit import BenchmarkResult, CheckContext, hardware

from . import code_text, tracing

_TRUTHY = {"1", "true", "yes", "on"}
#: Variables that switch a precision on (NeMo, Transformer Engine and MaxText names); others that
#: merely mention it (`FP8_AMAX_HISTORY=1`, `DISABLE_FP8=1`) say nothing.
_SWITCHES = {
    "FP8": ("FP8", "USE_FP8", "ENABLE_FP8", "FP8_ENABLED", "FP8_TRAINING"),
    "INT8": ("INT8", "USE_INT8", "ENABLE_INT8", "INT8_TRAINING"),
    # NVIDIA's v5.1 llama31_405b NVFP4 configurations: config_common_fp4.sh sets FP4=True
    "FP4": ("FP4", "USE_FP4", "ENABLE_FP4", "FP4_ENABLED", "FP4_TRAINING"),
}
#: Active text that switches a lower precision on: MaxText's `quantization=int8`, a `--fp8` flag.
_TEXT = {
    "INT8": re.compile(r"\bquantization\s*[=:]\s*['\"]?int8\b|--int8\b|\bint8_training\s*[=:]\s*(?:1|true)\b", re.I),
    "FP8": re.compile(r"(?<![\w-])--fp8\b(?![-_])|\bfp8\s*[=:]\s*['\"]?(?:1|true)\b", re.I),
    "FP4": re.compile(r"(?<![\w-])--fp4\b(?![-_])|\bfp4\s*[=:]\s*['\"]?(?:1|true)\b", re.I),
}
#: A shell comment: `#` at the start or after a blank, outside quotes (approximately: enough to
#: drop `x=1  # --fp8`).
_COMMENT = re.compile(r"(^|\s)#.*$")


@dataclass(frozen=True)
class Evidence:
    precision: str  # "FP4", "INT8", "FP8"
    why: str  # where the configuration says so


def evident(result: BenchmarkResult, context: CheckContext) -> Evidence | None:
    """What the result's launch configuration, traced with certainty, says about its precision.
    Where it names several (an `FP8` switch and `quantization=int8`; NVIDIA's NVFP4 recipes set
    `FP4=True` beside `FP8=True`), the one with the higher peak is kept: FP4, then INT8, then FP8."""
    submission = tracing.submission_of(result.folder, context)
    if submission is None or not submission.source_dirs:
        return None
    trace = context.memo(result, "rep-trace", lambda: tracing.trace(result.folder, submission, result.runs))
    if trace.config is None or trace.certainty is not tracing.Certainty.CERTAIN:
        return None
    name = trace.config.entry.path.rsplit("/", 1)[-1]
    text = code_text.read_text(trace.config.entry) or ""
    active = "\n".join(_COMMENT.sub("", line) for line in text.splitlines())
    for precision in ("FP4", "INT8", "FP8"):
        for variable in _SWITCHES[precision]:
            assignment = trace.config.variables.get(variable)
            if assignment is not None and assignment.value.strip("'\"").lower() in _TRUTHY:
                return Evidence(precision, f"{assignment.path.rsplit('/', 1)[-1]} sets {variable}={assignment.value}")
        match = _TEXT[precision].search(active)
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
