"""Shared fixtures: the plugin host, the CLI runner, the real v4.1 sample and the fixture packages."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from mlperf_audit.cli import main
from mlperf_audit.engine.plugins import DISABLE_AUTOLOAD_ENV, PluginHost

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures" / "packages"
#: Where the real samples are looked for: ../shared/data beside the checkout, unless this names another folder.
SHARED_DATA_ENV = "MLPERF_AUDIT_SHARED_DATA"
SHARED_DATA = Path(os.environ.get(SHARED_DATA_ENV) or REPO.parent / "shared" / "data").resolve()
SAMPLE = SHARED_DATA / "mlperf-training-v4.1-sample"
IMPLEMENTATIONS = SHARED_DATA / "mlperf-training-v4.1-implementations"
POWER_SAMPLE = SHARED_DATA / "mlperf-training-v5.0-power-sample"
REQUIRE_SAMPLE_ENV = "MLPERF_AUDIT_REQUIRE_SAMPLE"

#: The real data each fixture (or the `sample` marker) needs: (what, where).
NEEDED_DATA: dict[str, tuple[tuple[str, Path], ...]] = {
    "sample": (("v4.1 sample", SAMPLE),),
    "sample_with_code": (("v4.1 sample", SAMPLE), ("v4.1 implementations", IMPLEMENTATIONS)),
    "power_sample": (("v5.0 power sample", POWER_SAMPLE),),
}


#: The tests that exercise an installed third-party plugin (the example plugin) carry this marker;
#: every other test sees only the plugins of this distribution, installed or not the example.
THIRD_PARTY = "third_party_plugins"
EXAMPLE_DISTRIBUTION = "mlperf-audit-example"


def pytest_configure(config: pytest.Config) -> None:
    """The suite checks what mlperf-audit ships: a third-party plugin installed beside it (the
    example plugin, or any other) must neither add rules nor break a test. Set before anything is
    collected, so module-level hosts and the commands tests run in subprocesses see it too."""
    config.addinivalue_line("markers", f"{THIRD_PARTY}: loads the installed third-party plugins (the example plugin)")
    os.environ[DISABLE_AUTOLOAD_ENV] = "1"


@pytest.fixture(autouse=True)
def _third_party_plugins_opt_in(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker(THIRD_PARTY) is None:
        return
    import importlib.metadata

    try:
        importlib.metadata.distribution(EXAMPLE_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"the example plugin is not installed (pip install -e plugins/{EXAMPLE_DISTRIBUTION})")
    monkeypatch.delenv(DISABLE_AUTOLOAD_ENV)


def _missing_data(item: pytest.Item) -> set[tuple[str, Path]]:
    """The real data a test needs (its fixtures, the `sample` marker) that is not here."""
    names = set(getattr(item, "fixturenames", ())) & NEEDED_DATA.keys()
    if not names and item.get_closest_marker("sample") is not None:  # the marker alone: the v4.1 sample
        names.add("sample")
    return {needed for name in names for needed in NEEDED_DATA.get(name, ()) if not needed[1].is_dir()}


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Which real data is here, before anything runs: without it, the tests that need it skip."""
    data = {what: path for needs in NEEDED_DATA.values() for what, path in needs}
    missing = [f"the {what} ({path})" for what, path in data.items() if not path.is_dir()]
    lines = [
        f"real data: {', '.join(data)} found in {SHARED_DATA}"
        if not missing
        else f"real data missing: {'; '.join(missing)}"
    ]
    rounds = os.environ.get(ROUNDS_ENV)
    if not rounds or not Path(rounds).is_dir():
        lines.append(f"published rounds: {ROUNDS_ENV} is not set to a folder: the whole-round tests skip")
    return lines


def pytest_report_collectionfinish(config: pytest.Config, start_path: Path, items: list[pytest.Item]) -> list[str]:
    """How many of the selected tests need the missing data, and what becomes of them."""
    needing: dict[tuple[str, Path], int] = {}
    affected = 0
    for item in items:
        missing = _missing_data(item)
        affected += bool(missing)
        for needed in missing:
            needing[needed] = needing.get(needed, 0) + 1
    if not affected:
        return []
    by_data = ", ".join(
        f"{count} need the {what}" for (what, _), count in sorted(needing.items(), key=lambda i: (-i[1], i[0]))
    )
    if os.environ.get(REQUIRE_SAMPLE_ENV):
        fate = f"will FAIL ({REQUIRE_SAMPLE_ENV} is set)"
    else:
        fate = f"will be skipped ({REQUIRE_SAMPLE_ENV}=1 makes them fail instead)"
    return [
        f"{affected} of {len(items)} selected test(s) {fate}: real data missing ({by_data}); put the samples "
        f"in {SHARED_DATA} (CONTRIBUTING.md) or name their folder with {SHARED_DATA_ENV}"
    ]


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture(autouse=True)
def _fresh_parse_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with an empty cache of parsed files (never the user's own)."""
    monkeypatch.setenv("MLPERF_AUDIT_CACHE_DIR", str(tmp_path_factory.mktemp("parse-cache")))


@pytest.fixture(autouse=True)
def _no_stray_width() -> None:
    """A command a test runs lays its text out for a pipe unless the test sets COLUMNS. A library
    in this process (GNU readline does) can put COLUMNS=80 in the C environment, which every
    subprocess inherits though `os.environ` does not show it: it is removed before each test."""
    if "COLUMNS" not in os.environ:
        os.unsetenv("COLUMNS")


@pytest.fixture(scope="session")
def host() -> PluginHost:
    """The plugins of this distribution only."""
    return PluginHost(autoload_third_party=False)


@pytest.fixture
def host_with_plugins() -> PluginHost:
    """Every installed plugin, the example plugin included: for tests marked `third_party_plugins`."""
    return PluginHost(autoload_third_party=True)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):
    """Runs the command line in-process and returns its exit code and output."""

    def run(*argv: str) -> CliResult:
        code = main(list(argv))
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


