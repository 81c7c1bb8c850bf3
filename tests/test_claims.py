"""Claims as a validated format (issue 26, item 10): a misspelt key, benchmark, submitter or system
is named with the name of the tree it was likely meant as, and the exit code says whether every
claim holds (docs/claims.md)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import published_rounds

CLEAN = Path(__file__).resolve().parent.parent / "fixtures" / "packages" / "clean"
RESULT = "{submitter: Fixture, system: fx_8xh100}"


def claims_file(tmp_path: Path, *claims: str) -> Path:
    path = tmp_path / "claims.yaml"
    path.write_text("claims:\n" + "".join(f"  - {claim}\n" for claim in claims), encoding="utf-8")
    return path


def audit(cli, target: Path, claims: Path, *options: str):
    return cli("audit", str(target), "--claims", str(claims), "--no-cache", "-j", "1", *options)


def verdicts(result) -> dict[str, dict]:
    return {claim["id"]: claim for claim in json.loads(result.out)["claims"]}


def bert_minutes(cli) -> float:
    """The clean package's bert score as `score` recomputes it."""
    result = cli("score", str(CLEAN), "--format", "json", "--no-cache")
    (bert,) = [r for r in json.loads(result.out)["results"] if r["benchmark"] == "bert"]
    return bert["score_minutes"]


def test_a_misspelt_key_is_named_with_the_known_one(cli, tmp_path):
    claims = claims_file(tmp_path, f"{{id: a, benchmark: bert, result: {RESULT}, minutes: 3, speedup_pct: 5}}")
    result = audit(cli, CLEAN, claims)
    assert result.code == 2 and "unknown key 'speedup_pct'; did you mean 'speedup_percent'?" in result.err
    assert result.err.count("\n") == 1 and not result.out


@pytest.mark.parametrize(
    "written, meant",
    [("llama2", "llama2_70b_lora"), ("stable-diffusion", "stable_diffusion"), ("BERT", "bert"), ("gpt", "gpt3")],
)
def test_a_benchmark_written_short_or_otherwise_is_suggested(cli, tmp_path, written, meant):
    claims = claims_file(tmp_path, f"{{id: a, benchmark: {written}, result: {RESULT}, minutes: 3}}")
    result = audit(cli, CLEAN, claims)
    assert result.code == 2, result.err
    assert f"benchmark {written!r} is no MLPerf Training benchmark; did you mean {meant!r}?" in result.err


def test_a_misspelt_submitter_is_suggested_from_the_tree(cli, tmp_path):
    claims = claims_file(
        tmp_path, "{id: a, benchmark: bert, result: {submitter: Fixtur, system: fx_8xh100}, minutes: 14}"
    )
    result = audit(cli, CLEAN, claims, "--format", "json")
    claim = verdicts(result)["a"]
    assert claim["verdict"] == "not checkable"
    assert claim["reason"] == "no submitter 'Fixtur' in PATH; did you mean 'Fixture'?"


def test_a_system_named_as_its_description_names_it_is_led_to_its_folder(cli, tmp_path):
    """The issue's case: `ND_H200_v5 x64`, the system_name of Azure's `ND_H200_v5_n64_nemo`."""
    package = tmp_path / "package"
    shutil.copytree(CLEAN, package)
    description = package / "Fixture" / "systems" / "fx_8xh100.json"
    data = json.loads(description.read_text())
    data["system_name"] = "FX H100 x8"
    description.write_text(json.dumps(data))
    claims = claims_file(
        tmp_path,
        "{id: by-name, benchmark: bert, result: {submitter: Fixture, system: FX H100 x8}, minutes: 14}",
        "{id: misspelt, benchmark: bert, result: {submitter: Fixture, system: fx_8xh10}, minutes: 14}",
        "{id: not-held, benchmark: gpt3, result: {submitter: Fixture, system: fx_8xh100}, minutes: 450}",
    )
    result = audit(cli, package, claims, "--format", "json")
    found = verdicts(result)
    assert {claim["verdict"] for claim in found.values()} == {"not checkable"}
    assert found["by-name"]["reason"].startswith(
        "no system folder 'FX H100 x8' of Fixture in PATH; did you mean 'fx_8xh100'?"
    )
    assert found["misspelt"]["reason"] == "no system 'fx_8xh10' of Fixture in PATH; did you mean 'fx_8xh100'?"
    assert found["not-held"]["reason"].startswith("Fixture/fx_8xh100 has no gpt3 result in PATH (it has bert, dlrm")
    text = audit(cli, package, claims).out
    assert "recomputed None" not in text and "claimed None" not in text
    assert "    why: no system folder 'FX H100 x8' of Fixture in PATH; did you mean 'fx_8xh100'?" in text


