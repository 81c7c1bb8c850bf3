#!/usr/bin/env python3
"""Build the reference dataset constants of every round and benchmark (HYP003's data).

For each round and benchmark, the value that `train_samples` and `eval_samples` must have, from
the first of these that names one:

1. the round's own rules: an equality check in the closed rule file of the pinned mlperf-logging
   (`v['value'] == 89137319`); HYP003 is then an error, as the rule is;
2. the reference implementation (github.com/mlcommons/training), where it logs the value as a
   literal (`REFERENCE` below, each with its file and line at commit `REFERENCE_COMMIT`);
3. the published majority of the round: the value that more submitters log than every other value
   together, held by at least `MIN_SUBMITTERS` submitters (one submitter's many systems are one
   voice), over the closed-division folders of the round snapshot (the first run of each).

An entry from the reference also lists the placeholders the reference itself logged in that round
(`placeholders`: each value with its source, `PLACEHOLDERS` below): HYP003 does not report a value
the round's reference logged.

Every entry also lists what the published folders log (`peers`: each value with its submitters and
folders), so that a finding can say how many peers use which. Rounds not under ROUNDS_DIR keep
only what the rules and the reference name (what CI can regenerate: `tests/test_constants.py`).

    python bench/constants.py --rounds-dir /work/rounds            # print what differs from the data
    python bench/constants.py --rounds-dir /work/rounds --write    # regenerate data/constants.json
    python bench/constants.py --rounds-dir /work/rounds --report   # per round, the folders that differ
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from mlperf_audit.reference import rulesets
from mlperf_audit_rules.support.official_compliance import load_config

DATA = Path(__file__).resolve().parent.parent / "rules" / "mlperf_audit_rules" / "data" / "constants.json"
KEYS = ("train_samples", "eval_samples")
#: A published majority needs this many submitters behind it.
MIN_SUBMITTERS = 3
REFERENCE_COMMIT = "aa344c7fb900e82ed19fb94aebfed50c63ab2204"
#: Where the reference logs a dataset's size under the key (a literal or the length of the dataset), with
#: the rounds in which the benchmark name meant that reference (None: every round). Elsewhere the key is not
#: a constant of the dataset: the length of a data loader (retinanet, maskrcnn: batches per epoch), samples
#: consumed (bert, llama31), a product with the batch size (dlrm_dcnv2's train_samples) or a filtered count
#: that implementations compute differently (rnnt's train_samples). A value the rules require is checked in
#: any case.
DATASET_SIZES: dict[tuple[str, str], tuple[str, ...] | None] = {
    ("bert", "eval_samples"): None,
    ("dlrm", "eval_samples"): None,  # day 23 of Criteo 1TB, as the dlrm_dcnv2 rules require from 3.0
    ("gpt3", "eval_samples"): None,
    ("llama2_70b_lora", "train_samples"): None,  # llama2_70b_lora/scripts/mlperf_logging_utils.py:130
    ("llama2_70b_lora", "eval_samples"): None,  # llama2_70b_lora/scripts/mlperf_logging_utils.py:134
    ("resnet", "train_samples"): None,
    ("resnet", "eval_samples"): None,
    # SSD-ResNet34 on COCO (retired_benchmarks/ssd-v1/ssd/train.py:239-240: len(train_coco), len(val_coco)); from
    # v2.0 "ssd" is RetinaNet, whose reference logs len(data_loader)
    ("ssd", "train_samples"): ("1.0.0", "1.1.0"),
    ("ssd", "eval_samples"): ("1.0.0", "1.1.0"),
    ("stable_diffusion", "train_samples"): None,
    ("stable_diffusion", "eval_samples"): None,
}
#: (benchmark, key) -> the literal values the reference implementations log, with where.
REFERENCE: dict[tuple[str, str], list[tuple[int, str]]] = {
    ("bert", "eval_samples"): [(10000, "retired_benchmarks/bert/mlp_logging.py:83")],
    ("resnet", "train_samples"): [(1281167, "retired_benchmarks/resnet-tf2/tensorflow2/imagenet_preprocessing.py:48")],
    ("resnet", "eval_samples"): [(50000, "retired_benchmarks/resnet-tf2/tensorflow2/imagenet_preprocessing.py:49")],
    ("gpt3", "eval_samples"): [
        (11590004, "retired_benchmarks/gpt3/megatron-lm/megatron/training.py:143"),
        (24567, "retired_benchmarks/gpt3/paxml/c4_mllog.py:120"),
    ],
    ("stable_diffusion", "train_samples"): [(6513144, "retired_benchmarks/stable_diffusion/main.py:613")],
    ("stable_diffusion", "eval_samples"): [(30000, "retired_benchmarks/stable_diffusion/main.py:614")],
    ("deepseekv3_671b", "train_samples"): [(1574207408, "llm_moe_pretraining/nemo/pretrain_deepseek_v3_671b.py:102")],
}
#: (benchmark, key) -> the placeholders the reference implementation itself logged in some rounds, with the
#: rounds, where and the commits between which the line stood: a submitter whose implementation keeps the
#: reference's placeholder logs what the reference logs, and HYP003 does not report it.
PLACEHOLDERS: dict[tuple[str, str], list[tuple[int, tuple[str, ...], str]]] = {
    # stable_diffusion/main.py:613 from 64b14a9a (2023-06-22, "Added Stable Diffusion (SD) benchmark - Part 2",
    # before v3.1) to d36f544a (2024-02-29, "[SD] fixed number of training samples", before v4.0's deadline):
    # `value=1 # TODO(ahmadki): a placeholder until a dataset is picked` (v3.1 Intel-HabanaLabs logs it)
    ("stable_diffusion", "train_samples"): [
        (
            1,
            ("3.1.0",),
            "mlcommons/training stable_diffusion/main.py:613 from commit 64b14a9a (2023-06-22) to d36f544a "
            "(2024-02-29): 'value=1 # TODO(ahmadki): a placeholder until a dataset is picked'",
        )
    ],
}
#: The evaluation frequency the rules set in samples (training_rules.adoc "Evaluation frequency" and the
#: deprecated benchmarks' table): benchmark -> (first version, last version, samples, the citation of
#: `data/policies.json` that quotes it: bench/policies.py pins it to each round's text). An evaluation
#: point is then a multiple of CEIL(samples / global_batch_size) * global_batch_size; the rules let the
#: first evaluations be skipped (llama2_70b_lora, llama31_405b) and stable_diffusion's checkpoints be
#: evaluated selectively, so the points are multiples of the interval, not every multiple.
EVAL_FREQUENCY: list[tuple[str, str, str, int, str]] = [
    ("flux1", "5.1.0", "6.1.0", 262144, "eval-frequency-flux1"),
    ("gpt_oss_20b", "6.0.0", "6.1.0", 12288, "eval-frequency-gpt_oss_20b"),
    ("llama31_8b", "5.1.0", "6.1.0", 12288, "eval-frequency-llama31_8b"),
    ("llama31_405b", "5.0.0", "5.0.0", 46080, "eval-frequency-llama31_405b-v5.0"),
    ("llama31_405b", "5.1.0", "6.1.0", 18432, "eval-frequency-llama31_405b"),
    ("llama2_70b_lora", "4.0.0", "6.1.0", 384, "eval-frequency-llama2_70b_lora"),
    ("gpt3", "3.0.0", "4.1.0", 24576, "eval-frequency-gpt3"),
    ("stable_diffusion", "4.0.0", "5.0.0", 512000, "eval-frequency-stable_diffusion"),
]
_EQUALS = re.compile(r"\s*v\[['\"]value['\"]\]\s*==\s*(\d+)\s*")
_ROUND = re.compile(r"v(\d+)\.(\d+)")
NOTE = (
    "Reference values of the dataset constants per round and benchmark: from the round's rules (mlperf-logging "
    "closed rule files), else the reference implementation (github.com/mlcommons/training), else the published "
    "majority of the round's closed division; `peers` is what the published folders log. Generated by "
    "bench/constants.py; do not edit by hand."
)


def number(value: Any) -> int | float | None:
    """A logged number, an integral float as an int (3001600.0 is 3001600); anything else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def required_by_rules(version: str, benchmark: str, key: str) -> int | None:
    """The value the round's closed rule file requires of `key` with an equality check, if any."""
    config = load_config(version, f"closed_{benchmark}")
    record = config.keys.get(key) if config else None
    for source, _ in record.checks if record else ():
        match = _EQUALS.fullmatch(source)
        if match:
            return int(match.group(1))
    return None