def shared_data(path: Path, what: str) -> Path:
    """A real sample under ../shared/data: its absence fails under CI and skips elsewhere."""
    if not path.is_dir():
        if os.environ.get(REQUIRE_SAMPLE_ENV):
            pytest.fail(f"the real {what} is required here but missing: {path}")
        pytest.skip(f"the real {what} is not present at {path}")
    return path


@pytest.fixture(scope="session")
def sample() -> Path:
    """The real published v4.1 sample."""
    return shared_data(SAMPLE, "v4.1 sample")


@pytest.fixture(scope="session")
def power_sample() -> Path:
    """The real published v5.0 sample with power logs."""
    return shared_data(POWER_SAMPLE, "v5.0 power sample")


@pytest.fixture
def sample_with_code(tmp_path: Path) -> Path:
    """The real v4.1 sample and the implementations its NVIDIA and Dell results ran, laid over each
    other in one tree (as `../shared/README.md` says to use them)."""
    shared_data(SAMPLE, "v4.1 sample")
    shared_data(IMPLEMENTATIONS, "v4.1 implementations")
    root = tmp_path / "v4.1"
    shutil.copytree(SAMPLE, root)
    shutil.copytree(IMPLEMENTATIONS, root, dirs_exist_ok=True)
    return root


@pytest.fixture(scope="session")
def fixtures() -> Path:
    return FIXTURES


def official_output(folder: Path, name: str) -> Path:
    """A recorded output of the official summarizer as this interpreter's run of it writes it: it
    adds run times with `sum()`, which adds floats exactly from Python 3.12 on, so a few values
    differ in their last digit; `python3.12/` holds the files that do (tests/data/README.md)."""
    newer = folder / "python3.12" / name
    return newer if sys.version_info >= (3, 12) and newer.is_file() else folder / name


def official_columns(table: str, invalid: dict[int, str] | None = None) -> str:
    """A score table as `score --format csv` writes it, without the column it adds last to the
    summarizer's (`invalid`): byte for byte the summarizer's own. `invalid` gives the added column's
    value of the rows that have one (by row number, the header 0); every other row's is empty."""
    lines = table.split("\n")
    assert lines[0].endswith(",invalid"), lines[0]
    kept = [lines[0][: -len(",invalid")]]
    for number, line in enumerate(lines[1:], 1):
        if not line:
            kept.append(line)
            continue
        ending = "," + (invalid or {}).get(number, "")
        assert line.endswith(ending), (number, line)
        kept.append(line[: -len(ending)])
    return "\n".join(kept)


ROUNDS_ENV = "MLPERF_AUDIT_ROUNDS"


def published_rounds() -> dict[str, Path]:
    """Extracted published rounds ({"4.1": path}): the folders under $MLPERF_AUDIT_ROUNDS named
    `v4.1` or `training_results_v4.1` (bench/published_rounds.py says how to get them). CI cannot
    fetch them: tests that need them skip when none is there."""
    root = os.environ.get(ROUNDS_ENV)
    found: dict[str, Path] = {}
    if root and Path(root).is_dir():
        for folder in sorted(Path(root).iterdir()):
            name = folder.name.removeprefix("training_results_")
            if folder.is_dir() and name.startswith("v") and name[1:].replace(".", "").isdigit():
                found[name[1:]] = folder
    return found


def keep_parses(cache_dir: Path, *targets: Path) -> None:
    """Marks each PATH as checked before, so that its next check or score keeps (and reads) parsed
    files (a first look at a PATH keeps none: `mlperf_audit.engine.checkcache`), and forgets every kept
    whole check, so that the next one reads the parse cache instead of answering from its outcome."""
    import shutil

    from mlperf_audit.engine.checkcache import CheckCache

    shutil.rmtree(Path(cache_dir) / "check-v1", ignore_errors=True)
    checks = CheckCache(cache_dir)
    for target in targets:
        checks.seen_before(Path(target), "check")
        checks.seen_before(Path(target), "score")


def typed(value):
    """A value with its exact types: 1, 1.0 and True are three values here, and so are a numpy
    float and a Python float."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, repr(value))
