"""How much of a package's file the tool reads, for a rule that reads one itself.

The parser never reads more than these limits; a rule that opens a file the model only lists (an
implementation's sources, say) reads it with `read_at_most` and the limit of its own, so a huge or
endless file costs no more than that. A rule pack uses them as ``from mlperf_audit import limits``:
they are reading machinery, not part of the model the rules reason about.
"""

from __future__ import annotations

from .model import read_at_most
from .reading.parser import MAX_FILE_BYTES, MAX_LINE_BYTES

__all__ = ["MAX_FILE_BYTES", "MAX_LINE_BYTES", "read_at_most"]
