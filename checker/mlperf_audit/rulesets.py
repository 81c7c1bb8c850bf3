"""The rounds mlperf-audit supports, described from the installed mlperf-logging's own data.

A ruleset is named `training-X.Y.Z`. Its allowed benchmarks and required run counts come from
`mlperf_logging.benchmark_meta`, its compliance rules from `compliance_checker/training_X.Y.Z/`
and its reference convergence points from `rcp_checker/training_X.Y.Z/`; nothing is copied.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from mlperf_logging import benchmark_meta

USAGE = "training"
SUPPORTED = ("training-4.0.0", "training-4.1.0", "training-5.0.0", "training-5.1.0")
DEFAULT = "training-4.1.0"
#: What a benchmark name can look like (`llama2_70b_lora`); anything else names no rule or RCP file.
BENCHMARK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")


@dataclass(frozen=True)
class Round:
    name: str  # e.g. "training-4.1.0"
    usage: str  # "training"
    version: str  # "4.1.0"
    benchmarks: tuple[str, ...]  # allowed benchmark folder names
    run_counts: dict[str, int]  # required result files per benchmark

    @property
    def compliance_dir(self) -> Path:
        return Path(str(resources.files("mlperf_logging.compliance_checker"))) / f"{self.usage}_{self.version}"

    @property
    def rcp_dir(self) -> Path:
        return Path(str(resources.files("mlperf_logging.rcp_checker"))) / f"{self.usage}_{self.version}"

    def required_runs(self, benchmark: str) -> int | None:
        return self.run_counts.get(benchmark)

    def olympic_drop(self, benchmark: str) -> int:
        """Runs dropped from each end by olympic scoring (and failures tolerated)."""
        return 4 if benchmark == "unet3d" else 1

    def has_rcps(self, benchmark: str) -> bool:
        # The name comes from the logs: only a plain benchmark name can name an RCP file.
        if not BENCHMARK_NAME.fullmatch(benchmark):
            return False
        return (self.rcp_dir / f"rcps_{benchmark}.json").is_file()


@cache
def get(name: str) -> Round:
    """The round named `name`; raises ValueError for an unsupported one."""
    if name not in SUPPORTED:
        raise ValueError(f"unsupported ruleset {name!r}; supported: {', '.join(SUPPORTED)}")
    usage, version = name.split("-", 1)
    benchmarks = tuple(dict.fromkeys(benchmark_meta.get_allowed_benchmarks(usage, version)))
    counts = benchmark_meta.get_result_file_counts(usage)
    return Round(name, usage, version, benchmarks, {b: counts[b] for b in benchmarks if b in counts})