def run_audit(target: Path, claims: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mlperf_audit", "audit", str(target), "--claims", str(claims), "--no-cache"]
    return subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"}, cwd=target.parent
    )


def test_exit_codes_say_whether_the_claims_hold(cli, tmp_path):
    """0 when each claim holds, 1 when one is overstated or cannot be checked (the package itself
    has no error: the claims decide), 2 for a claims file that is not one."""
    minutes = bert_minutes(cli)
    holds = claims_file(tmp_path, f"{{id: holds, benchmark: bert, result: {RESULT}, minutes: {minutes:.2f}}}")
    supported = run_audit(CLEAN, holds)
    assert supported.returncode == 0, supported.stdout[-2000:] + supported.stderr
    assert "[supported] holds" in supported.stdout
    overstated = claims_file(
        tmp_path, f"{{id: too-fast, benchmark: bert, result: {RESULT}, minutes: {minutes * 0.8:.2f}}}"
    )
    failed = run_audit(CLEAN, overstated)
    assert failed.returncode == 1 and "[overstated] too-fast" in failed.stdout, failed.stderr
    unknown = claims_file(
        tmp_path, "{id: elsewhere, benchmark: bert, result: {submitter: Acme, system: x}, minutes: 9}"
    )
    unchecked = run_audit(CLEAN, unknown)
    assert unchecked.returncode == 1 and "[not checkable] elsewhere" in unchecked.stdout
    understated = claims_file(
        tmp_path, f"{{id: modest, benchmark: bert, result: {RESULT}, minutes: {minutes * 1.2:.2f}}}"
    )
    assert run_audit(CLEAN, understated).returncode == 0  # claiming less than was achieved is honest
    help_text = subprocess.run(
        [sys.executable, "-m", "mlperf_audit", "audit", "--help"], capture_output=True, text=True
    )
    assert "1  a finding at or above --fail-on, or a claim overstated or not checkable" in help_text.stdout


V41 = published_rounds().get("4.1")


@pytest.mark.skipif(V41 is None, reason="the v4.1 round is not under $MLPERF_AUDIT_ROUNDS")
def test_the_issues_azure_system_name(cli, tmp_path):
    assert V41 is not None
    claims = claims_file(
        tmp_path,
        "{id: azure, benchmark: llama2_70b_lora, result: {submitter: Azure, system: ND_H200_v5 x64}, minutes: 1.6}",
        "{id: azure-folder, benchmark: llama2_70b_lora, result: {submitter: Azure, system: ND_H200_v5_n64_nemo},"
        " minutes: 1.6, accelerators: 512}",
    )
    result = audit(cli, V41 / "Azure", claims, "--format", "json")
    found = verdicts(result)
    assert found["azure"]["reason"].startswith(
        "no system folder 'ND_H200_v5 x64' of Azure in PATH; did you mean 'ND_H200_v5_n64_nemo'?"
    )
    assert found["azure-folder"]["verdict"] == "supported" and result.code == 1  # one claim not checkable


DOC = Path(__file__).resolve().parent.parent / "docs" / "claims.md"


def test_the_format_documents_every_key():
    from mlperf_audit.review.claims import EXPECTED, Claim, ClaimsFile, Party

    table = DOC.read_text(encoding="utf-8").split("## Format", 1)[1].split("## Validation", 1)[0]
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", table, re.M))
    keys = set(Claim.__struct_fields__)
    assert documented == keys, documented ^ keys
    assert set(ClaimsFile.__struct_fields__) == {"claims"} and set(Party.__struct_fields__) <= set(EXPECTED)
    for verdict in ("supported", "understated", "overstated", "not checkable"):
        assert f"| `{verdict}` |" in DOC.read_text(encoding="utf-8")


@pytest.mark.sample
def test_the_documented_example_is_what_the_sample_gives(cli, sample, tmp_path):
    """docs/claims.md pastes the output of its example on the real v4.1 sample: it stays true."""
    text = DOC.read_text(encoding="utf-8")
    example = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    shown = text.split("```text\n", 1)[1].split("```", 1)[0]
    claims = tmp_path / "claims.yaml"
    claims.write_text(example, encoding="utf-8")
    result = cli("audit", str(sample), "--claims", str(claims), "-j", "1")
    assert result.code == 1, result.err
    assert "Claims:\n" + result.out.split("\nClaims:\n", 1)[1] == shown
