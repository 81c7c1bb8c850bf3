"""Symbolic links are never followed out of PATH: a linked folder is never followed at all (PKG004),
a linked file is read only when its target, resolved through every link, lies inside PATH (else
PKG021, and its content is never read). Each test is an attack that read files outside PATH."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from mlperf_audit import Problem
from mlperf_audit.errors import TargetError
from mlperf_audit.reading.discovery import discover

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "packages" / "broken" / "run-aborted" / "Fixture"
SSD = Path("results") / "fx_8xh100" / "ssd"
#: Text that only files outside PATH hold: if any output quotes it, something outside PATH was read.
SECRET = "SECRET-OUTSIDE-PATH-4711"


@pytest.fixture
def outside(tmp_path) -> Path:
    """A folder beside the package that the package must not reach: a submission of its own, and a
    file holding the secret."""
    folder = tmp_path / "outside"
    shutil.copytree(FIXTURE, folder)
    description = folder / "systems" / "fx_8xh100.json"
    description.write_text(description.read_text().replace('"hw_notes": "', f'"hw_notes": "{SECRET} '))
    (folder / "secret.txt").write_text(f"{SECRET}\n")
    return folder


@pytest.fixture
def package(tmp_path) -> Path:
    root = tmp_path / "pkg" / "Fixture"
    shutil.copytree(FIXTURE, root)
    return root


def check(cli, target: Path, *options: str):
    result = cli("check", str(target), "--format", "json", *options)
    assert "Traceback" not in result.err and "internal error" not in result.err, result.err
    return result


def findings(result) -> list[dict]:
    return json.loads(result.out)["findings"]


def test_linked_results_and_systems_out_of_path_are_not_read(cli, tmp_path, outside):
    """The attack: `results -> ../outside/results` and `systems -> ../outside/systems` made the
    outside submission's logs and description checked and quoted as the package's."""
    root = tmp_path / "links"
    root.mkdir()
    os.symlink(outside / "results", root / "results")
    os.symlink(outside / "systems", root / "systems")
    result = check(cli, root)
    assert result.code == 2
    assert "no MLPerf results here: 2 symbolic link(s) were not followed (results, systems)" in result.err
    assert SECRET not in result.out + result.err
    with pytest.raises(TargetError, match="2 symbolic link"):
        discover(root)


def test_linked_results_beside_a_real_systems_folder(cli, package, outside):
    """The attack: a submission with a real systems/ and `results -> outside` had the outside
    results scored as its own."""
    shutil.rmtree(package / "results")
    os.symlink(outside / "results", package / "results")
    found = findings(check(cli, package))
    assert [(f["rule"], f["path"], f["severity"]) for f in found if f["rule"] == "PKG004"] == [
        ("PKG004", "results", "warning")
    ]
    assert not [f for f in found if (f["path"] or "").startswith("results/")]
    tree = discover(package)
    assert tree.benchmark_folders == () and tree.submissions[0].system_dirs == ()


def test_linked_submitter_folders_in_a_repository(cli, tmp_path, outside):
    """The attack: a repository holding only `Other -> /elsewhere/Other` was checked as a repository
    of the outside submitter; the error must say why nothing was found."""
    repository = tmp_path / "repo"
    repository.mkdir()
    os.symlink(outside, repository / "Other")
    result = check(cli, repository)
    assert result.code == 2 and "1 symbolic link(s) were not followed (Other)" in result.err


def test_linked_folder_inside_a_submitter_of_a_repository(cli, tmp_path, outside):
    """The attack: in a repository, `Sub/results -> outside` (Sub/systems real) made the outside
    results part of Sub's; a submitter whose only folders are links is no submitter at all."""
    repository = tmp_path / "repo"
    shutil.copytree(FIXTURE, repository / "Sub")
    shutil.rmtree(repository / "Sub" / "results")
    os.symlink(outside / "results", repository / "Sub" / "results")
    found = findings(check(cli, repository))
    linked = [f for f in found if f["rule"] == "PKG004"]
    assert [f["path"] for f in linked] == ["Sub/results"]  # reported once, though probed and listed
    assert not [f for f in found if (f["path"] or "").startswith("Sub/results/")]


@pytest.mark.parametrize(
    "name",
    [
        "results/fx_8xh100/ssd/result_9.txt",
        "results/fx_8xh100/ssd/package_checker_params",
        "results/fx_8xh100/package_checker_params",
        "systems/fx_8xh100.json",
        "results/fx_8xh100/ssd/scaling.json",
    ],
)
def test_linked_file_outside_path_is_never_read(cli, package, outside, name):
    """The attack: a file linked to one outside PATH was read and its content quoted back (an
    unknown directive of `package_checker_params`, a log line, a description field)."""
    link = package / name
    if link.exists():
        link.unlink()
    os.symlink(outside / "secret.txt", link)
    result = check(cli, package)
    found = findings(result)
    assert SECRET not in result.out + result.err
    skipped = [f for f in found if f["rule"] == "PKG021"]
    assert [(f["path"], f["severity"]) for f in skipped] == [(name, "warning")]
    assert (
        f"symbolic link to '{outside / 'secret.txt'}' leads outside the checked PATH; the file is not read"
        in skipped[0]["message"]
    )
    assert not [f for f in found if f["path"] == name and f["rule"] != "PKG021"]  # nothing else read it


