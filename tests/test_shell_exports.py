"""`reproduce` reads a launch configuration's variables as the shell splits its words (issue 26,
item 13): `export NCCL_MIN_P2P_NCHANNELS=32;` (Dell's v4.1 llama2_70b_lora configuration) sets 32,
not "32;"; several commands on a line, comments and quotes are read as bash reads them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

LINES = """
export NCCL_MIN_P2P_NCHANNELS=32;
export NCCL_MIN_CTAS=16 && export NCCL_ALGO=Ring
export NCCL_PROTO="LL128"  # a comment; not part of the value
export TAG='a;b'
export THREADS=8 || true
declare -x SHARDS=4; echo done
FOR_ONE_COMMAND=1 some_command
export FROM_A_COMMAND=$(nproc);
export UNCLOSED="32
"""

EXPECTED = {
    "NCCL_MIN_P2P_NCHANNELS": "32",
    "NCCL_MIN_CTAS": "16",
    "NCCL_ALGO": "Ring",
    "NCCL_PROTO": "LL128",
    "TAG": "a;b",
    "THREADS": "8",
    "SHARDS": "4",
}


@pytest.fixture
def result_folder(tmp_path, fixtures):
    root = tmp_path / "package"
    shutil.copytree(fixtures / "clean", root)
    config = root / "Fixture" / "benchmarks" / "gnn" / "implementations" / "pytorch" / "config_fx_8xh100.sh"
    config.write_text(config.read_text() + LINES)
    return root / "Fixture" / "results" / "fx_8xh100" / "gnn"


def _reproduce(folder, *args):
    return subprocess.run(
        [sys.executable, "-m", "mlperf_audit", "reproduce", str(folder), "--no-cache", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=folder.parents[3],
    )


def test_exported_values_are_the_words_the_shell_gives(result_folder):
    result = _reproduce(result_folder, "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    variables = {v["name"]: v["text"] for v in json.loads(result.stdout)["variables"]}
    assert {name: variables.get(name) for name in EXPECTED} == EXPECTED
    # set for one command only, computed by a command, or not parseable: no value is claimed
    assert not {"FOR_ONE_COMMAND", "FROM_A_COMMAND", "UNCLOSED"} & variables.keys(), variables
    assert variables["BATCHSIZE"] == "4096" and variables["DGXNGPU"] == "8"  # the fixture's own, unchanged


def test_the_text_recipe_quotes_the_value_without_the_separator(result_folder):
    result = _reproduce(result_folder)
    line = next(line for line in result.stdout.splitlines() if "NCCL_MIN_P2P_NCHANNELS" in line)
    assert "NCCL_MIN_P2P_NCHANNELS = «32»" in line, line
