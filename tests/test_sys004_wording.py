"""SYS004's hint follows the evidence (issue 26, item 13): an OEM whose logs keep a vendor
launcher's default `submission_org` ("NVIDIA" in a Dell log) is asked to set it, not told to
"submit your own runs"; that stays for a name the logs give no other reason for."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import published_rounds


@pytest.mark.parametrize(
    ("org", "platform", "hint_starts", "severity"),
    [
        # the logs name this package's system: the vendor's name is no sign of another's runs (information)
        (
            "NVIDIA",
            "1xfx_8xh100",
            "Set submission_org to your organisation in the launcher (NVIDIA's implementation",
            "info",
        ),
        # neither name set: the launcher's defaults say nothing of whose runs these are (information)
        ("NVIDIA", "1xSUBMISSION_PLATFORM_PLACEHOLDER", "Set submission_org to your organisation", "info"),
        ("NVIDIA", "gaudi-8", "Set submission_org to your organisation", "warning"),
        ("OtherCorp", "fx_8xh100", "Submit your own runs", "warning"),
    ],
)
def test_the_hint_says_what_the_evidence_supports(tmp_path, fixtures, cli, org, platform, hint_starts, severity):
    root = tmp_path / "package"
    shutil.copytree(fixtures / "broken" / "run-aborted", root)
    for log in (root / "Fixture" / "results" / "fx_8xh100" / "ssd").glob("result_*.txt"):
        text = log.read_text()
        text = text.replace('"submission_org", "value": "Fixture"', f'"submission_org", "value": "{org}"')
        text = text.replace(
            '"submission_platform", "value": "fx_8xh100"', f'"submission_platform", "value": "{platform}"'
        )
        log.write_text(text)
    result = cli("check", str(root), "--select", "SYS004", "--no-cache", "--format", "json")
    (finding,) = [f for f in json.loads(result.out)["findings"] if f["rule"] == "SYS004"]
    assert finding["severity"] == severity
    assert finding["hint"].startswith(hint_starts), finding
    if org != "OtherCorp":
        assert not finding["hint"].startswith("Submit your own runs")


ROUNDS = published_rounds()


@pytest.mark.skipif(not {"3.1", "4.1", "5.1"} <= set(ROUNDS), reason="v3.1, v4.1 and v5.1 under $MLPERF_AUDIT_ROUNDS")
@pytest.mark.parametrize(
    ("round_name", "folder", "severity", "says"),
    [
        # NVIDIA's dlrm_dcnv2 writes "NVIDIA" in its own train.py; the logs name Supermicro's system
        ("4.1", "Supermicro/results/AS-8125GS-TNHR-1/dlrm_dcnv2", "info", "names this package's system"),
        # AMD's llama2_70b_lora writes "AMD"; the platform "1xMI350X" names Cisco's 1xC885A_M8-8xMI350X-OAM-288GB
        ("5.1", "Cisco/results/1xC885A_M8-8xMI350X-OAM-288GB/llama2_70b_lora", "info", "'1xMI350X' names"),
        # "NVIDIA" beside "8xSUBMISSION_PLATFORM_PLACEHOLDER": neither name set
        ("5.1", "Cisco/results/hpf_n8/dlrm_dcnv2", "info", "neither was set"),
        # the MosaicML composer's name, with a platform that is not Ailiverse's system
        ("3.1", "Ailiverse/results/8xA100_40GB_open/resnet", "warning", "does not name this package's system"),
        # "Habana" in Intel-HabanaLabs's own package: not reported
        ("3.1", "Intel-HabanaLabs/results/HLS-Gaudi2-PT/bert", None, ""),
    ],
)
def test_the_published_names_written_by_another_tool(tmp_path, cli, round_name, folder, severity, says):
    submitter = folder.split("/")[0]
    root = tmp_path / f"v{round_name}"
    shutil.copytree(ROUNDS[round_name] / submitter / "systems", root / submitter / "systems")
    shutil.copytree(ROUNDS[round_name] / folder, root / folder)
    result = cli("check", str(root), "--select", "SYS004", "--no-cache", "--format", "json", "--fail-on", "never")
    found = [f for f in json.loads(result.out)["findings"] if f["rule"] == "SYS004"]
    if severity is None:
        assert found == []
        return
    (finding,) = found
    assert finding["severity"] == severity and says in finding["message"], finding
    assert " in all " in finding["message"]
