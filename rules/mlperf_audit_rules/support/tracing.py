"""Reading a submission's code: which implementation and launch configuration a result ran.

MLPerf results carry no pointer to their code, so mlperf-audit traces each
`results/<system>/<benchmark>/` folder as the submitter's own scripts choose, and says how sure
it is (`Certainty`). The implementation is the only one of the benchmark, else the one named
after the system folder, else the one with a configuration named after the system, whose name is
in the system folder's name, or that the description's `framework` names (a tie: REP004, first by
name). A stub whose README points to a sibling (`[pytorch](../pytorch)`) is followed to it. Without
an implementation of the benchmark, one of another benchmark holding the configuration the log
names is taken (code filed under the wrong folder; REP002 still reports the folder missing).

The launch configuration, among the implementation's `config*.sh` (at its top or in `configs/`;
common files that others source are not candidates; Google-style `v5p-16.sh` scripts named like
the system where there is none), is:

1. the one the logs name: 6.x runs log `config_filename` (certain when one candidate has that
   name); NVIDIA-derived `run.sub` scripts print `:::DLPAL ... <DGXSYSTEM>`, and
   source `config_${DGXSYSTEM}.sh` (certain; a configuration that sets DGXSYSTEM itself narrows
   the candidates; one the package lacks makes every other choice at most likely);
2. the one a launch script sources by name (Clemson's `run.sub`: `source config_DGXH100_8x8x72x1.sh`),
   when it is for the system's scale (certain);
3. the one named after the system (`config_<system>.sh`, also with its scale appended: certain);
4. the one for the system's scale, nodes x accelerators per node from its NVIDIA-style name
   (`config_DGXH100_8x8x1xtp4pp1cp2.sh`) or its variables, and accelerator (a name for another
   accelerator family, an H100 file for an H200 system, is likely unless it reproduces the logs);
5. of several for the scale: copies with the same bytes are one recipe (certain); else the only
   one that reproduces the logged values (certain when its name also shares a word with the
   system's, else likely), else name order (likely);
6. none: REP009 says which scales the package holds.

A configuration named after another of the submitter's systems is at most likely. What the logs
are compared with (`compare_with_logs`) has a known meaning per benchmark: the global batch
(per-accelerator batch x nodes x accelerators x gradient accumulation / model parallelism; BERT's
batch already holds the accumulation and, packed, about two sequences per sample; HugeCTR's is
global; unet3d's is not compared), the learning rate (stable diffusion's BASE_LR is per sample:
BASE_LR x the global batch), gradient accumulation, warmups (not exact). A value written as an
overridable default (`X=${X:-value}`) is uncertain: the environment may set another.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import Any, Iterator

from mlperf_audit import (
    BenchmarkFolder,
    CheckContext,
    FileEntry,
    Implementation,
    Submission,
    SystemDescription,
    hardware,
)

from .code_text import first_word, normalized, read_text
from .dockerfile import DOCKERFILE_NAMES
from .shell import (
    ACCELERATORS,
    GLOBAL_BATCH,
    LOCAL_BATCH,
    NAME_SCALE,
    NODES,
    SOURCE_COMMAND,
    Comparison,
    LaunchConfig,
    Scale,
    compare_with_logs,
    config_stem,
    described_count,
    name_scale,
    parse_shell,
)

README_NAMES = re.compile(r"^readme([-_.][^/]*)?(\.(md|rst|txt|markdown))?$", re.IGNORECASE)


CONFIG_NAMES = re.compile(r"^config.*\.sh$", re.IGNORECASE)


# --------------------------------------------------------------------------------------------
# Tracing a result folder to its implementation and launch configuration
# --------------------------------------------------------------------------------------------


class Certainty(enum.StrEnum):
    """How sure a trace is: an error needs a certain trace; a likely one gives warnings at most."""

    CERTAIN = "certain"
    LIKELY = "likely"
    NONE = "none"


@dataclass
class Candidate:
    """One launch configuration weighed for a result folder: what agrees and what does not."""

    config: LaunchConfig
    named: bool  # its name is the system's (config_<system>.sh)
    scale: Scale  # nodes x accelerators per node: from its variables, else from its name
    scale_fits: bool | None  # against the system description (None: either is unknown)
    family: str | None  # the accelerator family its name gives (DGXH200 -> h200)
    family_fits: bool | None
    comparisons: list[Comparison]  # its values against the logs, where their meaning is known
    shares_name: bool  # a word of its name is one of the system's (`1cc` in `lambda_1cc_n8_...`)
    set_scale_fits: bool = False  # the nodes and accelerators its variables set are the system's
    other_maker: bool = False  # named for another maker's accelerator (an H200 file for an AMD system)
    fragment: bool = False  # sets no node, accelerator or batch count: a piece others build on
    evidence: list[str] = field(default_factory=list)

    @property
    def disagrees(self) -> bool:
        """A value whose meaning is certain differs from the logs."""
        return any(not c.agrees and c.certain for c in self.comparisons)

    @property
    def agrees(self) -> bool:
        return any(c.agrees for c in self.comparisons) and not self.disagrees

    @property
    def name(self) -> str:
        return self.config.entry.path.rsplit("/", 1)[-1]


@dataclass
class Trace:
    folder: BenchmarkFolder
    submission: Submission
    description: SystemDescription | None = None  # the folder's system description
    implementation: Implementation | None = None
    reason: str = ""
    tied: list[Implementation] = field(default_factory=list)  # other implementations as good as the chosen one
    #: Implementations the chosen one beat only by its name beginning the system's (a weaker sign)
    edged: list[Implementation] = field(default_factory=list)
    config: LaunchConfig | None = None
    config_reason: str = ""
    configs_seen: int = 0
    certainty: Certainty = Certainty.NONE
    #: The configurations of the implementation and what was found for each (in name order).
    candidates: list[Candidate] = field(default_factory=list)
    #: How the implementation's scripts choose a configuration, when they say (run.sub's
    #: `source config_${DGXSYSTEM}.sh`).
    selection: str = ""
    #: The sibling implementation a stub folder points to (its README), whose code and
    #: configurations are the result's.
    delegate: Implementation | None = None

    @property
    def code(self) -> Implementation | None:
        """Where the result's code and launch configurations are: the delegate of a stub, else the implementation."""
        return self.delegate or self.implementation


