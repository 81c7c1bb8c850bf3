"""Reading a submission's code: which implementation a result came from, and what it says.

MLPerf results carry no pointer to their code, so mlperf-audit traces each
`results/<system>/<benchmark>/` folder to one `benchmarks/<benchmark>/implementations/<name>/`
folder of the same submitter, in this order:

1. the only implementation of that benchmark, if there is one;
2. otherwise the implementation that scores best on: a launch configuration named after the system
   (3 points: `config_<system>.sh`, compared without case and punctuation), its name in the system
   folder's name (2: `h200_ngc24.04_pytorch` -> `pytorch`), its name in the system description's
   `framework` (1: "NeMo NVIDIA Release 24.09" -> `nemo`); a tie is reported (REP004) and broken by
   name order.

The launch configuration for the system is, among the implementation's `config*.sh` files (at its
top or in a `configs/` folder): those named after the system, else those whose name starts with the
system's first word (`config_DGXH100_8x8x48.sh` for `dgxh100_ngc24.04_pytorch`), else those whose
first word ends with it (`config_DGXH200_1x8x32.sh` for `h200_ngc24.04_pytorch`); of several, the
one whose node and accelerator counts match the system description, then the one whose batch
size matches the logs, then the first by name.

Shell configurations are read, not run: top-level `NAME=value` and `export NAME=value` lines (also
`${NAME:-default}`, which gives the default), following `source` of files inside the implementation;
assignments inside `if`/`case`/`for`/`while` blocks and values computed by commands are ignored.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from mlperf_audit import (
    BenchmarkFolder,
    CheckContext,
    FileEntry,
    Implementation,
    Submission,
    SystemDescription,
    open_binary,
)

#: Text files larger than this are not read (configurations and Dockerfiles are a few KiB).
MAX_SOURCE_BYTES = 1 << 20
README_NAMES = re.compile(r"^readme(\.(md|rst|txt|markdown))?$", re.IGNORECASE)
DOCKERFILE_NAMES = re.compile(r"^(dockerfile|containerfile)([._-].*)?$|.*\.dockerfile$", re.IGNORECASE)
#: Other ways to build the environment than a container file.
ENVIRONMENT_NAMES = re.compile(
    r"^(requirements.*\.txt|environment\.ya?ml|conda.*\.ya?ml|setup\.py|pyproject\.toml|.*\.def|.*\.sif|"
    r"singularity.*|apptainer.*|Pipfile(\.lock)?|poetry\.lock|uv\.lock)$",
    re.IGNORECASE,
)
CONFIG_NAMES = re.compile(r"^config.*\.sh$", re.IGNORECASE)

#: Shell variables that launch configurations use, by meaning (NVIDIA's names first).
NODES = ("DGXNNODES", "NNODES", "NUM_NODES", "NODES", "SLURM_NNODES")
ACCELERATORS = ("DGXNGPU", "NGPU", "NUM_GPUS", "GPUS_PER_NODE", "NPROC_PER_NODE", "NUM_ACCELERATORS")
GLOBAL_BATCH = ("GLOBAL_BATCH_SIZE", "GBS", "GLOBAL_BATCHSIZE")
LOCAL_BATCH = ("BATCHSIZE", "BATCH_SIZE", "LOCAL_BATCH_SIZE", "MINIBS", "MICRO_BATCH_SIZE", "TRAIN_BATCH_SIZE")
ACCUMULATION = ("GRADIENT_STEPS", "GRAD_ACCUMULATION_STEPS", "GRADIENT_ACCUMULATION_STEPS", "GA")
MODEL_PARALLEL = (
    ("TP", "TENSOR_MODEL_PARALLEL_SIZE"),
    ("PP", "PIPELINE_MODEL_PARALLEL_SIZE"),
    ("CP", "CONTEXT_PARALLEL_SIZE"),
)
#: Configuration variables compared with a logged hyperparameter.
LOGGED = (
    (("LR", "LEARNING_RATE", "BASE_LR", "OPT_BASE_LR"), "opt_base_learning_rate"),
    (ACCUMULATION, "gradient_accumulation_steps"),
    (("WARMUP_STEPS", "OPT_LEARNING_RATE_WARMUP_STEPS"), "opt_learning_rate_warmup_steps"),
    (("WARMUP_EPOCHS", "OPT_LEARNING_RATE_WARMUP_EPOCHS"), "opt_learning_rate_warmup_epochs"),
)


def read_text(entry: FileEntry) -> str | None:
    """A small text file's content, or None if it cannot be read or is too large."""
    if entry.size_bytes > MAX_SOURCE_BYTES:
        return None
    try:
        with open_binary(entry.fs_path) as stream:
            data = stream.read(MAX_SOURCE_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_SOURCE_BYTES or b"\x00" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def normalized(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def first_word(name: str) -> str:
    return normalized(re.split(r"[_\-.\s]", name.strip("_-. "), maxsplit=1)[0]) if name else ""


# --------------------------------------------------------------------------------------------
# Shell configurations
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Assignment:
    value: str
    path: str
    line: int


_ASSIGNMENT = re.compile(r"^(?:export\s+|declare\s+(?:-x\s+)?|readonly\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_OPENERS = re.compile(r"^(if|case|for|while|until|select)\b|^function\b|^[A-Za-z_][A-Za-z0-9_]*\s*\(\)\s*\{")
_CLOSERS = re.compile(r"^(fi|esac|done|\})\b")
_SOURCE = re.compile(r"^(?:source|\.)\s+(.+)$")
_DEFAULT = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*):?[-=](.*)\}$")


def _value(raw: str, known: dict[str, Assignment]) -> str | None:
    """The literal value of a shell word, or None when only running the shell would tell."""
    raw = raw.strip()
    if not raw or raw.startswith("#"):
        return ""
    try:
        words = shlex.split(raw, comments=True)
    except ValueError:
        return None
    if len(words) != 1:
        return None if words else ""
    word = words[0]
    match = _DEFAULT.match(word)
    if match:  # ${NAME:-default}: the variable from outside, else the default the file gives
        inner = match.group(2)
        return _value(inner, known) if inner.startswith("$") else inner
    reference = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", word)
    if reference:
        earlier = known.get(reference.group(1))
        return earlier.value if earlier else None
    if "$" in word or "`" in word:
        return None
    return word


def parse_shell(
    implementation: Implementation, entry: FileEntry, depth: int = 0, known: dict[str, Assignment] | None = None
) -> dict[str, Assignment]:
    """The variables a configuration sets at its top level (sourced files included)."""
    known = {} if known is None else known
    text = read_text(entry)
    if text is None or depth > 4:
        return known
    nesting = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if _CLOSERS.match(line):
            nesting = max(0, nesting - 1)
            continue
        if _OPENERS.match(line):
            if not re.search(r"\b(fi|esac|done)\s*;?\s*$", line) and not line.endswith("}"):
                nesting += 1
            continue
        if nesting:
            continue
        sourced = _SOURCE.match(line)
        if sourced:
            target = _sourced_file(implementation, entry, sourced.group(1))
            if target is not None:
                parse_shell(implementation, target, depth + 1, known)
            continue
        match = _ASSIGNMENT.match(line)
        if match:
            value = _value(match.group(2), known)
            if value is not None:
                known[match.group(1)] = Assignment(value, entry.path, number)
            else:
                known.pop(match.group(1), None)  # set to something only the shell knows
    return known


def _sourced_file(implementation: Implementation, entry: FileEntry, word: str) -> FileEntry | None:
    """The implementation's file that `source WORD` names (by its file name, wherever the word puts it)."""
    name = word.strip().strip("'\"").rsplit("/", 1)[-1]
    if not name or "$" in name:
        return None
    folder = entry.path.rsplit("/", 1)[0]
    candidates = [f for f in implementation.files if f.path.rsplit("/", 1)[-1] == name]
    candidates.sort(key=lambda f: (f.path.rsplit("/", 1)[0] != folder, f.path))
    return candidates[0] if candidates else None


def described_count(description: SystemDescription, field_name: str) -> float | None:
    """A count the system description gives (it writes them as strings: "number_of_nodes": "1")."""
    value = description.get(field_name)
    return None if value is None or isinstance(value, bool) else number(str(value))


def number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        result = float(value)
    except ValueError:
        return None
    return result if result == result and abs(result) != float("inf") else None


@dataclass(frozen=True)
class LaunchConfig:
    entry: FileEntry
    variables: dict[str, Assignment]

    def first(self, names: tuple[str, ...]) -> tuple[str, Assignment] | None:
        for name in names:
            if name in self.variables and self.variables[name].value != "":
                return name, self.variables[name]
        return None

    def count(self, names: tuple[str, ...]) -> float | None:
        found = self.first(names)
        return number(found[1].value) if found else None

    def global_batch(self) -> BatchSize | None:
        """The global batch size the configuration gives, how it was derived, and where."""
        explicit = self.first(GLOBAL_BATCH)
        value = number(explicit[1].value) if explicit else None
        if explicit and value is not None:
            return BatchSize(value, f"{explicit[0]}={explicit[1].value}", explicit[1])
        local = self.first(LOCAL_BATCH)
        nodes, accelerators = self.first(NODES), self.first(ACCELERATORS)
        if not (local and nodes and accelerators):
            return None
        factors = [local, nodes, accelerators]
        accumulation = self.first(ACCUMULATION)
        if accumulation:
            factors.append(accumulation)
        values = [number(a.value) for _, a in factors]
        if any(v is None for v in values):
            return None
        total = 1.0
        for v in values:
            total *= v  # type: ignore[operator]
        parallel = []
        for names in MODEL_PARALLEL:
            found = self.first(names)
            if found and number(found[1].value):
                total /= number(found[1].value)  # type: ignore[operator]
                parallel.append(f"{found[0]}={found[1].value}")
        formula = " x ".join(f"{name}={a.value}" for name, a in factors)
        if parallel:
            formula += " / (" + " x ".join(parallel) + ")"
        return BatchSize(total, formula, local[1], values[0])


@dataclass(frozen=True)
class BatchSize:
    value: float  # per accelerator times the data-parallel size (or as given)
    formula: str
    assignment: Assignment
    #: The per-accelerator variable's own value: some frameworks (HugeCTR's BATCHSIZE) take the
    #: global batch there, so a value equal to the logged global batch agrees as well.
    as_written: float | None = None

    def agrees(self, logged: float) -> bool:
        return any(
            candidate is not None and math.isclose(candidate, logged, rel_tol=1e-6)
            for candidate in (self.value, self.as_written)
        )


# --------------------------------------------------------------------------------------------
# Dockerfiles
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BaseImage:
    image: str | None  # None when a build argument without default decides it
    line: int
    written: str  # as the FROM line gives it


def base_images(text: str) -> list[BaseImage]:
    """The external images a Dockerfile builds FROM (earlier build stages are not images)."""
    arguments: dict[str, str | None] = {}
    stages: set[str] = set()
    images: list[BaseImage] = []
    joined = re.sub(r"\\\r?\n", " ", text)  # continuation lines; line numbers from the original text
    offsets = _line_numbers(text)
    for index, raw in enumerate(joined.splitlines()):
        line = raw.strip()
        upper = line.upper()
        if upper.startswith("ARG "):
            for item in line[4:].split():
                name, _, default = item.partition("=")
                arguments[name] = default.strip("'\"") if "=" in item else arguments.get(name)
        elif upper.startswith("FROM "):
            words = [w for w in line[5:].split() if not w.startswith("--")]
            if not words:
                continue
            written = words[0]
            if written.lower() not in stages:  # `FROM builder` names an earlier stage, not an image
                images.append(BaseImage(_expand(written, arguments), offsets[index], written))
            if len(words) >= 3 and words[1].upper() == "AS":
                stages.add(words[2].lower())
    return images


def _line_numbers(text: str) -> list[int]:
    """For each logical line (continuations joined), the physical line it starts on."""
    numbers, current, pending = [], 1, False
    for physical, line in enumerate(text.splitlines(), 1):
        if not pending:
            current = physical
            numbers.append(current)
        pending = line.rstrip().endswith("\\")
    return numbers


def _expand(word: str, arguments: dict[str, str | None]) -> str | None:
    unresolved = False

    def replace(match: re.Match[str]) -> str:
        nonlocal unresolved
        name, default = match.group(1) or match.group(3), match.group(2)
        value = arguments.get(name)
        if value:
            return value
        if default is not None:
            return default
        unresolved = True
        return ""

    expanded = re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)", replace, word)
    return None if unresolved else expanded


def unpinned(image: str) -> str | None:
    """Why an image reference is not reproducible, or None when it is pinned."""
    if image.lower() == "scratch" or "@sha256:" in image:
        return None
    name, _, tag = image.rpartition(":") if ":" in image.rsplit("/", 1)[-1] else (image, "", "")
    if not tag:
        return "names no tag, so it means whatever `latest` is on the day of the build"
    if tag.lower() == "latest":
        return "uses the tag `latest`, which moves"
    return None


_RELEASE = re.compile(r"(?<![\d.])(\d{2})\.(\d{2})(?![\d])")


def release(text: str) -> str | None:
    """A YY.MM container release (NVIDIA NGC and similar), e.g. 24.09 in 'pytorch:24.09-py3'."""
    match = _RELEASE.search(text)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def releases(text: str) -> set[str]:
    """Every YY.MM release a text names ("NVIDIA Release 24.09 MxNet, pytorch and 23.09 pytorch")."""
    return {f"{match.group(1)}.{match.group(2)}" for match in _RELEASE.finditer(text)}


# --------------------------------------------------------------------------------------------
# Tracing a result folder to its implementation and launch configuration
# --------------------------------------------------------------------------------------------


@dataclass
class Trace:
    folder: BenchmarkFolder
    submission: Submission
    description: SystemDescription | None = None  # the folder's system description
    implementation: Implementation | None = None
    reason: str = ""
    tied: list[Implementation] = field(default_factory=list)  # other implementations as good as the chosen one
    config: LaunchConfig | None = None
    config_reason: str = ""
    configs_seen: int = 0


def submission_of(folder: BenchmarkFolder, context: CheckContext) -> Submission | None:
    for submission in context.tree.submissions:
        if any(b is folder or b.path == folder.path for b in submission.benchmarks):
            return submission
    return None


def config_files(implementation: Implementation) -> list[FileEntry]:
    result = []
    for entry in implementation.files:
        relative = implementation.relative(entry)
        parts = relative.split("/")
        if CONFIG_NAMES.match(parts[-1]) and (
            len(parts) == 1 or (len(parts) == 2 and parts[0].lower() in ("configs", "config"))
        ):
            result.append(entry)
    return result


def _config_stem(entry: FileEntry) -> str:
    stem = entry.path.rsplit("/", 1)[-1][: -len(".sh")]
    return stem[len("config") :].lstrip("_-.") if stem.lower().startswith("config") else stem


def _names_system(entry: FileEntry, system: str) -> bool:
    stem, wanted = normalized(_config_stem(entry)), normalized(system)
    return bool(stem) and bool(wanted) and (stem == wanted or wanted in stem or stem in wanted)


def trace(
    folder: BenchmarkFolder, submission: Submission, logged_batch: float | None = None, configs: bool = True
) -> Trace:
    """The implementation a result folder came from and, with `configs`, its launch configuration."""
    description = submission.system(folder.system) if folder.system else None
    result = Trace(folder, submission, description)
    system = folder.system or ""
    candidates = [i for i in submission.implementations if i.benchmark == folder.benchmark]
    if not candidates:
        return result
    if len(candidates) == 1:
        result.implementation, result.reason = candidates[0], "the only implementation of the benchmark"
    else:
        framework = str(description.get("framework") or "") if description is not None else ""
        tokens = {normalized(t) for t in re.split(r"[_\-.\s]+", system) if t}

        def score(implementation: Implementation) -> tuple[int, list[str]]:
            points, why = 0, list[str]()
            if any(_names_system(entry, system) for entry in config_files(implementation)):
                points, why = points + 3, why + ["a launch configuration is named after the system"]
            if normalized(implementation.name) in tokens:
                points, why = points + 2, why + ["the system folder's name contains its name"]
            if normalized(implementation.name) and normalized(implementation.name) in normalized(framework):
                points, why = points + 1, why + ["the system's framework names it"]
            return points, why

        scored = sorted(((score(i), i) for i in candidates), key=lambda item: (-item[0][0], item[1].name))
        (best, why), chosen = scored[0]
        result.implementation = chosen
        result.tied = [i for (points, _), i in scored[1:] if points == best]
        result.reason = (
            "; ".join(why or ["no implementation names the system"]) + f"; {len(candidates)} implementations"
        )
    if configs:
        _choose_config(result, description, logged_batch)
    return result


def _choose_config(result: Trace, description: SystemDescription | None, logged_batch: float | None) -> None:
    assert result.implementation is not None
    system = result.folder.system or ""
    files = config_files(result.implementation)
    result.configs_seen = len(files)
    named = [f for f in files if _names_system(f, system)]
    reason = "named after the system"
    word = first_word(system)
    if not named and len(word) >= 2:
        named = [f for f in files if first_word(_config_stem(f)) == word]
        reason = f"its name starts with the system's first word {word!r}"
    if not named and len(word) >= 2:  # NVIDIA's config_DGXH200_* for the system h200_ngc24.04_pytorch
        named = [f for f in files if first_word(_config_stem(f)).endswith(word)]
        reason = f"its first word ends with the system's first word {word!r}"
    if not named:
        return
    configs = [LaunchConfig(f, parse_shell(result.implementation, f)) for f in named]
    if len(configs) > 1 and description is not None:
        nodes = described_count(description, "number_of_nodes")
        accelerators = described_count(description, "accelerators_per_node")
        fitting = [c for c in configs if c.count(NODES) == nodes and c.count(ACCELERATORS) == accelerators]
        if fitting:
            configs, reason = fitting, reason + ", and it sets the system's node and accelerator counts"
    if len(configs) > 1 and logged_batch is not None:
        fitting = [c for c in configs if (batch := c.global_batch()) is not None and batch.agrees(logged_batch)]
        if fitting:
            configs, reason = fitting, reason + ", and it gives the logged batch size"
    result.config, result.config_reason = configs[0], reason


@dataclass(frozen=True)
class Logged:
    """The first logged value of a key in a folder's runs, where it is, and it as a number."""

    value: Any
    path: str
    line: int

    @property
    def number(self) -> float | None:
        """The value if the log holds a number there (not a string, a list or a boolean)."""
        if isinstance(self.value, bool) or not isinstance(self.value, (int, float)):
            return None
        return number(str(self.value))


def logged(result_runs: Any, key: str) -> Logged | None:
    for run in result_runs:
        event = run.first(key)
        if event is not None:
            return Logged(event.value, run.path, event.line)
    return None
