"""How each round's official summarizer reads a node power log (mlcommons/logging history).

The energy of a node is `_compute_power_node` of `result_summarizer.py`, which changed between rounds:

- 5f1bd18 (2023-08-01, the v3.1 summarizer): the records in file order; every reading integrated
  until the first `power_measurement_stop`, whose time ends the window.
- 4054425 (2024-05-16, "Set power_measurement_stop to last measurement", in the v4.0 summarizer):
  the window ends at the later of that stop and the last reading integrated. With a9f4839
  (2024-05-30, `conversion_eff` declared in `_compute_power_sw`) this is the code that summarized
  v4.0: master from 2024-05-30 to 2024-09-19 (run on a copy of the v4.0 smc-ac-power and
  smc-dc-power folders, it gives the 24 energies the project computes for them).
- c401ff0 (2024-09-19, "Compute power only in start - stop window", first in 4.1.0-rc4, the v4.1
  summarizer and every one since, the pinned 4.1.68 included): the records sorted by time; only the
  readings between `power_measurement_start` and `power_measurement_stop` are integrated. A stop
  stamped with the start's time leaves no reading and a window of 0 ms: the summarizer stops
  (ZeroDivisionError) and the result has no energy.
"""

from __future__ import annotations

#: The first round whose summarizer sorts the records and keeps the start-stop window (c401ff0).
FIRST_WINDOWED = (4, 1)
#: The first round whose summarizer ends the window at the last reading when later (4054425).
FIRST_LAST_READING = (4, 0)


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:2] if part.isdigit())


def reads_in_file_order(version: str) -> bool:
    """Whether the round's summarizer reads a node log in file order (v4.0 and before)."""
    return _key(version) < FIRST_WINDOWED


def stops_at_last_reading(version: str) -> bool:
    """Whether the round's summarizer ends the window at the last reading when it is later than the stop."""
    return _key(version) >= FIRST_LAST_READING


def summarizer_of(version: str) -> str:
    """The mlperf-logging code that computes the round's energy, for messages."""
    if reads_in_file_order(version):
        return (
            f"the v{version.rsplit('.', 1)[0]} summarizer (records in file order"
            + (", the window ending at the last reading" if stops_at_last_reading(version) else "")
            + ")"
        )
    return f"the v{version.rsplit('.', 1)[0]} summarizer (readings between start and stop, in time order)"