def _logged(path: Path) -> dict[str, Any]:
    """The first value of each KEYS key and submission_division in a result file."""
    wanted = {f'"key": "{key}"': key for key in (*KEYS, "submission_division")}
    found: dict[str, Any] = {}
    with path.open(encoding="utf-8", errors="replace") as stream:
        for line in stream:
            if len(found) == len(wanted):
                break
            for needle, key in wanted.items():
                if key not in found and needle in line and ":::MLLOG " in line:
                    try:
                        found[key] = json.loads(line.split(":::MLLOG ", 1)[1]).get("value")
                    except (ValueError, AttributeError):
                        pass
    return found


def survey_round(folder: Path) -> dict[str, dict[str, dict[int | float, list[str]]]]:
    """benchmark -> key -> value -> the closed folders (submitter/system) whose first run logs it."""
    found: dict[str, dict[str, dict[int | float, list[str]]]] = defaultdict(lambda: defaultdict(dict))
    for result in sorted(folder.glob("*/results/*/*")):
        runs = sorted(result.glob("result_*.txt"), key=lambda p: rulesets_key(p.name))
        if not result.is_dir() or not runs:
            continue
        logged = _logged(runs[0])
        if logged.get("submission_division") != "closed":
            continue
        name = f"{result.parent.parent.parent.name}/{result.parent.name}"
        for key in KEYS:
            value = number(logged.get(key))
            if value is not None:
                found[result.name][key].setdefault(value, []).append(name)
    return found