def submission_of(folder: BenchmarkFolder, context: CheckContext) -> Submission | None:
    return context.submission_of(folder)


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


def launch_configs(implementation: Implementation) -> list[FileEntry]:
    """The configurations a run is launched with: not the common files they source
    (`config_common.sh`, `config_DGXH100_common.sh`, `config_fp8.sh` sourced by the others)."""
    files = config_files(implementation)
    sourced: set[str] = set()
    for entry in files:
        if "common" in normalized(config_stem(entry)):
            continue  # what a common file sources does not make a configuration a mere part of others
        text = read_text(entry) or ""
        for line in text.splitlines():
            match = SOURCE_COMMAND.match(line.strip())
            if match:
                sourced.add(match.group(1).strip().strip("'\"").rsplit("/", 1)[-1])
    return [f for f in files if "common" not in normalized(config_stem(f)) and f.path.rsplit("/", 1)[-1] not in sourced]


def _names_system(entry: FileEntry, system: str) -> bool:
    """Whether a configuration is named after the system: `config_<system>.sh`, also with its scale
    appended (`config_AS-8125GS-TNHR_001x08x032.sh` for `AS-8125GS-TNHR-1`, whose `-1` counts the
    systems of that name)."""
    stem, wanted = config_stem(entry), normalized(system)
    if not wanted:
        return False
    match = NAME_SCALE.search(stem)
    bare = normalized(stem[: match.start()] if match else stem)
    words = re.split(r"[_\-.\s]+", system)
    counted = normalized("".join(words[:-1])) if len(words) > 1 and words[-1].isdigit() else None
    return bool(bare) and (bare == wanted or bare == counted)


def _launcher_lines(implementation: Implementation) -> Iterator[tuple[str, str]]:
    """The lines of the implementation's top-level launch scripts (`run.sub`, `*.sh` that are not
    configurations), stripped, with the script's relative path."""
    for entry in implementation.files:
        name = entry.path.rsplit("/", 1)[-1]
        if "/" in implementation.relative(entry) or not (
            name.endswith((".sub", ".sh")) and not CONFIG_NAMES.match(name)
        ):
            continue
        for line in (read_text(entry) or "").splitlines():
            yield implementation.relative(entry), line.strip()


def _selection(implementation: Implementation) -> str:
    """How the implementation's launch scripts pick a configuration, quoted, when one says."""
    for script, line in _launcher_lines(implementation):
        if SOURCE_COMMAND.match(line) and "config" in line and "$" in line:
            return f"{script}: {line[:120]}"
    return ""


