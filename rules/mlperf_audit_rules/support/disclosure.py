"""The disclosure keys of 6.x logs: precision, parallelism, micro batch and launch configuration.

Training 6.0 lets runs log them (`REQ: OPTIONAL` in `training_6.0.0/common.yaml`); 6.1 requires
each exactly once: `lowest_numerical_precision_in_linear`, `_in_attn` and `_in_comm` (one of the
formats the rule file lists), `tensor_parallelism`, `pipeline_parallelism`,
`context_parallelism`, `expert_parallelism` and `micro_batch_size` (integers of at least 1) and
`config_filename` (not empty). The compliance rules (CMP) check presence and form; what is read
here is what they cannot cross-check: the values against the system, the launch configuration
and the code.

Values come from the logs and are hostile: a count is a whole number from 1 to
`hardware.MAX_ACCELERATORS` (an integral float too, as `is_integer` accepts), anything else is
not a count here (the compliance rules report its form); a file name is a short string
(`tracing.logged_config_name`, which also lets the trace pick the configuration the logs name).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlperf_audit import Run, hardware

from . import precision, shell

#: The logged parallelism keys and how NeMo/Megatron launch configurations name each degree:
#: the tensor, pipeline and context names are `shell.MODEL_PARALLEL`'s (which divide the batch);
#: expert parallelism shares the data-parallel ranks and divides nothing.
PARALLELISM: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("tensor_parallelism", shell.MODEL_PARALLEL[0]),
    ("pipeline_parallelism", shell.MODEL_PARALLEL[1]),
    ("context_parallelism", shell.MODEL_PARALLEL[2]),
    ("expert_parallelism", ("EP", "EXPERT_MODEL_PARALLEL_SIZE", "EXPERT_MODEL_PARALLEL")),
)
#: The model-parallel degrees whose product holds one replica: the accelerators divide by it.
MODEL_PARALLEL_KEYS = ("tensor_parallelism", "pipeline_parallelism", "context_parallelism")
#: Every disclosure key: what one configuration fixes, so the runs of a result disclose the same (HYP001).
KEYS = (
    "lowest_numerical_precision_in_linear",
    "lowest_numerical_precision_in_attn",
    "lowest_numerical_precision_in_comm",
    *(key for key, _ in PARALLELISM),
    "micro_batch_size",
    "config_filename",
)
#: Launch-configuration names of the micro batch: NeMo's `MICRO_BATCH_SIZE`. Not NVIDIA's `MINIBS`,
#: which is the batch of a data-parallel rank per step in its v4.1 llama2_70b_lora (`MINIBS=2` with
#: the logs' accumulation 2: a micro batch of 1), the micro batch elsewhere.
MICRO_BATCH = ("MICRO_BATCH_SIZE",)

#: Bits of each format `lowest_numerical_precision_*` may name (training_6.1.0/common.yaml).
PRECISION_BITS = {
    "fp64": 64,
    "fp32": 32,
    "tf32": 19,
    "fp16": 16,
    "bfloat16": 16,
    "Graphcore FLOAT 16.16": 16,
    "fp8": 8,
    "int8": 8,
    "uint8": 8,
    "mxfp6": 6,
    "nvfp4": 4,
    "mxfp4": 4,
    "int4": 4,
    "uint4": 4,
}
_TRUTHY = {"1", "true", "yes", "on"}
_FALSY = {"0", "false", "no", "off"}
#: Variables of NeMo and Transformer Engine launch configurations that switch FP4 on for the linear
#: layers, and its format (NVIDIA's v5.1 `config_common_fp4.sh`: `FP4=True`, `FP4_RECIPE="nvfp4"`);
#: FP8's switches are `support.precision`'s.
FP4_SWITCHES = ("FP4", "USE_FP4", "ENABLE_FP4")
FP4_RECIPES = ("FP4_RECIPE",)
FP8_SWITCHES = precision._SWITCHES["FP8"]
#: FP8 dot-product attention (NVIDIA's v5.1 `config_common_fp8attn.sh`: `FP8_DPA=True`).
FP8_ATTENTION_SWITCHES = ("FP8_DPA",)
#: Parameters all-gathered in FP8 (NVIDIA's v5.1 `config_common.sh`: `FP8_PARAM_GATHER=True`).
FP8_COMMUNICATION_SWITCHES = ("FP8_PARAM_GATHER",)


@dataclass(frozen=True)
class Disclosed:
    """A disclosure key's value in a run, and where."""

    key: str
    value: Any
    path: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def disclosed(run: Run, key: str) -> Disclosed | None:
    event = run.first(key)
    return None if event is None else Disclosed(key, event.value, run.path, event.line)


def count(value: Any) -> int | None:
    """A logged degree or batch as a whole number from 1 to `hardware.MAX_ACCELERATORS`, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not value.is_integer():  # NaN and the infinities included
        return None
    return int(value) if 1 <= value <= hardware.MAX_ACCELERATORS else None


def counted(run: Run, key: str) -> tuple[Disclosed, int] | None:
    found = disclosed(run, key)
    if found is None:
        return None
    value = count(found.value)
    return None if value is None else (found, value)


def bits(value: Any) -> int | None:
    """The bits of a logged precision format, None for anything the rule file does not list."""
    return PRECISION_BITS.get(value) if isinstance(value, str) else None


def switch(config: shell.LaunchConfig, names: tuple[str, ...]) -> tuple[bool, shell.Assignment, str] | None:
    """Whether the configuration switches a feature on (True) or off (False), by the first of
    `names` it sets to a boolean, with the assignment and the name."""
    for name in names:
        assignment = config.variables.get(name)
        if assignment is None:
            continue
        value = assignment.value.strip("'\"").lower()
        if value in _TRUTHY or value in _FALSY:
            return value in _TRUTHY, assignment, name
    return None