def rulesets_key(name: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def entry(version: str, benchmark: str, key: str, peers: dict[int | float, list[str]]) -> dict[str, Any] | None:
    shown_peers = {
        str(value): {"submitters": len({f.split("/")[0] for f in folders}), "folders": len(folders)}
        for value, folders in sorted(peers.items(), key=lambda item: (-len(item[1]), str(item[0])))
    }
    required = required_by_rules(version, benchmark, key)
    if required is not None:
        rule = f"training_{version}/closed_{benchmark}.yaml"
        return {
            "values": [required],
            "required": True,
            "source": f"the rules: {rule} checks v['value'] == {required} (mlperf-logging)",
            "peers": shown_peers,
        }
    if (benchmark, key) not in DATASET_SIZES or version not in (DATASET_SIZES[(benchmark, key)] or (version,)):
        return None
    reference = REFERENCE.get((benchmark, key))
    if reference:
        found = {
            "values": [value for value, _ in reference],
            "required": False,
            "source": "the reference implementation: "
            + ", ".join(f"{value} at mlcommons/training {where}" for value, where in reference)
            + f" (commit {REFERENCE_COMMIT[:12]})",
            "peers": shown_peers,
        }
        placeholders = [
            {"value": value, "source": where}
            for value, rounds, where in PLACEHOLDERS.get((benchmark, key), ())
            if version in rounds
        ]
        if placeholders:
            found["placeholders"] = placeholders
        return found
    if not peers:
        return None
    submitters = {value: {f.split("/")[0] for f in folders} for value, folders in peers.items()}
    majority = max(submitters, key=lambda value: (len(submitters[value]), len(peers[value])))
    others = sum(len(names) for value, names in submitters.items() if value != majority)
    if len(submitters[majority]) < MIN_SUBMITTERS or len(submitters[majority]) <= others:
        return None
    return {
        "values": [majority],
        "required": False,
        "source": f"the published majority of v{version[:-2]}'s closed division",
        "peers": shown_peers,
    }


def build(rounds_dir: Path | None) -> dict[str, Any]:
    """The whole table: every supported round's rules and references, and the majorities of the rounds found."""
    surveyed: dict[str, dict[str, dict[str, dict[int | float, list[str]]]]] = {}
    if rounds_dir is not None:
        for folder in sorted(rounds_dir.iterdir()):
            match = _ROUND.fullmatch(folder.name)
            if match and folder.is_dir():
                surveyed[f"{match.group(1)}.{match.group(2)}.0"] = survey_round(folder)
    table: dict[str, Any] = {}
    for ruleset in rulesets.SUPPORTED:
        version = ruleset.split("-", 1)[1]
        if not version[0].isdigit() or int(version.split(".")[0]) < 1:
            continue
        benchmarks = {
            path.stem.removeprefix("closed_") for path in rulesets.get(ruleset).compliance_dir.glob("closed_*.yaml")
        }
        benchmarks.discard("common")
        benchmarks |= set(surveyed.get(version, {}))
        for benchmark in sorted(benchmarks):
            for key in KEYS:
                peers = surveyed.get(version, {}).get(benchmark, {}).get(key, {})
                found = entry(version, benchmark, key, peers)
                if found is not None:
                    table.setdefault(version, {}).setdefault(benchmark, {})[key] = found
    return {
        "note": NOTE,
        "keys": list(KEYS),
        "min_submitters": MIN_SUBMITTERS,
        "rounds": table,
        "eval_frequency": eval_frequency(),
    }


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def eval_frequency() -> dict[str, dict[str, Any]]:
    """version -> benchmark -> the rules' evaluation interval in samples, with the citation of the rules' text."""
    table: dict[str, dict[str, Any]] = {}
    for ruleset in rulesets.SUPPORTED:
        version = ruleset.split("-", 1)[1]
        for benchmark, first, last, samples, citation in EVAL_FREQUENCY:
            if _version_key(first) <= _version_key(version) <= _version_key(last):
                table.setdefault(version, {})[benchmark] = {
                    "samples": samples,
                    "citation": citation,
                }
    return table


def differing(rounds_dir: Path, table: dict[str, Any]) -> list[str]:
    """Per round, the closed folders whose first run logs another value than the reference."""
    lines = []
    for folder in sorted(rounds_dir.iterdir()):
        match = _ROUND.fullmatch(folder.name)
        if not match:
            continue
        version = f"{match.group(1)}.{match.group(2)}.0"
        for benchmark, keys in sorted(survey_round(folder).items()):
            for key, values in sorted(keys.items()):
                reference = table["rounds"].get(version, {}).get(benchmark, {}).get(key)
                if reference is None:
                    continue
                for value, folders in sorted(values.items(), key=lambda item: str(item[0])):
                    if value not in reference["values"]:
                        lines.append(
                            f"{folder.name} {benchmark} {key} {value} (reference {reference['values']}): {', '.join(folders)}"
                        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--rounds-dir", type=Path, help="extracted rounds (v1.0, ...); without it, rules and references only"
    )
    parser.add_argument("--write", action="store_true", help=f"write {DATA.name}")
    parser.add_argument("--report", action="store_true", help="list, per round, the folders that differ")
    args = parser.parse_args(argv)
    table = build(args.rounds_dir)
    text = json.dumps(table, indent=1, sort_keys=True) + "\n"
    if args.write:
        DATA.write_text(text, encoding="utf-8")
        print(f"wrote {DATA}")
    elif not DATA.is_file() or DATA.read_text(encoding="utf-8") != text:
        print(f"{DATA.name} differs from what the rounds give (--write to regenerate)")
    if args.report and args.rounds_dir is not None:
        print("\n".join(differing(args.rounds_dir, table)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
