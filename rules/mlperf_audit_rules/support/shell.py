"""Shell configurations are read, not run: top-level `NAME=value` and `export NAME=value` lines, split
into words as the shell splits them (quotes, comments, several commands on a line: `export A=32;`
sets 32; also `${NAME:-default}`: the value set earlier, else the default), following `source` of files inside
the implementation; assignments inside `if`/`case`/`for`/`while` blocks and values computed by
commands are ignored.
"""

from __future__ import annotations

import dataclasses
import math
import re
import shlex
from dataclasses import dataclass
from typing import Any

from mlperf_audit import (
    FileEntry,
    Implementation,
    SystemDescription,
    reference,
)

from .code_text import read_text

#: Shell variables that launch configurations use, by meaning (NVIDIA's names first).
NODES = ("DGXNNODES", "NNODES", "NUM_NODES", "NODES", "SLURM_NNODES")
ACCELERATORS = ("DGXNGPU", "NGPU", "NUM_GPUS", "GPUS_PER_NODE", "NPROC_PER_NODE", "NUM_ACCELERATORS")
GLOBAL_BATCH = ("GLOBAL_BATCH_SIZE", "GBS", "GLOBAL_BATCHSIZE")
LOCAL_BATCH = ("BATCHSIZE", "BATCH_SIZE", "LOCAL_BATCH_SIZE", "MINIBS", "MICRO_BATCH_SIZE", "TRAIN_BATCH_SIZE")
ACCUMULATION = ("GRADIENT_STEPS", "GRAD_ACCUMULATION_STEPS", "GRADIENT_ACCUMULATION_STEPS", "GA")
MODEL_PARALLEL = (
    ("TP", "TENSOR_MODEL_PARALLEL_SIZE", "TENSOR_MODEL_PARALLEL"),
    ("PP", "PIPELINE_MODEL_PARALLEL_SIZE", "PIPELINE_MODEL_PARALLEL"),
    ("CP", "CONTEXT_PARALLEL_SIZE", "CONTEXT_PARALLEL"),
)
#: Sequences per sample of a packed dataset (NVIDIA's BERT `*_pack.sh`): the logged global batch
#: counts samples of several sequences, the configuration's batch sequences.
PACKING = ("PACKING_FACTOR",)


# --------------------------------------------------------------------------------------------
# Shell configurations
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Assignment:
    value: str
    path: str
    line: int
    #: Written `NAME=${NAME:-value}`: a default that the launching environment may override.
    default: bool = False


_ASSIGNMENT = re.compile(r"^(?:export\s+|declare\s+(?:-x\s+)?|readonly\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_OPENERS = re.compile(r"^(if|case|for|while|until|select)\b|^function\b|^[A-Za-z_][A-Za-z0-9_]*\s*\(\)\s*\{")
_CLOSERS = re.compile(r"^(fi|esac|done|\})\b")
SOURCE_COMMAND = re.compile(r"^(?:source|\.)\s+(.+)$")
_DEFAULT = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*):?[-=](.*)\}$")


#: Characters of the control operators that end a command outside quotes: `;`, `&&`, `||`, `|`, `&`
#: (not parentheses: `$(nproc)` is one word).
_OPERATORS = ";&|"
_DECLARATIONS = ("export", "declare", "readonly")