def _launcher_sourced(implementation: Implementation) -> dict[str, str]:
    """The configurations the launch scripts source by a literal name (Clemson's run.sub:
    `source config_DGXH100_8x8x72x1.sh`), by file name, with the line that sources it."""
    found: dict[str, str] = {}
    for script, line in _launcher_lines(implementation):
        match = SOURCE_COMMAND.match(line)
        if match is None or "$" in match.group(1):
            continue
        word = match.group(1).split()[0].strip("'\"")
        found.setdefault(word.rsplit("/", 1)[-1], f"{script}: {line[:120]}")
    return found


#: An implementation whose name begins the system's: a sign, but a weaker one than a full name.
PREFIX_SIGN, PREFIX_POINTS = "the system's name begins with its name", 4


def trace(folder: BenchmarkFolder, submission: Submission, runs: Any = (), configs: bool = True) -> Trace:
    """The implementation a result folder came from and, with `configs`, its launch configuration."""
    description = submission.system(folder.system) if folder.system else None
    result = Trace(folder, submission, description)
    system = folder.system or ""
    candidates = [i for i in submission.implementations if i.benchmark == folder.benchmark]
    if not candidates:
        # filed under another benchmark's folder (Fujitsu's llama2_70b_lora code in benchmarks/llama2_70b/):
        # found only when the log names its configuration; REP002 still reports the folder missing
        platform = next((run.launch.platform for run in runs if run.launch is not None and run.launch.platform), None)
        holders = [i for i in submission.implementations if platform and _config_named(i, platform, system)]
        if not configs or len(holders) != 1:
            return result
        candidates = holders
        result.reason = f"no implementation of {folder.benchmark}; the log names a configuration of {holders[0].path}"
    if len(candidates) == 1:
        result.implementation = candidates[0]
        result.reason = result.reason or "the only implementation of the benchmark"
    else:
        framework = str(description.get("framework") or "") if description is not None else ""
        accelerator = _system_family(description)
        system_words = [normalized(t) for t in re.split(r"[_\-.\s]+", system) if normalized(t)]
        tokens = set(system_words)

        def score(implementation: Implementation) -> tuple[int, list[str]]:
            points, why = 0, list[str]()
            if normalized(implementation.name) == normalized(system):
                points, why = points + 8, why + ["it is named after the system"]
            if any(_names_system(entry, system) for entry in config_files(implementation)):
                points, why = points + 3, why + ["a launch configuration is named after the system"]
            words = [normalized(t) for t in re.split(r"[_\-.\s]+", implementation.name) if normalized(t)]
            if len(words) >= 2 and system_words[: len(words)] == words and len(words) < len(system_words):
                # Azure's ND96amsr_A100_v4 for ND96amsr_A100_v4_n1_pytorch (beside NC96ads_A100_v4)
                points, why = points + PREFIX_POINTS, why + [PREFIX_SIGN]
            if normalized(implementation.name) in tokens:
                points, why = points + 2, why + ["the system folder's name contains its name"]
            if normalized(implementation.name) and normalized(implementation.name) in normalized(framework):
                points, why = points + 1, why + ["the system's framework names it"]
            families = {hardware.family_of_text(config_stem(e)) for e in config_files(implementation)} - {None}
            if accelerator is not None and families:
                if accelerator in families:
                    points, why = points + 2, why + [f"a configuration names the system's {accelerator.upper()}"]
                elif all(hardware.maker_of(f) != hardware.maker_of(accelerator) for f in families):
                    points, why = points - 8, why + ["its configurations are for another maker's accelerators"]
            return points, why

        scored = sorted(((score(i), i) for i in candidates), key=lambda item: (-item[0][0], item[1].name))
        (best, why), chosen = scored[0]
        result.implementation = chosen
        result.tied = [i for (points, _), i in scored[1:] if points == best]
        if PREFIX_SIGN in why:  # without it, which of these would have been taken?
            result.edged = [i for (points, _), i in scored[1:] if points >= best - PREFIX_POINTS]
        result.reason = (
            "; ".join(why or ["no implementation names the system"]) + f"; {len(candidates)} implementations"
        )
    if result.implementation is not None:
        result.delegate = delegate_of(result.implementation, candidates)
    if configs:
        _choose_config(result, description, runs)
    return result


