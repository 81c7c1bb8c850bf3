"""The reference layer: one home for each MLPerf fact, as data with a source for each.

- `benchmarks`: per benchmark, the log key that counts progress, the quality key, the olympic drop,
  the RCP special cases, offline evaluation, the work model or why there is none, claim caveats,
  what a reproduction needs and what its batch and learning-rate variables mean
  (`data/benchmarks.json`);
- `accelerators`: per accelerator, family, maker, aliases, peaks, memory and power, and the names
  the official result summarizer shows otherwise than descriptions write them
  (`data/accelerators.json`).

Both files are decoded strictly at first use: an unknown key or a fact without its source is a
`ReferenceDataError`. Code outside this layer asks it and names no benchmark or accelerator itself
(tests/test_reference_literals.py counts what is left).
"""

from . import accelerators, benchmarks
from .benchmarks import Benchmark, Work, facts
from .errors import ReferenceDataError

__all__ = ["Benchmark", "ReferenceDataError", "Work", "accelerators", "benchmarks", "facts"]
