"""REP: can each result be rerun from what the package holds?

MLPerf asks that every result can be reproduced from the submission: the code, a way to build
its environment, the launch configuration for the system, and logs that record the
hyperparameters and seeds. The official tools read the logs alone. These rules trace each result
folder to its implementation (how: `mlperf_audit_rules.support.tracing`) and compare what the code, the
system description and the logs say.

A tree without `benchmarks/` (results only, like a results-only sample) gets one info finding per
submitter (REP001), not an error per result. A PATH below a submitter folder (a system or
benchmark folder) is not traced: its `benchmarks/` is outside what was asked to be checked.
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import math
import re
from functools import cache
from importlib import resources
from typing import Any, Iterable

from mlperf_audit import (
    BenchmarkResult,
    BenchmarkRule,
    CheckContext,
    Finding,
    Implementation,
    Quoted,
    Recipe,
    Rule,
    Severity,
    Spread,
    Submission,
    SubmissionRule,
    hardware,
    hookimpl,
    reference,
)

from .support import code_text, disclosure, dockerfile, precision, shell, tracing
from .support.convergence import convergences, evaluation_grid
from .support.official_compliance import load_config
from .support.tracing import Trace
from .support.work import time_to_train


def _trace_result(result: BenchmarkResult, context: CheckContext) -> Trace | None:
    """The result folder traced to its code and launch configuration (once, shared by the REP rules)."""
    submission = tracing.submission_of(result.folder, context)
    if submission is None or not submission.source_dirs:
        return None

    def traced() -> Trace:
        return tracing.trace(result.folder, submission, result.runs)

    return context.memo(result, "rep-trace", traced)


class _TracedRule(BenchmarkRule):
    """Checks one result folder traced to its code (nothing when the submitter's benchmarks/ was not read)."""

    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        trace = _trace_result(result, context)
        if trace is not None:
            yield from self.check_trace(trace, result)

    def check_trace(self, trace: Trace, result: BenchmarkResult) -> Iterable[Finding]:
        raise NotImplementedError


class _ImplementationRule(SubmissionRule):
    """Checks each implementation once; its findings point at the result folders traced to it too."""

    scope = "submission"

    def check(self, submission: Submission, context: CheckContext) -> Iterable[Finding]:
        if not submission.source_dirs:
            return
        for traces in context.memo(submission, "rep-users", lambda: _users(submission)).values():
            results = [(trace.folder.path, None) for trace in traces]
            for finding in self.check_users(traces):
                yield dataclasses.replace(finding, related=finding.related + tuple(results))

    def check_users(self, traces: list[Trace]) -> Iterable[Finding]:
        """The findings of one implementation and the result folders traced to it."""
        return self.check_implementation(traces[0].code)  # type: ignore[arg-type]

    def check_implementation(self, implementation: Implementation) -> Iterable[Finding]:
        raise NotImplementedError


def _users(submission: Submission) -> dict[str, list[Trace]]:
    """Each implementation's code and the result folders traced to it (which code, not how it was
    launched); computed once per submission and shared by the implementation rules."""
    users: dict[str, list[Trace]] = {}
    for folder in submission.benchmarks:
        trace = tracing.trace(folder, submission, configs=False)
        if trace.code is not None:  # a stub's README points to the code: the code is checked
            users.setdefault(trace.code.path, []).append(trace)
    return users


class NoBenchmarksFolder(SubmissionRule):
    """A submitter folder has results but no `benchmarks/` folder, so no code can be checked.

    What it checks: that a submitter folder with results also holds `benchmarks/` (one finding per
    submitter, not one per result).

    Why it matters: MLPerf requires the code behind every result; without it nobody can rerun the
    result. A results-only copy of a round (like a sample for tests) legitimately lacks it, so
    this is information, not an error.

    Example: `Dell/results/...` and `Dell/systems/...` but no `Dell/benchmarks/`.

    How to fix: add `benchmarks/<benchmark>/implementations/<name>/` with the code, or check the
    full submission rather than a results-only copy.
    """

    code = "REP001"
    name = "no-benchmarks-folder"
    summary = "A submitter folder has results but no benchmarks/ folder with their code."
    severity = Severity.INFO
    scope = "submission"

    def check(self, submission: Submission, context: CheckContext) -> Iterable[Finding]:
        if submission.source_dirs == () and submission.benchmarks:
            yield self.finding(
                f"no benchmarks/ folder: the code behind {len(submission.benchmarks)} result folder(s) cannot be "
                "checked",
                path=submission.path_of("benchmarks"),
            )


class ImplementationMissing(_TracedRule):
    """A result folder has no implementation to trace it to.

    What it checks: for every `results/<system>/<benchmark>/`, a folder
    `benchmarks/<benchmark>/implementations/<name>/` of the same submitter.

    Why it matters: a result whose code is not in the submission cannot be reproduced or
    reviewed; the submission rules require the code of every result.

    Example: `results/sys_a/bert/` exists, `benchmarks/bert/` does not.

    How to fix: add the code that produced the result under
    `benchmarks/<benchmark>/implementations/<name>/`.
    """

    code = "REP002"
    name = "implementation-missing"
    summary = "A result folder has no benchmarks/<benchmark>/implementations/<name>/ folder."
    severity = Severity.ERROR

    def check_trace(self, trace: Trace, result: BenchmarkResult) -> Iterable[Finding]:
        if trace.implementation is not None and trace.implementation.benchmark == trace.folder.benchmark:
            return
        submission, benchmark = trace.submission, trace.folder.benchmark
        code = submission.path_of(f"benchmarks/{benchmark}")
        where = (
            f"{code}/implementations/ is missing or empty"
            if benchmark in (submission.source_dirs or ())
            else f"there is no {code}/"
        )
        if trace.implementation is not None:
            where += f"; the log names a configuration of {trace.implementation.path}, filed under another benchmark"
        yield self.finding(f"no implementation for {trace.folder.path}: {where}", path=trace.folder.path)


class ImplementationTraced(_TracedRule):
    """Which implementation and launch configuration a result folder was traced to, why, and how surely.

    What it checks: nothing; it reports the trace that the other REP rules rely on (`--ignore
    REP003` hides it), as `mlperf_audit_rules.support.tracing` documents it: the configuration the
    logs name (`:::DLPAL ... <DGXSYSTEM>`), else the one named after the system, else the one for the
    system's scale and accelerator, with the logged values breaking ties; and its certainty:
    certain, likely or none. Only a certain trace makes REP010 and REP011 errors. The launch
    scripts' own choice comes before the names: a configuration `run.sub` sources by name, when it
    is for the system's scale, is certain.

    Why it matters: results carry no pointer to their code; a reviewer must see which folder was
    taken for which result before trusting the comparisons of REP005 to REP011.

    Example: `results/eos_n32_ngc24.09_nemo/gpt3`: traced to
    `benchmarks/gpt3/implementations/eos_n32_ngc24.09_nemo`; launch configuration
    `config_DGXH100_32x8x256x4x8_mbs2.sh`, certain: the only configuration for 32x8 and this
    accelerator.

    How to fix: if the trace is wrong or only likely, name the launch configuration after the
    system (`config_<system>.sh`), or keep the launcher's `:::DLPAL` line in the logs.
    """

    code = "REP003"
    name = "implementation-traced"
    summary = "The implementation and launch configuration a result folder was traced to."
    severity = Severity.INFO

    def check_trace(self, trace: Trace, result: BenchmarkResult) -> Iterable[Finding]:
        if trace.implementation is None:
            return
        config = (
            f"launch configuration {trace.config.entry.path.rsplit('/', 1)[-1]}, {trace.certainty.value}: "
            f"{trace.config_reason}"
            if trace.config is not None
            else f"no launch configuration for the system: {trace.config_reason or 'the implementation has none'}"
        )
        selection = f"; the scripts choose it with `{trace.selection}`" if trace.selection and trace.config else ""
        if trace.delegate is not None:
            selection += f"; its README points to {trace.delegate.path}, whose code and configurations are used"
        yield self.finding(
            f"traced to {trace.implementation.path} ({trace.reason}); {config}{selection}",
            path=trace.folder.path,
            related=[(trace.implementation.path, None)],
        )


class ImplementationAmbiguous(_ImplementationRule):
    """Several implementations of a benchmark fit some result folders equally well.

    What it checks: that the tracing rules single out one implementation for each result folder
    (see REP003); reported once per implementation, naming the result folders it was chosen for
    and the implementations that fit them as well.

    Why it matters: a reviewer cannot tell which code produced those results; mlperf-audit takes
    the first by name and checks that one.

    Example: `implementations/pytorch` and `implementations/jax`, system `sys_a`, no implementation
    or configuration named after it.

    How to fix: name the implementation after the system, or the launch configuration
    (`config_<system>.sh`).
    """

    code = "REP004"
    name = "implementation-ambiguous"
    summary = "Several implementations fit some result folders equally well."
    severity = Severity.INFO

    def check_users(self, traces: list[Trace]) -> Iterable[Finding]:
        tied = [trace for trace in traces if trace.tied]
        if not tied:
            return
        chosen = tied[0].implementation
        assert chosen is not None
        others = sorted({i.name for trace in tied for i in trace.tied})
        folders = ", ".join(trace.folder.path for trace in tied)
        yield self.finding(
            f"{chosen.path} (first by name) was taken for {len(tied)} result folder(s) that "
            f"{', '.join(others)} fit equally well: {folders}",
            path=chosen.path,
            related=[(i.path, None) for trace in tied[:1] for i in trace.tied],
        )


class ImplementationNotInPlace(_ImplementationRule):
    """A benchmark's code is not in a `benchmarks/<benchmark>/implementations/<name>/` folder.

    What it checks: that each `benchmarks/<benchmark>/` folder keeps its code in
    `implementations/<name>/`, as the submission rules lay a package out. A folder that holds the
    code directly (or in folders of other names) is taken as one implementation named after the
    benchmark, and the other REP rules check it.

    Why it matters: the tools and reviewers look for the code where the rules put it; code
    elsewhere is easily missed, and several implementations cannot be told apart.

    Example: `benchmarks/llama31_8b/Dockerfile` and `benchmarks/llama31_8b/configs/`, with no
    `benchmarks/llama31_8b/implementations/`.

    How to fix: move the code to `benchmarks/<benchmark>/implementations/<name>/`.
    """

    code = "REP015"
    name = "implementation-not-in-place"
    summary = "A benchmark's code is not under benchmarks/<benchmark>/implementations/<name>/."
    severity = Severity.WARNING

    def check_implementation(self, implementation: Implementation) -> Iterable[Finding]:
        if not implementation.placed:
            yield self.finding(
                f"{implementation.path} holds the code without an implementations/<name>/ folder",
                path=implementation.path,
            )


#: How deep discovery lists an implementation's files (`IMPLEMENTATION_DEPTH`): what REP005 and
#: REP006 say they searched.
LEVELS = "three folder levels"

_RUN_WORDS = re.compile(
    r"\b(run|runs|running|launch|sbatch|srun|docker|podman|enroot|bash|python|torchrun|"
    r"mpirun|make)\b",
    re.IGNORECASE,
)


def top_readmes(implementation: Implementation) -> list[Any]:
    """The READMEs at the top of an implementation folder, in listing order."""
    return [
        entry
        for entry in implementation.files
        if "/" not in implementation.relative(entry) and tracing.README_NAMES.match(entry.path.rsplit("/", 1)[-1])
    ]


class ReadmeMissing(_ImplementationRule):
    """An implementation has no README that tells how to run it.

    What it checks: a `README` (`.md`, `.rst`, `.txt` or none, also `README-<system>.md`) at the top
    of the implementation folder, else the nearest in its top three folder levels, and that it
    mentions how to run (a launcher, a container or a script: run, launch,
    sbatch, srun, docker, bash, python, torchrun, mpirun, make).

    Why it matters: the submission rules ask for instructions to reproduce each result.

    Example: an implementation holding code and configurations but no README.

    How to fix: add a README with the steps: build the container, prepare the data, launch with
    the configuration of each system.
    """

    code = "REP005"
    name = "readme-missing"
    summary = "An implementation has no README that tells how to run it."
    severity = Severity.WARNING

    def check_implementation(self, implementation: Implementation) -> Iterable[Finding]:
        readmes = top_readmes(implementation)
        # else the nearest below (Google's maxtext/cloud-tpu-v5p/README.md, Cisco's implementation/pytorch/)
        readmes = readmes or sorted(
            (f for f in implementation.files if tracing.README_NAMES.match(f.path.rsplit("/", 1)[-1])),
            key=lambda f: (implementation.relative(f).count("/"), f.path),
        )
        if not readmes:
            yield self.finding(f"{implementation.path} has no README in its top {LEVELS}", path=implementation.path)
            return
        text = code_text.read_text(readmes[0])
        if text is None or not text.strip():
            yield self.finding("the README is empty or cannot be read", path=readmes[0].path)
        elif not _RUN_WORDS.search(text):
            yield self.finding("the README does not say how to run the implementation", path=readmes[0].path)


class EnvironmentMissing(_ImplementationRule):
    """An implementation gives no way to build its software environment.

    What it checks: a container file (`Dockerfile`, `Containerfile`, `*.dockerfile`) or an
    equivalent (`requirements*.txt`, `environment.yml`, a Singularity/Apptainer definition,
    `setup.py`, `pyproject.toml`, a lock file) anywhere in the implementation's top three folder levels.

    Why it matters: the same code on another software stack is another experiment.

    Example: an implementation with `train.py` and `run.sh` only.

    How to fix: add the Dockerfile (or the equivalent) that built the environment of the runs.
    """

    code = "REP006"
    name = "environment-missing"
    summary = "An implementation has no Dockerfile or equivalent to build its environment."
    severity = Severity.WARNING

    def check_implementation(self, implementation: Implementation) -> Iterable[Finding]:
        names = [f.path.rsplit("/", 1)[-1] for f in implementation.files]
        if not any(dockerfile.DOCKERFILE_NAMES.match(n) or dockerfile.ENVIRONMENT_NAMES.match(n) for n in names):
            yield self.finding(
                f"{implementation.path} has no Dockerfile, Containerfile, requirements file or "
                f"other environment definition in its top {LEVELS}",
                path=implementation.path,
            )


def dockerfiles(implementation: Implementation) -> list[Any]:
    """The container files that build the implementation's environment: those at its top (not
    the copies inside bundled repositories, Megatron-LM/Dockerfile.ci), and of those the plain
    `Dockerfile` or `Containerfile` when there is one (not `Dockerfile_pyt`, which NVIDIA's unet3d
    README builds for data preprocessing only)."""
    top = [
        f
        for f in implementation.files
        if "/" not in implementation.relative(f) and dockerfile.DOCKERFILE_NAMES.match(f.path.rsplit("/", 1)[-1])
    ]
    plain = [f for f in top if f.path.rsplit("/", 1)[-1].lower() in ("dockerfile", "containerfile")]
    return plain or top


class BaseImageUnpinned(_ImplementationRule):
    """A Dockerfile builds from a base image that is not pinned.

    What it checks: every `FROM` of the implementation's Dockerfiles (build arguments expanded
    with their defaults; earlier build stages skipped): the image must carry a tag other than
    `latest`, or a digest, and must not depend on a build argument that has no default.

    Why it matters: `latest` and a build-time argument mean that rebuilding gives another stack.

    Example: `FROM nvcr.io/nvidia/pytorch:latest`; `ARG BASE` then `FROM ${BASE}`.

    How to fix: name the exact image the runs used, e.g. `FROM nvcr.io/nvidia/pytorch:24.09-py3`
    or `FROM image@sha256:...`, or give the build argument that default.
    """

    code = "REP007"
    name = "base-image-unpinned"
    summary = "A Dockerfile's base image is `latest`, untagged, or left to a build argument."
    severity = Severity.WARNING

    def check_implementation(self, implementation: Implementation) -> Iterable[Finding]:
        for entry in dockerfiles(implementation):
            text = code_text.read_text(entry)
            if text is None:
                continue
            for image in dockerfile.base_images(text):
                if image.image is None:
                    yield self.finding(
                        f"FROM {image.written}: the base image is a build argument without a "
                        "default, so the package does not say which image was used",
                        path=entry.path,
                        line=image.line,
                    )
                    continue
                why = dockerfile.unpinned(image.image)
                if why:
                    yield self.finding(
                        f"FROM {image.written}: the base image {image.image} {why}", path=entry.path, line=image.line
                    )


class SoftwareStackMismatch(_TracedRule):
    """The system description's framework release differs from the container the code builds.

    What it checks: for each result folder traced to an implementation, the releases (YY.MM) named
    in the system description's `framework` (e.g. "PyTorch NVIDIA Release 24.09"; a description
    shared by several stacks may name several) against the release in the tag of the
    implementation's Dockerfile base image (e.g. `pytorch:24.04-py3`), which must be one of them.

    Why it matters: the description is what readers of the results see; the Dockerfile is what a
    rerun builds. When they disagree, one of them is wrong.

    Example: framework "NVIDIA Release 24.09", `FROM nvcr.io/nvidia/pytorch:24.04-py3`.

    How to fix: correct the description's `framework`, or the Dockerfile, to what the runs used.
    """

    code = "REP008"
    name = "software-stack-mismatch"
    summary = "The description's framework release differs from the Dockerfile's base image."
    severity = Severity.WARNING

    def check_trace(self, trace: Trace, result: BenchmarkResult) -> Iterable[Finding]:
        description = trace.description
        if trace.implementation is None or description is None:
            return
        framework = description.get("framework")
        wanted = dockerfile.releases(framework) if isinstance(framework, str) else set()
        if not wanted:
            return
        for entry in dockerfiles(trace.code or trace.implementation):
            for image in dockerfile.base_images(code_text.read_text(entry) or ""):
                tag = image.image.rsplit(":", 1)[-1] if image.image and ":" in image.image else ""
                built = dockerfile.release(tag)
                if built is not None and built not in wanted:
                    yield self.finding(
                        f"{trace.folder.path}: the system description says framework {framework!r} "
                        f"({description.path}) but {entry.path} builds from {image.image} (release {built})",
                        path=entry.path,
                        line=image.line,
                        related=[(description.path, description.field_lines.get("framework"))],
                    )


class LaunchConfigMissing(_TracedRule):
    """The implementation holds no launch configuration for the system's scale.

    What it checks: that the traced implementation holds a `config*.sh` (at its top or in
    `configs/`; common files that others source do not count) for the result: one named after the
    system, or one whose scale (nodes x accelerators per node, from its variables or its
    NVIDIA-style name `config_<PLATFORM>_<nodes>x<accelerators>x...`) is the system description's
    (see `mlperf_audit_rules.support.tracing`). Reported once per result folder.

    Why it matters: the configuration sets the node count, batch size and learning rate of the
    runs; without it a rerun has to guess them, and REP010/REP011 cannot compare it with the system
    description and the logs.

    Example: `results/8xXE9680x8H100-SXM-80GB/ssd` traced to `implementations/pytorch`, whose
    configurations are for 1x8, 1x4 and 4x8 but not 8x8.

    How to fix: add the configuration the runs used, named `config_<system>.sh`.
    """

    code = "REP009"
    name = "launch-config-missing"
    summary = "The implementation holds no launch configuration for the system's scale."
    severity = Severity.INFO

    def check_trace(self, trace: Trace, result: BenchmarkResult) -> Iterable[Finding]:
        if trace.code is not None and trace.config is None:
            yield self.finding(
                f"no launch configuration for {trace.folder.system} in {trace.code.path}: "
                f"{trace.config_reason or 'it holds no config*.sh'}",
                path=trace.folder.path,
                related=[(trace.code.path, None)],
            )


class ConfigDisagreesWithSystem(_TracedRule):
    """A launch configuration's node or accelerator count differs from the system description.

    What it checks: the configuration traced to a result folder (REP003): its node count
    (`DGXNNODES`, `NNODES`, `NUM_NODES`, ...) against `number_of_nodes`, and its accelerators per
    node (`DGXNGPU`, `NGPU`, `GPUS_PER_NODE`, ...) against `accelerators_per_node`.

    Why it matters: either the result was produced on another system than the one described, or
    the configuration in the package is not the one that was run.

    Example: `config_sys_a.sh` sets `DGXNNODES=2`; `systems/sys_a.json` says `"number_of_nodes": "1"`.

    How to fix: make the configuration the one that was run on the described system.
    """

    code = "REP010"
    name = "config-disagrees-with-system"
    summary = "A launch configuration's node or accelerator count differs from the system description."
    severity = Severity.ERROR

    def check_trace(self, trace: Trace, result: BenchmarkResult) -> Iterable[Finding]:
        description = trace.description
        if trace.config is None or description is None:
            return
        for names, field_name in ((shell.NODES, "number_of_nodes"), (shell.ACCELERATORS, "accelerators_per_node")):
            found = trace.config.first(names)
            described = shell.described_count(description, field_name)
            if found is None or described is None:
                continue
            variable, assignment = found
            value = shell.number(assignment.value)
            if value is not None and value != described:
                line = description.field_lines.get(field_name)
                yield self.finding(
                    severity=_severity(trace, certain=not assignment.default),
                    message=f"{assignment.path}:{assignment.line} sets {variable}={assignment.value} but "
                    f"{description.path}{f':{line}' if line else ''} says {field_name} {description.get(field_name)!r}"
                    f"{_hedge(trace, certain=not assignment.default)}",
                    path=assignment.path,
                    line=assignment.line,
                    related=[(description.path, line)],
                )


class ConfigDisagreesWithLogs(_TracedRule):
    """A launch configuration's batch size or hyperparameters differ from what the logs record.

    What it checks: the configuration traced to a result folder against its first run that logs
    the value: the global batch size (`GLOBAL_BATCH_SIZE`, or the per-accelerator batch times
    nodes, accelerators per node and gradient accumulation, divided by tensor, pipeline and
    context parallelism; a per-accelerator variable that itself equals the logged value also agrees,
    as HugeCTR's `BATCHSIZE` is the global batch) against `global_batch_size`; `LR`
    (`LEARNING_RATE`, `BASE_LR`) against
    `opt_base_learning_rate`; `GRADIENT_STEPS` against `gradient_accumulation_steps`;
    `WARMUP_STEPS`/`WARMUP_EPOCHS` against the warmup hyperparameters (relative tolerance 1e-6).
    A variable that nothing in the implementation reads (no script, program or configuration names
    it, no configuration expands it) is not compared: the run takes the value from elsewhere.

    Why it matters: a rerun from the package would not be the run that was logged.

    Example: `config_sys_a.sh` sets `LR=0.0002`; the logs say `opt_base_learning_rate` 0.0001.

    How to fix: commit the configuration that produced the logs.
    """

    code = "REP011"
    name = "config-disagrees-with-logs"
    summary = "A launch configuration's batch size or hyperparameters differ from the logs."
    severity = Severity.ERROR

    def check_trace(self, trace: Trace, result: BenchmarkResult) -> Iterable[Finding]:
        if trace.config is None:
            return
        for comparison in shell.compare_with_logs(trace.config, result.benchmark, result.runs):
            if comparison.agrees or tracing.unread(trace, comparison.variable):
                continue  # a value nothing in the code reads (Baidu's LR; run_benchmark.sh passes its own)
            said, logged = comparison.said, comparison.logged
            yield self.finding(
                f"{said.path}:{said.line} gives {comparison.what} but {logged.path}:{logged.line} logs "
                f"{comparison.key} {logged.value!r}{_hedge(trace, comparison.certain)}",
                path=said.path,
                line=said.line,
                related=[(logged.path, logged.line)],
                severity=_severity(trace, comparison.certain),
            )


def _severity(trace: Trace, certain: bool) -> Severity:
    """An error needs a certain trace and a value of certain meaning; anything less is a warning."""
    return Severity.ERROR if certain and trace.certainty is tracing.Certainty.CERTAIN else Severity.WARNING


def _hedge(trace: Trace, certain: bool) -> str:
    if trace.certainty is not tracing.Certainty.CERTAIN:
        return f" (the trace to this configuration is {trace.certainty.value}: {trace.config_reason})"
    if not certain:
        return " (a default the launching environment may override, or a value whose mapping to the log is not exact)"
    return ""


#: Keys that a rule file requires or constrains but that describe the run, not how to rerun it.
_STRUCTURE = {"eval_accuracy", "aggregated_eval_accuracy", "train_samples", "eval_samples", "submission_benchmark"}


@cache
def _hyperparameters(version: str, benchmark: str) -> tuple[frozenset[str], frozenset[str]]:
    """The hyperparameters the closed rules of a benchmark name: (required, only constrained)."""
    required: set[str] = set()
    constrained: set[str] = set()
    for name in (f"closed_{benchmark}", "closed_common"):
        config = load_config(version, name)
        if config is None:
            continue
        for key, record in config.keys.items():
            if key in _STRUCTURE or "|" in key or key == "*":
                continue
            if record.req:
                required.add(key)
            elif record.checks or record.first_checks or record.at_least_one:
                constrained.add(key)
    return frozenset(required), frozenset(constrained - required)


class HyperparametersNotLogged(BenchmarkRule):
    """Runs do not log hyperparameters that a rerun needs.

    What it checks: that every run logs each hyperparameter that the benchmark's closed rule file
    in mlperf-logging requires or constrains (`closed_<benchmark>.yaml`, `closed_common.yaml`), and
    a seed. In the closed division the compliance (CMP) and seed (SEED001) rules already fail a
    missing required key or seed, so only keys that the rules constrain without requiring are
    reported here; in the open division, where the rules require none of them, every missing one
    is (open runs may choose other values, but must say which).

    Why it matters: a log that does not record the learning rate, the optimizer or the seed cannot
    be rerun as it was run.

    Example: an open bert run that logs `global_batch_size` but not `opt_base_learning_rate`.

    How to fix: log every hyperparameter with `mllogger.event(key=..., value=...)` at startup.
    """

    code = "REP012"
    name = "hyperparameters-not-logged"
    summary = "Runs do not log hyperparameters or seeds that a rerun needs."
    severity = Severity.WARNING
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        version = context.ruleset.split("-", 1)[1]
        if not load_config(version, f"closed_{result.benchmark}"):
            return
        required, constrained = _hyperparameters(version, result.benchmark)
        division = context.division_of(result)
        wanted = constrained if division == "closed" else required | constrained | {"seed"}
        missing: dict[str, list[str]] = {}
        for run in result.runs:
            if not run.events:
                continue  # an unreadable log is reported by the LOG rules
            keys = {event.key for event in run.events}
            for key in sorted(wanted - keys):
                missing.setdefault(key, []).append(run.name)
        if not missing:
            return
        runs = sorted({name for names in missing.values() for name in names})
        first = next(run for run in result.runs if run.name == runs[0])
        listed = ", ".join(f"{key} ({len(names)} run(s))" for key, names in sorted(missing.items()))
        yield self.finding(f"not logged: {listed}", path=first.path)


#: Below this coefficient of variation, times-to-train are "the same" (the v4.1 sample's tightest
#: folder, Dell ssd with 5 runs converging at the same epoch, varies by 0.12%).
SAME_TIME_CV = 0.0001
#: Above this, the spread is far beyond real results (v4.1 sample: at most 11.8%, tinybox bert) and
#: the RCP reference runs (at most 12.6%, stable diffusion at batch 384, one defective gpt3 record aside).
LARGE_CV = 0.25
MIN_RUNS = 5
#: Identical convergence points across the runs are flagged when the reference runs make that
#: less likely than this (drawing each run's point from the reference runs' points).
UNLIKELY = 1e-3
#: Fewer distinct convergence points than this in the reference runs means a coarse evaluation grid
#: (llama2_70b_lora and dlrm_dcnv2: 4 points in 20 and 50 reference runs), on which an implementation
#: at another batch size can legitimately land on one point every time: no verdict from so few.
FINE_GRID = 6
#: Relative slack when a reference point is placed on an evaluation grid (epochs are logged rounded).
GRID_TOLERANCE = 1e-6
#: A benchmark whose reference runs vary more (unet3d: 20-24%) allows this multiple of their spread.
REFERENCE_MARGIN = 1.5


@cache
def _rcp_points(version: str, benchmark: str) -> dict[float, list[float]]:
    """The reference runs' convergence points of the installed RCP table, by batch size."""
    try:
        table = resources.files("mlperf_logging.rcp_checker").joinpath(f"training_{version}/rcps_{benchmark}.json")
        records = json.loads(table.read_text())
    except (OSError, ValueError, ModuleNotFoundError):
        return {}
    points: dict[float, list[float]] = {}
    for record in records.values():
        values = record.get("Epochs to converge") or record.get("samples to converge") or []
        if isinstance(record.get("BS"), (int, float)) and values:
            points[float(record["BS"])] = [float(v) for v in values]
    return points


def run_spread(result: BenchmarkResult, version: str) -> tuple[Spread, list[str]]:
    """The spread of the runs that stopped with status success, and their names. (`score` shows the
    spread of the runs it counts, which also leaves out non-compliant ones: that verdict costs a
    compliance interpretation per run, and the CMP rules report it anyway.)"""
    minutes, units, names = [], [], []
    for run, convergence in zip(result.runs, convergences(result, version)):
        stop = run.first("run_stop")
        time = time_to_train(run)
        if stop is None or stop.meta("status") != "success" or time is None or time <= 0:
            continue
        minutes.append(time)
        names.append(run.name)
        if convergence.converged and math.isfinite(convergence.point):  # "Infinity" reads as a point
            units.append(convergence.point)
    return Spread.of(minutes, units), names


class SpreadTooSmall(BenchmarkRule):
    """The runs of a benchmark agree more closely than independent runs can.

    What it checks: with at least 5 converged runs, (a) times-to-train whose coefficient of
    variation is under 0.01% (the tightest real folder of the v4.1 sample varies by 0.12%) although
    the runs converge at different points or take the same time to the millisecond (runs
    converging at one point with a steady throughput, as v1.0 MXNet resnet runs do, legitimately
    take nearly the same time: 55.415 to 55.425 minutes), and
    (b) runs that all converge at the same point when the RCP reference runs at the nearest batch
    size make that less likely than 1 in 1,000 (each run's point drawn from the reference runs'
    points: the chance is the sum over the distinct points of their share to the power of the
    number of runs). A run converges at the first of its own evaluations that reaches the target,
    so each reference point is first moved to the result's evaluation grid (the next point at which
    its runs evaluate): ten llama31_8b runs that evaluate every 49,152 samples, 4x the reference
    runs' cadence, see the reference runs' 8 distinct points in 20 at 3 (a 6.1e-03 chance, not
    2.2e-07). Benchmarks whose evaluations are coarse (ssd, gpt3, and any whose reference
    runs show fewer than 6 distinct points on the result's grid, such as llama2_70b_lora and
    dlrm_dcnv2) repeat points legitimately, so (b) does not flag them.

    Why it matters: a spread of zero across ten runs is as suspicious as a huge one: copied or
    generated logs, or runs that are not independent.

    Example: ten bert runs all converging at exactly 2,598,912 samples.

    How to fix: submit the logs of independent runs, each with its own seed.
    """

    code = "REP013"
    name = "spread-too-small"
    summary = "Runs agree more closely than independent training runs can."
    severity = Severity.WARNING
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        version = context.ruleset.split("-", 1)[1]
        spread, names = context.memo(result, "rep-spread", lambda: run_spread(result, version))
        if spread.runs < MIN_RUNS:
            return
        # runs that converge at one point with a steady throughput take nearly the same time (v1.0 MXNet
        # resnet: 55.415 to 55.425 min): suspicious where the points differ, or the times are equal to the ms
        if (
            spread.minutes_cv is not None
            and spread.minutes_cv < SAME_TIME_CV
            and (spread.units_distinct != 1 or spread.minutes_ratio == 1.0)
        ):
            yield self.finding(
                f"{spread.runs} runs take the same time to train: {spread.describe()}", path=result.folder.path
            )
        if spread.units_distinct == 1 and spread.units_cv is not None:
            batch = shell.logged(result.runs, "global_batch_size")
            reference_points = _nearest(_rcp_points(version, result.benchmark), batch.number if batch else None)
            if not reference_points:
                return
            # a run converges at the first of its own evaluations that reaches the target: the reference
            # runs' points, seen at the result's evaluation cadence, are where it could have converged
            grid = evaluation_grid(result, version)
            seen = on_grid(reference_points, grid)
            chance = _all_equal_chance(seen, spread.runs)
            if chance < UNLIKELY and len(set(seen)) >= FINE_GRID:
                unit = reference.benchmarks.facts(result.benchmark).convergence_key
                cadence = (
                    f", {len(set(seen))} on this result's evaluation grid (every {_number(grid[-1] - grid[-2])} {unit})"
                    if len(grid) >= 2
                    else " (this result's evaluation grid is not known)"
                )
                yield self.finding(
                    f"all {spread.runs} runs converge at the same point; the RCP reference runs at the nearest batch "
                    f"size converge at {len(set(reference_points))} distinct points in {len(reference_points)} runs{cadence}, which "
                    f"makes that a {chance:.1e} chance",
                    path=result.folder.path,
                )


def _all_equal_chance(reference: list[float], runs: int) -> float:
    """The chance that `runs` independent draws from the reference runs' points are all equal."""
    counts: dict[float, int] = {}
    for point in reference:
        counts[point] = counts.get(point, 0) + 1
    return sum((count / len(reference)) ** runs for count in counts.values())


def on_grid(reference: list[float], grid: tuple[float, ...]) -> list[float]:
    """Each reference point moved to the first point of `grid` at or after it (beyond the grid's
    last point, on the grid's last step continued): where a run evaluating on `grid` would have
    seen it converge. Unchanged without a grid of at least two points."""
    if len(grid) < 2:
        return list(reference)
    step = grid[-1] - grid[-2]
    seen = []
    for point in reference:
        index = bisect.bisect_left(grid, point - GRID_TOLERANCE * abs(point))
        if index < len(grid):
            seen.append(grid[index])
        else:
            seen.append(grid[-1] + math.ceil((point - grid[-1]) / step - GRID_TOLERANCE) * step)
    return seen


def _number(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:g}"


def _nearest(points: dict[float, list[float]], batch: float | None) -> list[float] | None:
    if not points or batch is None:
        return None
    return points[min(points, key=lambda size: abs(size - batch))]


class SpreadTooLarge(BenchmarkRule):
    """The runs of a benchmark differ far more than real results and reference runs do.

    What it checks: with at least 5 converged runs, a coefficient of variation of the
    time-to-train or of the convergence points above 25% (the v4.1 sample's folders vary by at
    most 11.8%, most RCP reference runs by at most 12.6%), or above 1.5 times the spread of the
    benchmark's RCP reference runs at the nearest batch size where that is larger (unet3d's
    reference runs vary by 20-24%: its rules ask for 40 runs for that reason).

    Why it matters: such a spread means runs that were not the same experiment (other
    hyperparameters, other systems, failed hardware), and olympic scoring hides the extremes.

    Example: ten runs of 20 to 60 minutes.

    How to fix: check that every run used the same configuration and system; rerun the outliers.
    """

    code = "REP014"
    name = "spread-too-large"
    summary = "Runs differ far more than real results and reference runs do."
    severity = Severity.WARNING
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        spread, _ = context.memo(result, "rep-spread", lambda: run_spread(result, context.ruleset.split("-", 1)[1]))
        if spread.runs < MIN_RUNS:
            return
        batch = shell.logged(result.runs, "global_batch_size")
        reference = _nearest(
            _rcp_points(context.ruleset.split("-", 1)[1], result.benchmark), batch.number if batch else None
        )
        reference_cv = Spread.of([], reference).units_cv if reference and len(reference) > 1 else None
        limit = max(LARGE_CV, REFERENCE_MARGIN * (reference_cv or 0))
        if (spread.minutes_cv or 0) > limit or (spread.units_cv or 0) > limit:
            basis = (
                f"{REFERENCE_MARGIN:g}x the {reference_cv:.0%} spread of this benchmark's RCP reference runs"
                if limit > LARGE_CV and reference_cv
                else "that real results and RCP reference runs stay within"
            )
            yield self.finding(f"{spread.describe()}: beyond {limit:.0%} ({basis})", path=result.folder.path)


# --------------------------------------------------------------------------------------------
# The 6.x disclosure keys (optional in 6.0, required from 6.1): `support.disclosure`
# --------------------------------------------------------------------------------------------


def _first_counted(result: BenchmarkResult, key: str) -> tuple[disclosure.Disclosed, int] | None:
    return next((found for run in result.runs if (found := disclosure.counted(run, key)) is not None), None)


class ParallelismDisagreesWithSystem(BenchmarkRule):
    """The parallelism a run discloses does not fit the accelerators of its system.

    What it checks: in runs that log their parallelism (optional in 6.0, required from 6.1), that
    tensor x pipeline x context parallelism (the accelerators that hold one replica of the model)
    and expert parallelism are each at most the accelerators the system description declares
    (nodes x accelerators per node): an error, as no framework places a degree on more
    accelerators than the run has. A warning where the model-parallel product does not divide the
    accelerators (Megatron, NeMo and MaxText require it; a reinforcement-learning run may keep
    some for generation), or where `global_batch_size` is not `micro_batch_size` x data
    parallelism (the accelerators over the model-parallel product) x
    `gradient_accumulation_steps`. Each problem is reported once per folder, at its first run.

    Why it matters: the disclosure exists so that reviewers and readers can compare how results
    were run; a layout the system cannot hold is a wrong disclosure or a wrong system description,
    and either misstates the result.

    Example: `tensor_parallelism` 8, `pipeline_parallelism` 8 and `context_parallelism` 2 (128
    accelerators a replica) on a system of 8 nodes of 8.

    How to fix: log the degrees the run used (NeMo's `TENSOR_MODEL_PARALLEL`, ...), or correct the
    system description's `number_of_nodes` and `accelerators_per_node`.
    """

    code = "REP017"
    name = "parallelism-disagrees-with-system"
    summary = "The parallelism a run discloses does not fit the accelerators of its system."
    severity = Severity.ERROR
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        description = context.system_description(result.submitter, result.system)
        accelerators, _ = hardware.of_system(description)
        if not accelerators or description is None:
            return
        related = [(description.path, description.field_lines.get("accelerators_per_node"))]
        system = f"the system's {accelerators} accelerators ({description.path})"
        found: dict[str, tuple[Finding, int]] = {}

        def note(kind: str, finding: Finding) -> None:
            first, runs = found.get(kind, (finding, 0))
            found[kind] = (first, runs + 1)

        for run in result.runs:
            degrees = {key: disclosure.counted(run, key) for key, _ in disclosure.PARALLELISM}
            model = [degrees[key] for key in disclosure.MODEL_PARALLEL_KEYS]
            expert = degrees["expert_parallelism"]
            if expert is not None and expert[1] > accelerators:
                note(
                    "expert",
                    self.finding(
                        f"expert_parallelism {expert[1]} ({expert[0].where}) is more than {system}",
                        path=run.path,
                        line=expert[0].line,
                        related=related,
                    ),
                )
            if any(degree is None for degree in model):
                continue
            product = math.prod(degree[1] for degree in model if degree is not None)
            spelled = " x ".join(f"{d[0].key.split('_')[0]} {d[1]}" for d in model if d is not None)
            line = model[0][0].line if model[0] is not None else None
            if product > accelerators:
                note(
                    "product",
                    self.finding(
                        f"{spelled} = {product} accelerators hold one replica of the model, more than {system}",
                        path=run.path,
                        line=line,
                        related=related,
                    ),
                )
                continue
            if accelerators % product:
                note(
                    "divides",
                    self.finding(
                        f"{spelled} = {product} does not divide {system}: {accelerators % product} would "
                        "hold no whole replica",
                        path=run.path,
                        line=line,
                        related=related,
                        severity=Severity.WARNING,
                    ),
                )
                continue
            batch = [disclosure.counted(run, key) for key in _BATCH_KEYS]
            if any(part is None for part in batch):
                continue
            micro, accumulation, logged = (part[1] for part in batch if part is not None)
            data_parallel = accelerators // product
            if micro * data_parallel * accumulation != logged:
                note(
                    "batch",
                    self.finding(
                        f"global_batch_size {logged} is not micro_batch_size {micro} x data parallelism "
                        f"{data_parallel} ({accelerators} / {product}) x gradient_accumulation_steps {accumulation} "
                        f"= {micro * data_parallel * accumulation}",
                        path=run.path,
                        line=batch[2][0].line if batch[2] is not None else None,
                        related=related,
                        severity=Severity.WARNING,
                    ),
                )
        for first, runs in found.values():
            if runs > 1:
                first = dataclasses.replace(first, message=f"{first.message} (and {runs - 1} more run(s))")
            yield first


_BATCH_KEYS = ("micro_batch_size", "gradient_accumulation_steps", "global_batch_size")


class PrecisionDisagreesWithConfig(BenchmarkRule):
    """The lowest precision a run discloses contradicts what its launch configuration switches on.

    What it checks: `lowest_numerical_precision_in_linear`, `_in_attn` and `_in_comm` (optional in 6.0,
    required from 6.1) against the launch configuration traced with certainty to the result
    folder (REP003): a configuration that switches FP4 on (`FP4=True`, NVIDIA's NeMo) while the
    logs name a wider format for the linear layers, or another FP4 format than its `FP4_RECIPE`;
    one that switches FP8 or INT8 on (`FP8=True`, `quantization=int8`, as `support.precision`
    reads them) while the logs name a 16-bit or wider format; FP8 attention switched on
    (`FP8_DPA=True`) while the logs name a wider format for attention (`_in_attn`), FP8
    parameter all-gathers (`FP8_PARAM_GATHER=True`) while they name one for communication
    (`_in_comm`); and the logs naming FP8 or
    FP4 for the linear layers where the configuration explicitly switches both off. A warning:
    what a variable switches is the convention of the framework that reads it.

    Why it matters: the precision disclosure is how a reader tells an FP4 result from a BF16 one;
    a disclosure that understates the format used flatters the result.

    Example: `config_GB200_18x4x1.sh` sources `config_common_fp4.sh` (`FP4=True`), the logs
    say `lowest_numerical_precision_in_linear` "bfloat16".

    How to fix: log the formats the run used, or commit the configuration that ran.
    """

    code = "REP018"
    name = "precision-disagrees-with-config"
    summary = "The lowest precision a run discloses contradicts what its launch configuration switches on."
    severity = Severity.WARNING
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        trace = _trace_result(result, context)
        if trace is None or trace.config is None or trace.certainty is not tracing.Certainty.CERTAIN:
            return
        config = trace.config
        linear = _first_format(result, "lowest_numerical_precision_in_linear")
        if linear is not None:
            claim = self._linear(config, linear, precision.evident(result, context))
            if claim is not None:
                yield self._finding(claim, linear)
        for part, switches, what in (
            ("attn", disclosure.FP8_ATTENTION_SWITCHES, "FP8 attention"),
            ("comm", disclosure.FP8_COMMUNICATION_SWITCHES, "FP8 parameter gathers"),
        ):
            logged = _first_format(result, f"lowest_numerical_precision_in_{part}")
            switched = disclosure.switch(config, switches)
            if logged is not None and switched is not None and switched[0] and (disclosure.bits(logged.value) or 0) > 8:
                _, assignment, name = switched
                said = f"{assignment.path}:{assignment.line} switches {what} on ({name}={assignment.value})"
                yield self._finding((said, assignment), logged)

    @staticmethod
    def _linear(
        config: shell.LaunchConfig, logged: disclosure.Disclosed, evidence: precision.Evidence | None
    ) -> tuple[str, shell.Assignment | None] | None:
        """What the configuration says that the logged format of the linear layers contradicts."""
        width = disclosure.bits(logged.value) or 0
        fp4 = disclosure.switch(config, disclosure.FP4_SWITCHES)
        if fp4 is not None and fp4[0]:
            _, assignment, name = fp4
            said = f"{assignment.path}:{assignment.line} switches FP4 on ({name}={assignment.value})"
            recipe = config.first(disclosure.FP4_RECIPES)
            if width > 4:
                return said, assignment
            chosen = recipe[1].value.strip("'\"").lower() if recipe else ""
            if (
                recipe
                and chosen in disclosure.PRECISION_BITS
                and logged.value in ("nvfp4", "mxfp4")
                and chosen != logged.value
            ):
                return f"{recipe[1].path}:{recipe[1].line} chooses {recipe[0]}={recipe[1].value}", recipe[1]
            return None
        if evidence is not None:
            return (f"the configuration switches {evidence.precision} on ({evidence.why})", None) if width > 8 else None
        fp8 = disclosure.switch(config, disclosure.FP8_SWITCHES)
        if fp8 is not None and not fp8[0] and (fp4 is None or not fp4[0]) and width in (4, 6, 8):
            if logged.value in ("int8", "uint8", "int4", "uint4"):
                return None  # integer formats have switches of their own
            _, assignment, name = fp8
            off = f" and FP4 ({fp4[2]}={fp4[1].value})" if fp4 is not None else ""
            return f"{assignment.path}:{assignment.line} switches FP8 off ({name}={assignment.value}){off}", assignment
        return None

    def _finding(self, claim: tuple[str, shell.Assignment | None], logged: disclosure.Disclosed) -> Finding:
        said, assignment = claim
        return self.finding(
            f"{said} but {logged.where} logs {logged.key} {logged.value!r}",
            path=logged.path,
            line=logged.line,
            related=[(assignment.path, assignment.line)] if assignment is not None else [],
        )


def _first_format(result: BenchmarkResult, key: str) -> disclosure.Disclosed | None:
    for run in result.runs:
        found = disclosure.disclosed(run, key)
        if found is not None and disclosure.bits(found.value) is not None:
            return found
    return None


class ConfigFileNotInCode(BenchmarkRule):
    """The launch configuration a run names (`config_filename`) is not in the submission's code.

    What it checks: that the file name each run logs as `config_filename` (optional in 6.0,
    required from 6.1; its last path component) is the name of one of the files of the implementation the result folder is traced to (REP003), listed
    two folder levels deep. Elsewhere in the submitter's `benchmarks/` (another benchmark's or
    implementation's folder) is reported with where it is; nowhere, as missing. A warning: a
    configuration deeper than discovery lists, or named differently at launch, is not seen.

    Why it matters: 6.1 made the key mandatory so that every result names the configuration that
    ran it; a name the package does not hold leaves the result untraceable.

    Example: the logs say `config_filename` "config_GB200_18x4x1xtp1pp1cp2_8b.sh";
    `benchmarks/llama31_8b/implementations/nemo/` holds no such file.

    How to fix: commit the configuration the runs used, under the implementation of the benchmark,
    or log the name it has there.
    """

    code = "REP019"
    name = "config-file-not-in-code"
    summary = "The launch configuration a run names (config_filename) is not in the submission's code."
    severity = Severity.WARNING
    scope = "benchmark"

    def check(self, result: BenchmarkResult, context: CheckContext) -> Iterable[Finding]:
        trace = _trace_result(result, context)
        if trace is None or trace.code is None:
            return  # no code read, or none for this benchmark: REP001 and REP002 say so
        named: dict[str, disclosure.Disclosed] = {}
        for run in result.runs:
            found = disclosure.disclosed(run, "config_filename")
            if found is not None and (name := tracing.logged_config_name([run])) is not None:
                named.setdefault(name, found)
        for name, found in named.items():
            if _holding(trace.code, name):
                continue
            elsewhere = [impl for impl in trace.submission.implementations if _holding(impl, name)]
            where = (
                f"it is in {', '.join(impl.path for impl in elsewhere[:3])}, not in {trace.code.path}"
                if elsewhere
                else f"no file of that name is among the {len(trace.code.files)} files of {trace.code.path}"
                " or any other implementation of the submitter"
            )
            yield self.finding(
                f"{found.where} logs config_filename {found.value!r}: {where}", path=found.path, line=found.line
            )


def _holding(implementation: Implementation, name: str) -> bool:
    return any(entry.path.rsplit("/", 1)[-1] == name for entry in implementation.files)


class DisclosureDisagreesWithConfig(_TracedRule):
    """The parallelism or micro batch a run discloses differs from its launch configuration.

    What it checks: the logged `tensor_parallelism`, `pipeline_parallelism`,
    `context_parallelism`, `expert_parallelism` and `micro_batch_size` (optional in 6.0, required
    from 6.1) against the launch configuration traced to the result folder (REP003): NeMo's and
    Megatron's `TENSOR_MODEL_PARALLEL` (`TP`, `..._SIZE`), `PIPELINE_MODEL_PARALLEL`,
    `CONTEXT_PARALLEL`, `EXPERT_MODEL_PARALLEL` and `MICRO_BATCH_SIZE` (not NVIDIA's `MINIBS`,
    whose meaning varies between its recipes). An error where the trace is certain and the value is
    not an overridable default (`${TP:-2}`), else a warning, as REP011 does for the batch and
    learning rate.

    Why it matters: a rerun from the package would not be the run whose layout was disclosed;
    one of the two is wrong.

    Example: `config_fx_8xb200.sh` sets `TENSOR_MODEL_PARALLEL=2`; the logs say
    `tensor_parallelism` 4.

    How to fix: commit the configuration that produced the logs, or log the layout it sets.
    """

    code = "REP020"
    name = "disclosure-disagrees-with-config"
    summary = "The parallelism or micro batch a run discloses differs from its launch configuration."
    severity = Severity.ERROR

    def check_trace(self, trace: Trace, result: BenchmarkResult) -> Iterable[Finding]:
        if trace.config is None:
            return
        for key, names in (*disclosure.PARALLELISM, ("micro_batch_size", disclosure.MICRO_BATCH)):
            variable = trace.config.first(names)
            logged = _first_counted(result, key)
            if variable is None or logged is None:
                continue
            name, said = variable
            value = shell.number(said.value)
            if value is None or value == logged[1]:
                continue
            certain = not said.default
            yield self.finding(
                f"{said.path}:{said.line} sets {name}={said.value} but {logged[0].where} logs {key} {logged[1]}"
                f"{_hedge(trace, certain)}",
                path=said.path,
                line=said.line,
                related=[(logged[0].path, logged[0].line)],
                severity=_severity(trace, certain),
            )


@hookimpl
def mlperf_audit_register_rules() -> list[type[Rule]]:
    return [
        NoBenchmarksFolder,
        ImplementationMissing,
        ImplementationTraced,
        ImplementationAmbiguous,
        ImplementationNotInPlace,
        ReadmeMissing,
        EnvironmentMissing,
        BaseImageUnpinned,
        SoftwareStackMismatch,
        LaunchConfigMissing,
        ConfigDisagreesWithSystem,
        ConfigDisagreesWithLogs,
        HyperparametersNotLogged,
        SpreadTooSmall,
        SpreadTooLarge,
        ParallelismDisagreesWithSystem,
        PrecisionDisagreesWithConfig,
        ConfigFileNotInCode,
        DisclosureDisagreesWithConfig,
    ]


# --------------------------------------------------------------------------------------------
# `mlperf-audit reproduce`: the recipe of one result folder
# --------------------------------------------------------------------------------------------

_COMMAND = re.compile(
    r"^\s*(?:\$\s*)?(?:sudo\s+)?(sbatch|srun|docker|podman|enroot|bash|sh|python3?|torchrun|"
    r"mpirun|source|export|\.\/\S+|make)\b"
)
MAX_LAUNCH_LINES = 12


def launch_lines(implementation: Implementation) -> list[tuple[str, str]]:
    """Command lines of the implementation's README (shell lines in its code blocks), with where."""
    found: list[tuple[str, str]] = []
    readmes = top_readmes(implementation)
    readmes.sort(key=lambda entry: (entry.path.rsplit("/", 1)[-1].lower() not in ("readme.md", "readme"), entry.path))
    for entry in readmes:
        for number, line in enumerate((code_text.read_text(entry) or "").splitlines(), 1):
            if _COMMAND.match(line) and len(found) < MAX_LAUNCH_LINES:
                found.append((line.strip()[:300], f"{entry.path}:{number}"))
    return found


def recipe(result: BenchmarkResult, context: CheckContext) -> Recipe:
    """Everything the package says about rerunning `result`, and what it lacks."""
    description = context.system_description(result.submitter, result.system)
    division = context.division_of(result)
    framework = str(description.get("framework")) if description is not None and description.get("framework") else None
    missing: list[str] = []
    notes: list[str] = []
    trace = _trace_result(result, context)
    code = trace.code if trace is not None else None
    if trace is None or code is None:
        missing.append("the code: no benchmarks/<benchmark>/implementations/<name>/ for this result")
        how, certainty = "not traced", "none"
    else:
        how = f"{code.path}: {trace.reason}" + (f"; {trace.delegate.path} per its README" if trace.delegate else "")
        certainty = trace.certainty.value if trace.config is not None else "none"
    images: list[Quoted] = []
    pinned: list[bool] = []
    variables: list[tuple[str, Quoted]] = []
    launch: list[Quoted] = []
    selection = None
    if code is not None and trace is not None:
        for entry in dockerfiles(code):
            for image in dockerfile.base_images(code_text.read_text(entry) or ""):
                shown = image.written if image.image in (None, image.written) else f"{image.written} = {image.image}"
                images.append(Quoted(shown, f"{entry.path}:{image.line}"))
                pinned.append(image.image is not None and "@sha256:" in image.image)
                why = (
                    dockerfile.unpinned(image.image) if image.image else "is chosen by a build argument without default"
                )
                if why:
                    missing.append(f"a fixed base image: {image.written} {why}")
        if not dockerfiles(code) and not any(
            dockerfile.ENVIRONMENT_NAMES.match(f.path.rsplit("/", 1)[-1]) for f in code.files
        ):
            missing.append("a Dockerfile or other definition of the environment")
        launch = [Quoted(text, where) for text, where in launch_lines(code)]
        if not launch:
            missing.append("launch instructions: the README gives no command")
        if trace.selection:
            script, _, line = trace.selection.partition(": ")
            selection = Quoted(line, f"{code.path}/{script}")
        if trace.config is None:
            missing.append(f"the launch configuration: {trace.config_reason or 'the implementation holds none'}")
        else:
            for name, assignment in sorted(trace.config.variables.items(), key=lambda i: (i[1].path, i[1].line)):
                variables.append((name, Quoted(assignment.value, f"{assignment.path}:{assignment.line}")))
            if trace.certainty is not tracing.Certainty.CERTAIN:
                missing.append(f"certainty that {trace.config.entry.path} is what ran: {trace.config_reason}")
            for comparison in shell.compare_with_logs(trace.config, result.benchmark, result.runs):
                if not comparison.agrees:
                    missing.append(
                        f"a configuration that reproduces the logs: it gives {comparison.what}, the logs "
                        f"{comparison.key} {comparison.logged.value!r}"
                    )
    version = context.version
    required, constrained = _hyperparameters(version, result.benchmark)
    hyperparameters: list[tuple[str, Any]] = []
    for key in sorted(required | constrained | {"global_batch_size", "opt_base_learning_rate"}):
        logged = shell.logged(result.runs, key)
        if logged is not None:
            hyperparameters.append((key, logged.value))
        elif key in required:
            missing.append(f"the hyperparameter {key}: no run logs it")
    seeds = [(run.name, event.value) for run in result.runs if (event := run.first("seed")) is not None]
    unseeded = [run.name for run in result.runs if run.first("seed") is None]
    if unseeded:
        missing.append(f"the seed of {', '.join(unseeded)}: not logged")
    ran_in: list[Quoted] = []
    for run in result.runs:
        if run.launch is not None and all(q.text != run.launch.container for q in ran_in):
            ran_in.append(Quoted(run.launch.container, f"{run.path} (:::DLPAL)"))
    data = reference.benchmarks.facts(result.benchmark).reproduction_needs
    if not data:
        notes.append(f"what {result.benchmark} needs besides its code is not listed here: see the reference")
    return Recipe(
        result=result.path,
        benchmark=result.benchmark,
        system=result.system,
        division=division,
        implementation=code.path if code is not None else None,
        trace=how,
        certainty=certainty,
        framework=framework,
        images=tuple(images),
        pinned=tuple(pinned),
        ran_in=tuple(ran_in),
        config=trace.config.entry.path if trace is not None and trace.config is not None else None,
        variables=tuple(variables),
        launch=tuple(launch),
        selection=selection,
        hyperparameters=tuple(hyperparameters),
        seeds=tuple(seeds),
        data=data,
        missing=tuple(dict.fromkeys(missing)),
        notes=tuple(notes),
    )


@hookimpl
def mlperf_audit_reproduce(result: BenchmarkResult, context: CheckContext) -> Recipe:
    return recipe(result, context)