_CD_SIBLING = re.compile(r"^[ \t]*cd[ \t]+\.\./([A-Za-z0-9][A-Za-z0-9_.\-]*)", re.MULTILINE)
_SIBLING_LINK = re.compile(r"(?:\.\./|implementations/)([A-Za-z0-9][A-Za-z0-9_.\-]*)")


def delegate_of(implementation: Implementation, siblings: list[Implementation]) -> Implementation | None:
    """The sibling implementation whose code a thin folder uses, as its README says: a stub
    ("refer to [pytorch](../pytorch)", NVIDIA's per-system `README-<system>.md` naming
    `implementations/merlin_hugectr/config_...`) or a folder of configurations only (Fujitsu's
    "prepare the environment according to ../pytorch/README.md"). A folder with code of its own
    (a Python file or a Dockerfile) delegates nothing."""
    names = [entry.path.rsplit("/", 1)[-1] for entry in implementation.files]
    if any(name.endswith(".py") or DOCKERFILE_NAMES.match(name) for name in names):
        return None
    others = {sibling.name: sibling for sibling in siblings if sibling is not implementation}
    for entry in implementation.files:
        name = entry.path.rsplit("/", 1)[-1]
        if "/" in implementation.relative(entry):
            continue
        if README_NAMES.match(name):
            text = read_text(entry) or ""
            links = _SIBLING_LINK.findall(text)
            # a configuration it names that only a sibling holds (Fujitsu's v4.0 per-system READMEs)
            mentioned = set(re.findall(r"\bconfig[\w.\-]{0,200}\.sh", text))
            own = {e.path.rsplit("/", 1)[-1] for e in implementation.files}
            holders = {
                sibling.name
                for sibling in others.values()
                for e in sibling.files
                if e.path.rsplit("/", 1)[-1] in mentioned - own
            }
            links += sorted(holders) if len(holders) == 1 else []
        elif name.endswith(".sh"):  # GigaComputing's launchers: `cd ../pytorch`
            links = _CD_SIBLING.findall(read_text(entry) or "")
        else:
            continue
        for link in links:
            sibling = others.get(link.rstrip("/."))
            if sibling is not None:
                return sibling
    return None


def _fits(a: float | None, b: float | None) -> bool | None:
    return None if a is None or b is None else a == b


def _shares_first_word(stem: str, system: str) -> bool:
    """Whether a configuration's first word names the system: one of its words (`1cc` in
    `lambda_1cc_n8_...`), or the start of its first (`XE8640` for `XE8640x4H100-SXM-80GB`)."""
    first = first_word(stem)
    words = _tokens(system)
    return (len(first) >= 2 and first in words) or (len(first) >= 4 and bool(words) and words[0].startswith(first))


def _candidate(
    implementation: Implementation,
    entry: FileEntry,
    system: str,
    description: SystemDescription | None,
    runs: Any,
    benchmark: str,
) -> Candidate:
    config = LaunchConfig(entry, parse_shell(implementation, entry))
    by_name = name_scale(entry)
    scale = Scale(
        config.count(NODES) if config.count(NODES) is not None else by_name.nodes,
        config.count(ACCELERATORS) if config.count(ACCELERATORS) is not None else by_name.accelerators,
    )
    nodes = described_count(description, "number_of_nodes") if description is not None else None
    per_node = described_count(description, "accelerators_per_node") if description is not None else None
    # the name's scale is what the submitter called it; the variables are what it sets (REP010
    # reports a difference): the name decides whether it is the system's configuration
    named_scale = by_name if by_name.known() else scale
    fits = [_fits(named_scale.nodes, nodes), _fits(named_scale.accelerators, per_node)]
    scale_fits = False if False in fits else (None if None in fits else True)
    family = hardware.family_of_text(config_stem(entry))
    system_family = _system_family(description)
    family_fits = None if family is None or system_family is None else family == system_family
    other_maker = (
        family is not None
        and system_family is not None
        and hardware.maker_of(family) != hardware.maker_of(system_family)
    )
    fragment = (
        config.first(NODES) is None
        and config.first(ACCELERATORS) is None
        and config.first(LOCAL_BATCH + GLOBAL_BATCH) is None
        and not by_name.known()
        and not _names_system(entry, system)
    )
    comparisons = compare_with_logs(config, benchmark, runs)
    shares_name = _shares_first_word(config_stem(entry), system)
    candidate = Candidate(
        config,
        _names_system(entry, system),
        Scale(named_scale.nodes, named_scale.accelerators),
        scale_fits,
        family,
        family_fits,
        comparisons,
        shares_name,
        set_scale_fits=config.count(NODES) == nodes and config.count(ACCELERATORS) == per_node and nodes is not None,
        other_maker=other_maker,
        fragment=fragment,
    )
    if candidate.named:
        candidate.evidence.append("named after the system")
    if scale_fits:
        candidate.evidence.append(f"for {named_scale} like the system")
    if family_fits and family:
        candidate.evidence.append(f"for {family.upper()} like the system")
    agreeing = [c.key for c in comparisons if c.agrees]
    if agreeing:
        candidate.evidence.append(f"gives the logged {', '.join(agreeing)}")
    return candidate


