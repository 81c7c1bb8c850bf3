"""SYS004's hint follows the evidence (issue 26, item 13): an OEM whose logs keep a vendor
launcher's default `submission_org` ("NVIDIA" in a Dell log) is asked to set it, not told to
"submit your own runs"; that stays for a name the logs give no other reason for."""

from __future__ import annotations

import json
import shutil

import pytest


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
        ("NVIDIA", "1xSUBMISSION_PLATFORM_PLACEHOLDER", "Set submission_org to your organisation", "warning"),
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
