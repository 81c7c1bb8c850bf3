"""Support for rule packs: the dataset constants of every round and benchmark (`data/constants.json`).

`bench/constants.py` generates the data: per round and benchmark, the reference value of each
dataset constant (`train_samples`, `eval_samples`), its source and what the published folders log.
The consistency pack holds logs to it; the forensic pack reads the evaluation schedules.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def dataset_constants() -> dict[str, Any]:
    """`data/constants.json` (bench/constants.py): per round and benchmark, the reference values of the
    dataset constants, their source and what the published folders log."""
    data = json.loads(resources.files("mlperf_audit_rules").joinpath("data/constants.json").read_text())
    return data if isinstance(data, dict) else {}