def _choose_config(result: Trace, description: SystemDescription | None, runs: Any) -> None:
    """The configuration the result ran, as its scripts choose one: the one named after the system,
    else the one for the system's scale and accelerator; the logs' values break ties. Certain when
    one configuration is singled out by its name or its scale, or when among several for the scale
    only one reproduces the logs; likely when a guess decided; none when no configuration is for
    the system's scale (each decision in `config_reason`)."""
    implementation, system = result.implementation, result.folder.system or ""
    assert implementation is not None
    files = launch_configs(implementation)
    if not files and result.delegate is not None:  # a stub: its configurations are in the code it points to
        implementation = result.delegate
        files = launch_configs(implementation)
    result.configs_seen = len(files)
    if not files:
        scripts = named_scripts(implementation, system)
        if scripts:
            chosen = _candidate(implementation, scripts[0], system, description, runs, result.folder.benchmark)
            certainty = Certainty.CERTAIN if len(scripts) == 1 else Certainty.LIKELY
            return _chosen(
                result,
                chosen,
                certainty,
                "the launch script named like the system" + (f" (first of {len(scripts)})" if len(scripts) > 1 else ""),
            )
    result.selection = _selection(implementation)
    result.candidates = [
        _candidate(implementation, f, system, description, runs, result.folder.benchmark) for f in files
    ]
    logged = logged_config_name(runs)
    named = [c for c in result.candidates if c.name == logged]
    if len(named) == 1:  # the run says which configuration it ran (6.x's config_filename)
        return _chosen(result, named[0], Certainty.CERTAIN, f"the log names it: config_filename {logged!r}")
    platform = next((run.launch.platform for run in runs if run.launch is not None and run.launch.platform), None)
    if platform is not None:  # the launcher printed which configuration it sourced
        printed = _config_named(implementation, platform, system)
        if printed is None:  # in another implementation of the benchmark (a stub's README pointing astray)
            holders = [
                (i, found)
                for i in result.submission.implementations
                if i.benchmark == result.folder.benchmark
                and i is not implementation
                and (found := _config_named(i, platform, system)) is not None
            ]
            if len(holders) == 1:
                implementation, printed = holders[0]
                result.implementation, result.delegate = implementation, None
                result.reason += f"; the log names a configuration of {implementation.path}"
        if printed is not None:
            chosen = _candidate(implementation, printed, system, description, runs, result.folder.benchmark)
            return _chosen(
                result, chosen, Certainty.CERTAIN, f"the log names it: DGXSYSTEM={platform} (`:::DLPAL` line)"
            )
        # a configuration may set DGXSYSTEM itself (Lambda's `export DGXSYSTEM="1CC"`): those are its candidates
        setting = [c for c in result.candidates if (v := c.config.variables.get("DGXSYSTEM")) and v.value == platform]
        if setting:
            result.candidates = setting
            _choose_by_evidence(result, description, files)
            result.config_reason += f"; of the configurations that set DGXSYSTEM={platform}, which the log prints"
            return None
        _choose_by_evidence(result, description, files)
        if result.config is not None:
            result.certainty = Certainty.LIKELY
        result.config_reason += (
            f"; the log names config_{platform}.sh (DGXSYSTEM in its `:::DLPAL` line), which the package does not hold"
        )
        return None
    sourced = _launcher_sourced(implementation)
    picked = [
        c
        for c in result.candidates
        if c.name in sourced and (c.scale_fits or c.set_scale_fits) and c.family_fits is not False
    ]
    # the submitter's own launcher names it, and it is for the system's scale; not when it does not
    # give a logged value that another configuration for the scale gives with all the others (Dell
    # v2.0 bert: bert_runner_XE8545_4gpu.sh sources config_XE8545_1x4x56x1.sh, while the R750xa
    # results log config_R750xax4A100-PCIE-80GB_nvbridged.sh's values; Fujitsu v3.1 ssd:
    # do_ssd_10gpu.sh sources config_PG_10gpu_gbs240.sh, the system ..._gbs320 logs config_PG_10gpu_gbs320.sh's)
    astray = (
        len(picked) == 1
        and any(not c.agrees for c in picked[0].comparisons)
        and any(c.agrees and (c.scale_fits or c.set_scale_fits) for c in result.candidates if c is not picked[0])
    )
    if len(picked) == 1 and not astray:
        result.selection = sourced[picked[0].name]
        return _chosen(result, picked[0], Certainty.CERTAIN, "the launch script sources it by name")
    return _choose_by_evidence(result, description, files)


