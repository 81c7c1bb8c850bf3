"""A submitter's own repository checked at its root (issue 26, item 1): `mlperf-audit check .` in
the folder a submitter commits from, as the pre-commit hook runs it. Its version-control and tooling
entries are not package content; dot-names inside the package still are errors, and a hidden folder
that holds a submission is still reported."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

#: What a submitter's repository typically holds beside the package.
TOOLING = {
    ".gitignore": "*.log\n",
    ".gitattributes": "*.txt text\n",
    ".pre-commit-config.yaml": "repos: []\n",
    ".github/workflows/audit.yml": "on: push\n",
}


def _checkout(fixtures: Path, tmp_path: Path) -> Path:
    """The clean fixture submission as a git repository with its tooling, committed."""
    root = tmp_path / "acme"
    shutil.copytree(fixtures / "clean" / "Fixture", root)
    for name, text in TOOLING.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "package"], check=True)
    return root


def _findings(cli, path: Path, *extra: str) -> list[dict]:
    result = cli("check", str(path), "--no-cache", "--format", "json", *extra)
    assert result.code in (0, 1), result.err
    return json.loads(result.out)["findings"]


def test_repository_entries_at_the_checked_root_are_not_package_content(tmp_path, fixtures, cli):
    root = _checkout(fixtures, tmp_path)
    findings = _findings(cli, root)
    flagged = [f for f in findings if f["rule"] in ("PKG015", "PKG016", "PKG022")]
    assert flagged == [], flagged
    assert not [f for f in findings if f["severity"] == "error"], findings


def test_a_big_file_in_git_is_not_package_content(tmp_path, fixtures, cli):
    """A pack file over 50 MB (any repository with history) is the repository's, not the package's."""
    root = _checkout(fixtures, tmp_path)
    with open(root / ".git" / "objects" / "pack" / "pack-big.pack", "wb") as pack:
        pack.truncate(51 * 1000 * 1000)
    assert [f for f in _findings(cli, root) if f["rule"] == "PKG016"] == []


@pytest.mark.parametrize(
    "name",
    ["results/fx_8xh100/bert/.hidden", "benchmarks/.github/workflow.yml", "systems/.gitignore", ".DS_Store"],
)
def test_dot_names_inside_the_package_are_still_errors(tmp_path, fixtures, cli, name):
    root = _checkout(fixtures, tmp_path)
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text("x")
    shown = name.split("/.")[0] + "/." + name.split("/.")[1].split("/")[0] if "/." in name else name
    hits = [f for f in _findings(cli, root) if f["rule"] == "PKG015"]
    assert [(f["path"], f["severity"]) for f in hits] == [(shown, "error")], hits


def test_a_tooling_folder_holding_a_submission_is_reported(tmp_path, fixtures, cli):
    """`.github/Acme/` holding a submission is never checked: said, as at a repository's root."""
    root = _checkout(fixtures, tmp_path)
    shutil.copytree(fixtures / "clean" / "Fixture", root / ".github" / "Acme")
    hits = [f for f in _findings(cli, root) if f["rule"] == "PKG022"]
    assert [f["path"] for f in hits] == [".github"], hits
    assert "holds a submission (.github/Acme)" in hits[0]["message"]


def test_tooling_names_inside_a_submitter_folder_of_a_repository_are_errors(tmp_path, fixtures, cli):
    """In a results repository a submitter's folder is package content: its `.github` is flagged."""
    repo = tmp_path / "repo"
    shutil.copytree(fixtures / "clean", repo)
    (repo / "Fixture" / ".github" / "workflows").mkdir(parents=True)
    (repo / "Fixture" / ".github" / "workflows" / "audit.yml").write_text("on: push\n")
    (repo / "Fixture" / ".gitignore").write_text("*.log\n")
    hits = sorted(f["path"] for f in _findings(cli, repo) if f["rule"] == "PKG015")
    assert hits == ["Fixture/.github", "Fixture/.gitignore"], hits