def _statements(line: str) -> list[list[str]] | None:
    """The simple commands of one line, as the shell splits them into words (quotes removed, a
    comment dropped), cut at control operators: `export A=1; export B=2 && run` is three commands.
    None when the line does not parse (an unclosed quote)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=_OPERATORS)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    commands: list[list[str]] = [[]]
    try:
        for token in lexer:
            if token and all(character in _OPERATORS for character in token):
                commands.append([])
            else:
                commands[-1].append(token)
    except ValueError:
        return None
    return [words for words in commands if words]


def _assignments(line: str) -> list[tuple[str, str | None]]:
    """The variables a line of a configuration sets, each with its word (None: a value only running
    the shell would give, such as `A=1 command`, or a line that does not parse)."""
    first = _ASSIGNMENT.match(line)
    if not first:
        return []
    statements = _statements(line)
    if statements is None:
        return [(first.group(1), None)]
    found: list[tuple[str, str | None]] = []
    for words in statements:
        if words[0] in _DECLARATIONS:
            words = [word for word in words[1:] if not word.startswith("-")]  # `declare -x A=1`
            assigned = [word.partition("=") for word in words if _NAME.match(word)]
            found.extend((name, value) for name, _, value in assigned)
        elif all(_NAME.match(word) for word in words):  # `A=1 B=2` sets both
            found.extend((name, value) for name, _, value in (word.partition("=") for word in words))
        elif _NAME.match(words[0]):  # `A=1 command`: what A holds after it is not read here
            found.append((words[0].partition("=")[0], None))
    return found


_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _value(raw: str, known: dict[str, Assignment], depth: int = 0) -> str | None:
    """The literal value of a shell word written `raw`, or None when only running the shell would tell."""
    raw = raw.strip()
    if depth > 8 or len(raw) > 4096:  # nested defaults deeper than any configuration writes
        return None
    if not raw or raw.startswith("#"):
        return ""
    try:
        words = shlex.split(raw, comments=True)
    except ValueError:
        return None
    if len(words) != 1:
        return None if words else ""
    return _word_value(words[0], known, depth)


def _word_value(word: str, known: dict[str, Assignment], depth: int = 0) -> str | None:
    """The literal value of one shell word (quotes already removed), or None when only running the
    shell would tell."""
    if len(word) > 4096:
        return None
    match = _DEFAULT.match(word)
    if match:  # ${NAME:-default}: the value set earlier (a configuration before the common file it
        # sources), else the default the file gives (the variable from outside is unknown)
        earlier = known.get(match.group(1))
        if earlier is not None and earlier.value != "":
            return earlier.value
        inner = match.group(2)
        return _value(inner, known, depth + 1) if inner.startswith("$") else inner
    reference = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", word)
    if reference:
        earlier = known.get(reference.group(1))
        return earlier.value if earlier else None
    if "$" in word or "`" in word:
        return None
    return word


#: How many files one configuration may source in all (its own included): a loop or a fan-out of
#: `source` lines is read once per file, and no more than this many files.
MAX_SOURCED = 32


def parse_shell(
    implementation: Implementation,
    entry: FileEntry,
    depth: int = 0,
    known: dict[str, Assignment] | None = None,
    seen: set[str] | None = None,
) -> dict[str, Assignment]:
    """The variables a configuration sets at its top level (sourced files included, each once)."""
    known = {} if known is None else known
    seen = set() if seen is None else seen
    if depth > 4 or entry.path in seen or len(seen) >= MAX_SOURCED:
        return known
    seen.add(entry.path)
    text = read_text(entry)
    if text is None:
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
        sourced = SOURCE_COMMAND.match(line)
        if sourced:
            target = _sourced_file(implementation, entry, sourced.group(1))
            if target is not None:
                parse_shell(implementation, target, depth + 1, known, seen)
            continue
        for name, word in _assignments(line):
            default = _DEFAULT.match(word) if word is not None else None
            earlier = known.get(name)
            if default and default.group(1) == name and earlier is not None and earlier.value != "":
                continue  # `X=${X:-default}` keeps the value set earlier, where it was set
            value = _word_value(word, known) if word is not None else None
            if value is not None:
                own_default = bool(default and default.group(1) == name)
                known[name] = Assignment(value, entry.path, number, own_default)
            else:
                known.pop(name, None)  # set to something only the shell knows
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
    count = description.count(field_name, signed=True)  # a negative one disagrees with any configuration
    return None if count is None else float(count)


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

    def global_batch(self, benchmark: str = "") -> BatchSize | None:
        """The global batch size the configuration gives for `benchmark`, how it was derived, and
        where (see `BATCH_MEANINGS`)."""
        option = reference.benchmarks.facts(benchmark).global_batch_option
        if option is not None:  # the framework's own option gives it (maskrcnn's SOLVER.IMS_PER_BATCH)
            return self.option_batch(option)
        explicit = self.first(GLOBAL_BATCH)
        value = number(explicit[1].value) if explicit else None
        if explicit and value is not None:
            return BatchSize(value, f"{explicit[0]}={explicit[1].value}", explicit[1])
        local = self.first(LOCAL_BATCH)
        nodes, accelerators = self.first(NODES), self.first(ACCELERATORS)
        by_name = name_scale(self.entry)  # NVIDIA's names give the scale the launcher's defaults leave out
        if nodes is None and by_name.nodes is not None:
            nodes = ("nodes in its name", Assignment(f"{by_name.nodes:g}", self.entry.path, 0))
        if accelerators is None and by_name.accelerators is not None:
            accelerators = ("accelerators in its name", Assignment(f"{by_name.accelerators:g}", self.entry.path, 0))
        if not (local and nodes and accelerators):
            return None
        factors = [local, nodes, accelerators]
        accumulation = self.first(ACCUMULATION)
        if accumulation and not reference.benchmarks.facts(benchmark).batch_includes_accumulation:
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
        # an overridable default among the batch's own factors (the scale is REP010's, against the description)
        defaults = any(a.default for name, a in factors if name not in NODES + ACCELERATORS)
        if parallel:
            formula += " / (" + " x ".join(parallel) + ")"
        if reference.benchmarks.facts(benchmark).batch_meaning_unknown:
            return None  # not compared: what a variable means there is not known
        if reference.benchmarks.facts(benchmark).batch_counts_packed_sequences:
            rate = self.packing_rate()
            if rate is not None and rate != 1:
                return BatchSize(
                    total * rate, formula + f" x {rate:g} sequences per packed sample", local[1], values[0]
                )
            if rate is None and self.packed():
                # packed, but how many sequences a sample averages is not written where it can be read
                return BatchSize(
                    total, formula + " x ~2 (packed)", local[1], values[0], factors=(1.0, 2.0), certain=False
                )
        return BatchSize(total, formula, local[1], values[0], certain=not defaults)

    def option_batch(self, option: str) -> BatchSize | None:
        """The global batch that `OPTION value` in the configuration's own text gives (the last one
        written, as a later word overrides an earlier one on a command line); None when the file
        does not write the option with a literal number once or more (then what it runs with is not
        known here)."""
        text = read_text(self.entry)
        if text is None:
            return None
        found = None
        pattern = re.compile(
            r"(?<![A-Za-z0-9_.])" + re.escape(option) + r"[ \t=]+([0-9]+(?:\.[0-9]+)?)(?![0-9A-Za-z_.])"
        )
        for line_number, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("#"):
                continue
            for match in pattern.finditer(line):
                found = (match.group(1), line_number)
        if found is None:
            return None
        value = number(found[0])
        if value is None:
            return None
        return BatchSize(value, f"{option} {found[0]}", Assignment(found[0], self.entry.path, found[1]))

    def packed(self) -> bool:
        """Whether the run may read a packed dataset (`--packed_samples`, a `PACKING_FACTOR`, `_pack` in the name)."""
        extra = self.variables.get("EXTRA_PARAMS")
        return (
            "pack" in self.entry.path.rsplit("/", 1)[-1].lower()
            or self.first(PACKING) is not None
            or (extra is not None and "packed_samples" in extra.value)
        )

    def packing_rate(self) -> float | None:
        """Sequences per sample in NVIDIA's BERT, as its `run_pretraining.py` logs the global batch
        (`train_batch_size * gradient_accumulation_steps * n_gpu * average_packing_rate`, the rate 2
        by default with `--packed_samples`, else 1): from the `EXTRA_PARAMS` it passes, None when
        they are not written out (then whether the data is packed is only guessed from the name)."""
        extra = self.variables.get("EXTRA_PARAMS")
        if extra is None:
            return None
        if "--packed_samples" not in extra.value:
            return None if self.packed() else 1.0
        match = re.search(r"--average_packing_rate[= ]([0-9]+)", extra.value)
        if match is None:
            return 2.0
        return number(match.group(1))  # None for a rate of hundreds of digits: a float's infinity


@dataclass(frozen=True)
class BatchSize:
    value: float  # per accelerator times the data-parallel size (or as given)
    formula: str
    assignment: Assignment
    #: The per-accelerator variable's own value: some frameworks (HugeCTR's BATCHSIZE) take the
    #: global batch there, so a value equal to the logged global batch agrees as well.
    as_written: float | None = None
    #: The logged batch may be the value times one of these (packed samples hold ~2 sequences).
    factors: tuple[float, ...] = (1.0,)
    #: Whether the derivation is known exactly; a disagreement of an uncertain one is a warning.
    certain: bool = True

    def agrees(self, logged: float) -> bool:
        candidates = [self.value * factor for factor in self.factors] + [self.as_written]
        return any(candidate is not None and math.isclose(candidate, logged, rel_tol=1e-6) for candidate in candidates)


@dataclass(frozen=True)
class Comparison:
    """A configuration's value set against what the logs record, with what it means."""

    key: str  # the logged key
    said: Assignment  # where the configuration sets it
    what: str  # "LR=0.0029", or the derivation
    logged: Logged
    agrees: bool
    certain: bool  # the meaning is known exactly: a disagreement can be an error
    #: The configuration's variable that gives the value ("" when it is an option in a text).
    variable: str = ""


