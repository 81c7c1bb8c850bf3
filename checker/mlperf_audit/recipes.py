"""The recipe to rerun one result from its package: what `mlperf-audit reproduce` prints.

Part of the public rule API: the `mlperf_audit_reproduce` hook returns a `Recipe` (the built-in
one is the reproducibility pack's). Everything a recipe quotes from the package (a README's
command, a variable's value, a Dockerfile's FROM line) is a `Quoted`: data, shown escaped and
marked as a quotation with where it comes from, never as a command to paste.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Quoted:
    """Text as the package writes it, and where (`path:line`)."""

    text: str
    source: str

    def to_dict(self) -> dict[str, str]:
        return {"text": self.text, "source": self.source}


@dataclass(frozen=True)
class Recipe:
    """How to rerun one result folder, from what its package holds, and what is missing for it."""

    result: str  # the result folder
    benchmark: str
    system: str | None
    division: str | None
    implementation: str | None  # where the code is
    trace: str  # how the folder was traced to its code and configuration
    certainty: str  # of the configuration's trace: certain, likely or none
    framework: str | None  # the system description's
    images: tuple[Quoted, ...] = ()  # container base images (FROM lines; `pinned` says if a digest fixes one)
    pinned: tuple[bool, ...] = ()  # for each image
    ran_in: tuple[Quoted, ...] = ()  # the container the logs say the runs used (`:::DLPAL`)
    config: str | None = None  # the launch configuration file
    variables: tuple[tuple[str, Quoted], ...] = ()  # what it sets
    launch: tuple[Quoted, ...] = ()  # commands from the implementation's README
    selection: Quoted | None = None  # how the launch scripts choose a configuration
    hyperparameters: tuple[tuple[str, Any], ...] = ()  # as the logs record them
    seeds: tuple[tuple[str, Any], ...] = ()  # run file, logged seed
    data: tuple[str, ...] = ()  # the dataset and checkpoints the benchmark needs
    missing: tuple[str, ...] = ()  # what a rerun lacks
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def complete(self) -> bool:
        return not self.missing

    def to_dict(self) -> dict[str, Any]:
        return {
            "result": self.result,
            "benchmark": self.benchmark,
            "system": self.system,
            "division": self.division,
            "implementation": self.implementation,
            "trace": {"how": self.trace, "certainty": self.certainty},
            "framework": self.framework,
            "images": [dict(q.to_dict(), pinned=p) for q, p in zip(self.images, self.pinned)],
            "ran_in": [q.to_dict() for q in self.ran_in],
            "config": self.config,
            "variables": [dict(q.to_dict(), name=name) for name, q in self.variables],
            "selection": self.selection.to_dict() if self.selection else None,
            "launch": [q.to_dict() for q in self.launch],
            "hyperparameters": [{"key": key, "value": value} for key, value in self.hyperparameters],
            "seeds": [{"run": run, "seed": seed} for run, seed in self.seeds],
            "data": list(self.data),
            "missing": list(self.missing),
            "notes": list(self.notes),
            "complete": self.complete,
        }