def logged_config_name(runs: Any) -> str | None:
    """The file name of the launch configuration the first run that logs `config_filename` names
    (optional in 6.0, required from 6.1): its last path component, None for anything but a short string."""
    for run in runs:
        event = run.first("config_filename")
        if event is None:
            continue
        value = event.value
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_CONFIG_NAME:
            return None
        name = re.split(r"[/\\]", value.strip())[-1]
        return name if name not in ("", ".", "..") else None
    return None


#: Longer than any configuration's file name: a logged value this long names no file.
MAX_CONFIG_NAME = 255


def _tokens(text: str) -> list[str]:
    return [normalized(t) for t in re.split(r"[_\-.\s]+", text) if normalized(t)]


def named_scripts(implementation: Implementation, system: str) -> list[FileEntry]:
    """Launch scripts named like the system where there is no config*.sh: Google's `v5p-16.sh` for
    `cloud-tpu-v5p-16-maxdiffusion` (the script's words, one with a digit, in a row in the system's name)."""
    wanted = _tokens(system)
    found = []
    for entry in implementation.files:
        name = entry.path.rsplit("/", 1)[-1]
        if not name.endswith(".sh") or implementation.relative(entry).count("/") > 1:
            continue
        words = _tokens(name[: -len(".sh")])
        if not words or not any(any(ch.isdigit() for ch in w) for w in words):
            continue
        if any(wanted[i : i + len(words)] == words for i in range(len(wanted) - len(words) + 1)):
            found.append(entry)
    return sorted(found, key=lambda entry: entry.path)


def _config_named(implementation: Implementation, platform: str, system: str = "") -> FileEntry | None:
    """The implementation's `config_<platform>.sh` (or without `.sh`, which a launcher sources as
    well): at its top or in `configs/`, else the only file of that name anywhere in it."""
    wanted = {f"config_{platform}.sh", f"config_{platform}"}
    named = [entry for entry in implementation.files if entry.path.rsplit("/", 1)[-1] in wanted]
    for entry in named:
        relative = implementation.relative(entry).split("/")
        if len(relative) == 1 or relative[0].lower() in ("configs", "config"):
            return entry
    if len(named) <= 1:
        return named[0] if named else None
    # copies in several folders (Oracle's): the one in the folder named DGXSYSTEM, else any when
    # every copy holds the same bytes (then it does not matter which one ran)
    in_own = [e for e in named if e.path.rsplit("/", 2)[-2] == platform]
    if len(in_own) == 1:
        return in_own[0]
    texts = {read_text(entry) for entry in named}
    if len(texts) != 1 or None in texts:
        return None
    # identical copies: the one whose folders share the most numbers with the system's name
    # (BM.GPU.H100.128/ for the system 128xBM.GPU.H100.8)
    numbers = set(re.findall(r"\d+", system))
    return max(named, key=lambda e: len(set(re.findall(r"\d+", e.path.rsplit("/", 1)[0])) & numbers))