#: Configuration variables compared with a logged hyperparameter, by what they mean:
#: (variables, logged key, benchmarks where the meaning holds (None: every one but those whose
#: reference facts list the key in `other_meaning_keys`), certain). A variable whose meaning is not
#: known for a benchmark is not compared.
LOGGED_MEANINGS: tuple[tuple[tuple[str, ...], str, frozenset[str] | None, bool], ...] = (
    (("LR", "LEARNING_RATE", "OPT_BASE_LR"), "opt_base_learning_rate", None, True),
    (ACCUMULATION, "gradient_accumulation_steps", None, True),
    (("WARMUP_STEPS", "OPT_LEARNING_RATE_WARMUP_STEPS"), "opt_learning_rate_warmup_steps", None, False),
    (("WARMUP_EPOCHS", "OPT_LEARNING_RATE_WARMUP_EPOCHS"), "opt_learning_rate_warmup_epochs", None, False),
)


def compare_with_logs(config: LaunchConfig, benchmark: str, runs: Any) -> list[Comparison]:
    """Each value of `config` whose meaning is known for `benchmark`, against the first run logging it."""
    found: list[Comparison] = []
    batch = config.global_batch(benchmark)
    logged_batch = logged(runs, "global_batch_size")
    if batch is not None and logged_batch is not None and logged_batch.number is not None:
        found.append(
            Comparison(
                "global_batch_size",
                batch.assignment,
                f"a global batch size of {batch.value:g} ({batch.formula})",
                logged_batch,
                batch.agrees(logged_batch.number),
                batch.certain,
                named.group(1) if (named := re.match(r"([A-Za-z_][A-Za-z0-9_]*)=", batch.formula)) else "",
            )
        )
    rate = logged(runs, "opt_base_learning_rate")
    base = config.first(("BASE_LR",))
    if (
        reference.benchmarks.facts(benchmark).per_sample_learning_rate
        and base
        and rate
        and rate.number is not None
        and logged_batch
        and logged_batch.number
    ):
        per_sample = number(base[1].value)
        if per_sample is not None:
            value = per_sample * logged_batch.number
            found.append(
                Comparison(
                    "opt_base_learning_rate",
                    base[1],
                    f"a learning rate of {value:g} (BASE_LR="
                    f"{base[1].value} per sample x the logged global batch {logged_batch.number:g})",
                    rate,
                    math.isclose(rate.number, value, rel_tol=1e-6, abs_tol=1e-15),
                    True,
                    "BASE_LR",
                )
            )
    for names, key, benchmarks, certain in LOGGED_MEANINGS:
        if (benchmarks is not None and benchmark not in benchmarks) or key in reference.benchmarks.facts(
            benchmark
        ).other_meaning_keys:
            continue
        variable = config.first(names)
        said = number(variable[1].value) if variable else None
        recorded = logged(runs, key)
        if variable is None or said is None or recorded is None or recorded.number is None:
            continue
        agrees = math.isclose(recorded.number, said, rel_tol=1e-6, abs_tol=1e-12)
        found.append(
            Comparison(key, variable[1], f"{variable[0]}={variable[1].value}", recorded, agrees, certain, variable[0])
        )
    # a default (`X=${X:-value}`) is what a plain launch sets, but the environment may set another
    return [dataclasses.replace(c, certain=False) if c.said.default else c for c in found]


@dataclass(frozen=True)
class Scale:
    nodes: float | None
    accelerators: float | None

    def known(self) -> bool:
        return self.nodes is not None and self.accelerators is not None

    def __str__(self) -> str:
        def shown(value: float | None) -> str:
            return "?" if value is None else f"{value:g}"

        return f"{shown(self.nodes)}x{shown(self.accelerators)}"


def config_stem(entry: FileEntry) -> str:
    stem = entry.path.rsplit("/", 1)[-1][: -len(".sh")]
    return stem[len("config") :].lstrip("_-.") if stem.lower().startswith("config") else stem


#: NVIDIA's scale in a configuration's name: <nodes>x<accelerators>x... (`DGXH100_8x8x1xtp4pp1cp2`,
#: `DGXB200_001x08x032`, `C885a_001x08x032`).
NAME_SCALE = re.compile(r"(?:^|[_\-.])0*(\d{1,5})x0*(\d{1,3})(?=x|[_\-.]|$)", re.IGNORECASE)


def name_scale(entry: FileEntry) -> Scale:
    match = NAME_SCALE.search(config_stem(entry))
    return Scale(float(match.group(1)), float(match.group(2))) if match else Scale(None, None)


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