def test_link_chain_that_ends_outside_path(cli, package, outside):
    """The attack: a link to a link inside PATH that itself leads out (`result_9.txt -> hop`,
    `hop -> /outside/secret.txt`): only the fully resolved target counts."""
    folder = package / SSD
    os.symlink(outside / "secret.txt", folder / "hop")
    os.symlink("hop", folder / "result_9.txt")
    result = check(cli, package)
    assert SECRET not in result.out
    assert sorted(f["path"] for f in findings(result) if f["rule"] == "PKG021") == [
        "results/fx_8xh100/ssd/hop",
        "results/fx_8xh100/ssd/result_9.txt",
    ]


def test_linked_file_inside_path_is_read_but_not_from_a_narrower_path(cli, package):
    """A link inside PATH is a file of the package: read. The same link, when PATH is only its own
    benchmark folder, leads out of PATH: not read."""
    os.symlink("../../../systems/fx_8xh100.json", package / SSD / "copy.json")
    os.symlink(package / "results" / "fx_8xh100" / "ssd" / "result_0.txt", package / SSD / "result_9.txt")
    whole = discover(package)
    (folder,) = whole.benchmark_folders
    assert "results/fx_8xh100/ssd/result_9.txt" in [f.path for f in folder.result_files]
    assert not [i for i in whole.issues if i.problem == Problem.LINK_OUTSIDE]
    narrow = package / "results" / "fx_8xh100" / "ssd"
    os.symlink(package.parent.parent / "elsewhere.txt", narrow / "result_8.txt")
    (package.parent.parent / "elsewhere.txt").write_text(SECRET)
    only = discover(narrow)
    assert sorted(i.path for i in only.issues if i.problem == Problem.LINK_OUTSIDE) == ["copy.json", "result_8.txt"]
    assert "result_9.txt" in [f.path for f in only.benchmark_folders[0].result_files]  # still inside


def test_system_folder_does_not_follow_links_out_for_its_description(cli, package, outside):
    """The attack: checking `results/<system>` reads `../../systems/<system>.json`; a description
    linked out of the submitter's folder, or a linked systems/ folder, was read and quoted."""
    system_folder = package / "results" / "fx_8xh100"
    description = package / "systems" / "fx_8xh100.json"
    description.unlink()
    os.symlink(outside / "systems" / "fx_8xh100.json", description)
    result = check(cli, system_folder)
    assert SECRET not in result.out
    skipped = [f for f in findings(result) if f["rule"] == "PKG021"]
    assert [f["path"] for f in skipped] == ["../../systems/fx_8xh100.json"]
    assert "leads outside the submitter's folder" in skipped[0]["message"]

    shutil.rmtree(package / "systems")
    os.symlink(outside / "systems", package / "systems")
    result = check(cli, system_folder)
    assert SECRET not in result.out
    assert [f["path"] for f in findings(result) if f["rule"] == "PKG004"] == ["../../systems"]

    # a description linked inside the submitter's folder is the submitter's own: read
    (package / "systems").unlink()
    (package / "systems").mkdir()
    (package / "descriptions").mkdir()
    shutil.copy(FIXTURE / "systems" / "fx_8xh100.json", package / "descriptions" / "fx_8xh100.json")
    os.symlink("../descriptions/fx_8xh100.json", package / "systems" / "fx_8xh100.json")
    tree = discover(system_folder / "ssd")
    assert [s.name for s in tree.submissions[0].systems] == ["fx_8xh100"] and tree.submissions[0].systems[0].data


def test_linked_implementation_folder_is_not_listed(cli, package, outside, tmp_path):
    """The attack: `benchmarks/ssd/implementations -> /elsewhere` listed (and REP rules read) the
    files of a folder outside PATH."""
    elsewhere = tmp_path / "elsewhere" / "impl"
    elsewhere.mkdir(parents=True)
    (elsewhere / "README.md").write_text(f"{SECRET}\n")
    (package / "benchmarks" / "ssd").mkdir(parents=True)
    os.symlink(elsewhere.parent, package / "benchmarks" / "ssd" / "implementations")
    result = check(cli, package)
    assert SECRET not in result.out
    assert [f["path"] for f in findings(result) if f["rule"] == "PKG004"] == ["benchmarks/ssd/implementations"]
    assert discover(package).submissions[0].implementations == ()