def _choose_by_evidence(result: Trace, description: SystemDescription | None, files: list[FileEntry]) -> None:
    """Without a launcher's word: the configuration named after the system, else the one for its scale.
    Configurations for another maker's accelerator cannot have run; fragments that set no count
    are pieces the others build on."""
    whole = [c for c in result.candidates if not c.fragment] or result.candidates
    result.candidates = [c for c in whole if not c.other_maker]
    named = [c for c in result.candidates if c.named]
    if len(named) == 1:
        return _chosen(result, named[0], Certainty.CERTAIN, "named after the system")
    pool = named or result.candidates
    scaled = [c for c in pool if c.scale_fits]
    fitting = [c for c in scaled if c.family_fits is not False]
    # of several for the scale, one named after another of the submitter's systems is that system's
    own = [c for c in fitting if _other_system(c.config.entry, result.folder.system or "", result.submission) is None]
    set_aside = [c for c in fitting if c not in own] if own and len(own) < len(fitting) else []
    if set_aside:
        fitting = own
    if len(fitting) == 1:
        # one set aside as another system's reproduces the logs where this one does not (Supermicro
        # v3.0 SYS-421GU-TNX resnet logs config_SYS-421GU-TNXR.sh's batch, not config_DGXH100.sh's)
        reproducing = [c for c in set_aside if c.agrees] if fitting[0].disagrees else []
        return _chosen(
            result,
            fitting[0],
            Certainty.LIKELY if reproducing else Certainty.CERTAIN,
            f"the only configuration for {fitting[0].scale} and this accelerator"
            + (
                f", though {reproducing[0].name}, named after another system, gives the logged values"
                if reproducing
                else ""
            ),
        )
    if len(fitting) > 1 and len({read_text(c.config.entry) for c in fitting} - {None}) == 1:
        # copies with the same bytes (ASUSTeK's config_ESC_N8_H200.sh of NVIDIA's DGXH200 file): which
        # one ran cannot be told and does not matter, the recipe is the same
        copy = sorted(fitting, key=lambda c: (not c.shares_name, c.name))[0]
        return _chosen(
            result,
            copy,
            Certainty.CERTAIN,
            f"{len(fitting)} configurations for {fitting[0].scale} with the same bytes "
            f"({', '.join(c.name for c in fitting)}): whichever ran, its values are these",
        )
    if len(fitting) > 1:
        reproducing = [c for c in fitting if c.agrees]
        # one that gives every logged value beats one whose other value is only a default apart
        # (Fujitsu v3.1 ssd: config_PG_10gpu_gbs320.sh over config_PG_10gpu_gbs240.sh's BATCHSIZE default)
        reproducing = [c for c in reproducing if all(x.agrees for x in c.comparisons)] or reproducing
        # the logs single one out; certain when its name also shares a word with the system's (a
        # configuration that ran may have been edited since, and another reproduce the logs by chance)
        if len(reproducing) == 1 and all(c.disagrees for c in fitting if c is not reproducing[0]):
            single = reproducing[0]
            return _chosen(
                result,
                single,
                Certainty.CERTAIN if single.shares_name else Certainty.LIKELY,
                f"of {len(fitting)} configurations for {fitting[0].scale}, the only one that gives the logged values"
                + (" and shares a word with the system's name" if single.shares_name else ""),
            )
        preferred = sorted(reproducing or fitting, key=lambda c: (not c.shares_name, c.name))
        decided = "the logged values" if reproducing else "name order"
        if preferred[0].shares_name:
            decided += " and a word of the system's name"
        return _chosen(
            result,
            preferred[0],
            Certainty.LIKELY,
            f"{len(fitting)} configurations for {fitting[0].scale} "
            f"({', '.join(c.name for c in fitting)}); {decided} decided",
        )
    if scaled:  # only configurations named for another accelerator fit the scale (an H100 file run on H200)
        other = scaled[0]
        # the only one for the scale, and it gives every logged value it sets: what ran, under another name
        certainty = Certainty.CERTAIN if len(scaled) == 1 and other.agrees else Certainty.LIKELY
        return _chosen(
            result,
            other,
            certainty,
            f"the only configuration for {other.scale}, named for {(other.family or '').upper()} where the system has "
            f"{(_system_family(description) or '?').upper()}",
        )
    # its name says another scale, but what it sets is the system's (a file renamed, or edited for this run)
    set_scale = [c for c in pool if c.set_scale_fits and c.family_fits is not False]
    if len(set_scale) == 1:
        return _chosen(
            result,
            set_scale[0],
            Certainty.LIKELY,
            f"the only configuration that sets the system's scale, though its name says {set_scale[0].scale}",
        )
    unknown = [c for c in pool if c.scale_fits is None and c.family_fits is not False]
    if len(unknown) == 1 and len(pool) == 1:
        return _chosen(
            result, unknown[0], Certainty.LIKELY, "the implementation's only configuration (its scale is not known)"
        )
    reproducing = [c for c in unknown if c.agrees]
    if len(reproducing) == 1:
        return _chosen(
            result,
            reproducing[0],
            Certainty.LIKELY,
            "the only configuration of unknown scale that gives the logged values",
        )
    scales = sorted({str(c.scale) for c in result.candidates if c.scale.known()})
    wanted = Scale(
        described_count(description, "number_of_nodes") if description is not None else None,
        described_count(description, "accelerators_per_node") if description is not None else None,
    )
    result.config_reason = (
        f"none of its {len(files)} configuration(s) is for {wanted} (nodes x accelerators per node)"
        + (f"; they are for {', '.join(scales)}" if scales else "")
    )


def _system_family(description: SystemDescription | None) -> str | None:
    return hardware.family_of_text(description.get("accelerator_model_name")) if description is not None else None


def _other_system(entry: FileEntry, system: str, submission: Submission) -> str | None:
    """Another system of the submitter that a configuration is named after (Dell's
    `config_XE9640x4H100-SXM-80GB.sh` taken for `XE8640x4H100-SXM-80GB`), if any."""
    stem = config_stem(entry)
    match = NAME_SCALE.search(stem)
    bare = normalized(stem[: match.start()] if match else stem)
    if len(bare) < 6 or normalized(system).startswith(bare):
        return None
    for other in submission.systems:
        if other.name != system and normalized(other.name).startswith(bare):
            return other.name
    return None


def _chosen(result: Trace, candidate: Candidate, certainty: Certainty, reason: str) -> None:
    other = _other_system(candidate.config.entry, result.folder.system or "", result.submission)
    if other is not None and certainty is Certainty.CERTAIN and "the log names it" not in reason:
        certainty = Certainty.LIKELY  # the package may lack this system's own configuration
        reason += f", though it is named after another system ({other})"
    if result.edged and certainty is Certainty.CERTAIN and "config_filename" not in reason:
        # the implementation won by its name beginning the system's only (University-of-Florida v5.1
        # rgat: hpg.dgxb200x8 over b200_dgl, both with a config_DGXB200_8x8x1024.sh)
        certainty = Certainty.LIKELY
        reason += (
            f", in {result.implementation.name if result.implementation else '?'}, taken over "
            f"{', '.join(i.name for i in result.edged)} because the system's name begins with its name"
        )
    if result.tied and certainty is Certainty.CERTAIN and "config_filename" not in reason:
        # the implementation itself was a guess among equals (first by name): so is its configuration
        certainty = Certainty.LIKELY
        reason += (
            f", in {result.implementation.name if result.implementation else '?'}, taken first by name of "
            f"{len(result.tied) + 1} implementations that fit the system as well"
        )
    result.config, result.certainty = candidate.config, certainty
    others = [e for e in candidate.evidence if e not in reason]
    result.config_reason = reason + (f" ({'; '.join(others)})" if others else "")


#: Files that may read a configuration's variable: launch scripts, programs and their configurations.
_READER_SUFFIXES = (".sh", ".bash", ".sub", ".slurm", ".py", ".yaml", ".yml", ".cfg", ".conf", ".json")


def unread(trace: Trace, name: str) -> bool:
    """Whether nothing in the traced code reads the configuration variable `name`: no script,
    program or configuration of the implementation (and of the code it delegates to) names it,
    and no launch configuration expands it (`$NAME`, `${NAME}`, other than its own default). False
    when the code does not hold the launcher that takes a configuration's variables
    (`run_and_time*.sh`: a stub whose launcher is elsewhere) or `name` is not a variable's name:
    then whether it is read cannot be told."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return False
    holders = [i for i in (trace.implementation, trace.delegate) if i is not None]
    configs = {entry.path for i in holders for entry in config_files(i)}
    word = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])")
    expanded = re.compile(rf"\$\{{?{re.escape(name)}(?![A-Za-z0-9_])")
    own_default = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}=[\"']?\$\{{{re.escape(name)}(?![A-Za-z0-9_])")
    launcher = any(
        entry.path.rsplit("/", 1)[-1].startswith("run_and_time") and entry.path.endswith(".sh")
        for i in holders
        for entry in i.files
    )
    if not launcher:
        return False
    readers = 0
    for implementation in holders:
        for entry in implementation.files:
            if entry.path in configs:
                text = read_text(entry) or ""
                if len(expanded.findall(text)) > len(own_default.findall(text)):
                    return False
                continue
            base = entry.path.rsplit("/", 1)[-1]
            if not base.endswith(_READER_SUFFIXES) and base not in ("Makefile", "Dockerfile"):
                continue
            readers += 1
            content = read_text(entry)
            if content is None or word.search(content):
                return False  # read, or unreadable: not known to be unread
    return readers > 0
