"""Bad input is a finding, never a rule crash (CHK001) nor an internal error (exit 2).

Each test is an attack on a checked package or on the user's own files (waivers, baselines): names
that are not UTF-8, log values of every JSON type at any depth the parser accepts, system
descriptions nested a thousand deep, and malformed waivers and baselines."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mlperf_audit.cli import main
from mlperf_audit.reading.parser import MAX_JSON_DEPTH

CLEAN = Path(__file__).resolve().parents[2] / "fixtures" / "packages" / "clean" / "Fixture"
BROKEN = Path(__file__).resolve().parents[2] / "fixtures" / "packages" / "broken" / "run-aborted"
SYSTEM = "fx_8xh100"


def run_cli(*argv: str) -> tuple[int, str, str]:
    """The command line in-process, its standard output a strict UTF-8 stream as a terminal's or a
    pipe's is: text that cannot be encoded fails here as it would there."""
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", errors="strict")
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
        out.flush()
    return code, raw.getvalue().decode("utf-8"), err.getvalue()


def assert_no_crash(code: int, out: str, err: str, what: str) -> None:
    assert code in (0, 1), f"{what}: exit {code}: {err}"
    assert "internal error" not in err and "Traceback" not in err, f"{what}: {err}"


def check_json(target: Path, *options: str) -> list[dict]:
    code, out, err = run_cli("check", str(target), "--format", "json", *options)
    assert_no_crash(code, out, err, "check")
    findings = json.loads(out)["findings"]
    crashes = [f["message"] for f in findings if f["rule"] == "CHK001"]
    assert not crashes, crashes
    return findings


# ---------------------------------------------------------------------------------------------
# Names that are not UTF-8
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def undecodable(tmp_path) -> Path:
    """A package whose names hold bytes that are not UTF-8: a result file and a benchmark folder."""
    root = tmp_path / "pkg"
    shutil.copytree(BROKEN, root)
    ssd = root / "Fixture" / "results" / SYSTEM / "ssd"
    Path(os.fsdecode(bytes(ssd) + b"/result_\xff.txt")).write_text("")  # an empty log: LOG002 names it
    other = Path(os.fsdecode(bytes(ssd.parent) + b"/sub\xe9"))
    other.mkdir()
    shutil.copy(ssd / "result_0.txt", other / "result_0.txt")
    return root


def test_undecodable_names_are_shown_as_escapes_in_every_output(undecodable, tmp_path):
    """The attack: b"result_\\xff.txt" and b"sub\\xe9" made every structured output (json, sarif,
    -o, --write-baseline, report) an internal error: their display paths carried lone surrogates."""
    findings = check_json(undecodable)
    paths = {f["path"] for f in findings if f["path"]}
    assert "Fixture/results/fx_8xh100/ssd/result_\\xff.txt" in paths
    assert "Fixture/results/fx_8xh100/sub\\xe9" in paths
    assert {f["benchmark"] for f in findings if f["benchmark"]} >= {"ssd", "sub\\xe9"}
    for fmt in ("sarif", "text", "junit"):
        assert_no_crash(*run_cli("check", str(undecodable), "--format", fmt), fmt)
    out = tmp_path / "o.json"
    assert_no_crash(*run_cli("check", str(undecodable), "--format", "json", "-o", str(out)), "-o")
    assert "result_\\\\xff.txt" in out.read_text(encoding="utf-8")
    baseline = tmp_path / "baseline.json"
    assert_no_crash(*run_cli("check", str(undecodable), "--write-baseline", str(baseline)), "--write-baseline")
    code, _, err = run_cli("check", str(undecodable), "--baseline", str(baseline), "--format", "json")
    assert code == 0, err  # the baseline written holds every finding: the escapes are stable
    assert_no_crash(*run_cli("report", str(undecodable), "-o", str(tmp_path / "r.html")), "report")
    for command in ("score", "audit"):
        code, out_text, err = run_cli(command, str(undecodable), "--format", "json")
        assert_no_crash(code, out_text, err, command)
        json.loads(out_text)


def test_undecodable_power_names_are_read_by_their_real_names(power_sample, tmp_path):
    """The attack: a run named b"result_\\xff.txt" with its power/ folder and a node file named
    likewise. Its energy is the same as under a plain name: the files are opened by their names on
    disk, never by the escaped names reports show."""
    tree = tmp_path / "Lenovo"
    shutil.copytree(power_sample / "Lenovo", tree)
    bert = next((tree / "results").iterdir()) / "bert"
    code, out, err = run_cli("score", str(tree), "--format", "json")
    before = {
        r["file"].rsplit("/", 1)[-1]: r["energy_joules"]
        for s in json.loads(out)["results"]
        if s["benchmark"] == "bert"
        for r in s["runs"]
    }
    assert before["result_0.txt"]
    odd = os.fsdecode(b"result_\xff")
    os.rename(bert / "result_0.txt", bert / f"{odd}.txt")
    os.rename(bert / "power" / "result_0", bert / "power" / odd)
    node = sorted((bert / "power" / odd).glob("node_*.txt"))[0]
    os.rename(node, node.with_name(os.fsdecode(b"node_\xff" + node.name[len("node_") :].encode())))
    code, out, err = run_cli("score", str(tree), "--format", "json")
    assert_no_crash(code, out, err, "score")
    after = {
        r["file"].rsplit("/", 1)[-1]: r["energy_joules"]
        for s in json.loads(out)["results"]
        if s["benchmark"] == "bert"
        for r in s["runs"]
    }
    assert after["result_\\xff.txt"] == pytest.approx(before["result_0.txt"])


# ---------------------------------------------------------------------------------------------
# Log values: the crashes found, one test each
# ---------------------------------------------------------------------------------------------


def _edit_logs(root: Path, pattern: str, replace: str) -> None:
    for log in root.rglob("result_*.txt"):
        log.write_text(re.sub(pattern, replace, log.read_text()))


@pytest.fixture
def clean(tmp_path) -> Path:
    root = tmp_path / "clean" / "Fixture"
    shutil.copytree(CLEAN, root)
    return root.parent


def test_infinity_as_samples_count(clean):
    """The attack: `"samples_count": "Infinity"` in every eval_accuracy made REP013/REP014 crash
    (statistics over an infinite convergence point) and `score` exit with an internal error."""
    _edit_logs(
        clean,
        r'("key": "eval_accuracy", "value": [0-9.]+, "metadata": \{[^}]*"samples_count": )[0-9.]+',
        r'\1"Infinity"',
    )
    findings = check_json(clean, "--select", "REP,RCP,CMP")
    assert findings  # the value is reported (RCP, CMP), not hidden
    code, out, err = run_cli("score", str(clean), "--format", "json")
    assert_no_crash(code, out, err, "score")
    llama = next(r for r in json.loads(out)["results"] if r["benchmark"] == "llama2_70b_lora")
    assert all(run["units"] is None for run in llama["runs"])


@pytest.mark.parametrize("depth", [980, MAX_JSON_DEPTH])
def test_deeply_nested_log_values(clean, depth):
    """The attack: a value nested ~980 deep (under the decoder's limit) made HYP002 and VAL001
    crash (CHK001) and `score` raise RecursionError. Past the parser's bound (64 levels) the line is
    LOG011; at the bound it is read, and no rule or output fails on it."""
    nested = "[" * (depth - 1) + "1" + "]" * (depth - 1)  # the record is level 1
    _edit_logs(clean, r'("key": "(?:opt_base_learning_rate|global_batch_size)", "value": )[0-9.e-]+', rf"\g<1>{nested}")
    findings = check_json(clean / "Fixture" / "results" / SYSTEM / "bert")
    deep = [f for f in findings if f["rule"] == "LOG011"]
    if depth > MAX_JSON_DEPTH:
        assert deep and "over 64 levels" in deep[0]["message"]
    else:
        assert not deep
        assert any(f["rule"] == "VAL001" and "[[[[...]]]]" in f["message"] for f in findings)
    code, out, err = run_cli("score", str(clean), "--format", "json")
    assert_no_crash(code, out, err, "score")


def test_deeply_nested_system_description(clean):
    """The attack: a system description field nested ~980 deep made SYS002 (and the RCP rules)
    crash and `score` raise RecursionError. It is SYS001: deeper than the 64 levels read."""
    description = clean / "Fixture" / "systems" / f"{SYSTEM}.json"
    text = description.read_text()
    description.write_text(
        text.replace('"hw_notes": "synthetic fixture, not a real system"', '"hw_notes": ' + "[" * 980 + "]" * 980)
    )
    findings = check_json(clean)
    sys001 = [f for f in findings if f["rule"] == "SYS001"]
    assert sys001 and "over 64 levels" in sys001[0]["message"]
    assert_no_crash(*run_cli("score", str(clean), "--format", "json"), "score")


# ---------------------------------------------------------------------------------------------
# Malformed waivers and baselines: a usage error naming the file, never a TypeError
# ---------------------------------------------------------------------------------------------


WAIVER = "[[waiver]]\nrule = 'PKG019'\nreason = 'accepted'\n"


@pytest.mark.parametrize(
    "content, message",
    [
        ("waiver = [1, 2]\n", "waiver 1: is an integer, not a table"),
        ("waiver = [[1]]\n", "waiver 1: is an array, not a table"),
        ("waiver = 'all'\n", "'waiver' is a string"),
        ("[waiver]\nrule = 'X'\n", "'waiver' is a table"),
        ("[[waivers]]\nrule = 'X'\nreason = 'y'\n", "unknown key(s) 'waivers'"),
        (WAIVER + "path = 5\n", "path must be a string"),
        (WAIVER + "path = ['a']\n", "path must be a string"),
        (WAIVER + "expires = 2025-06-01T10:00:00\n", "expires must be a date (YYYY-MM-DD), not a datetime"),
        ("a = " + "[" * 5000 + "]" * 5000 + "\n", "not valid TOML"),
        (b"[[waiver]]\nrule = 'X'\nreason = '\xff'\n", "not UTF-8"),
    ],
)
def test_malformed_waivers_are_usage_errors(tmp_path, content, message):
    """The attack: waivers of the wrong shape gave TypeError/AttributeError (an internal error)
    or were silently accepted (a misspelt [[waivers]] waives nothing without a word)."""
    waivers = tmp_path / "waivers.toml"
    waivers.write_bytes(content) if isinstance(content, bytes) else waivers.write_text(content)
    code, _, err = run_cli("check", str(BROKEN), "--waivers", str(waivers))
    assert code == 2, err
    assert err.startswith("mlperf-audit: error: ") and str(waivers) in err and message in err, err


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"schema_version": 1, "fingerprints": []}', "'fingerprints' must be an object"),
        ('{"schema_version": 1, "fingerprints": "abc"}', "'fingerprints' must be an object"),
        ('{"schema_version": 1}', "'fingerprints' must be an object of fingerprint: count, not missing"),
        ('{"schema_version": 1, "fingerprints": {"a": "x"}}', "counts are whole numbers"),
        ('{"schema_version": 1, "fingerprints": {"a": null}}', "counts are whole numbers"),
        ('{"schema_version": 1, "fingerprints": {"a": 1.5}}', "counts are whole numbers"),
        ('{"schema_version": 1, "fingerprints": {"a": -1}}', "counts are whole numbers"),
        ('{"schema_version": 1, "fingerprints": {"a": true}}', "counts are whole numbers"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("{", "not valid JSON"),
        (b'{"schema_version": 1, "fingerprints": {"\xff": 1}}', "not UTF-8"),
    ],
)
def test_malformed_baselines_are_usage_errors(tmp_path, content, message):
    """The attack: a baseline of the wrong shape gave AttributeError, TypeError, ValueError or
    RecursionError (an internal error)."""
    baseline = tmp_path / "baseline.json"
    baseline.write_bytes(content) if isinstance(content, bytes) else baseline.write_text(content)
    code, _, err = run_cli("check", str(BROKEN), "--baseline", str(baseline))
    assert code == 2, err
    assert err.startswith("mlperf-audit: error: ") and str(baseline) in err and message in err, err


# ---------------------------------------------------------------------------------------------
# Any value in any field: the property
# ---------------------------------------------------------------------------------------------

SPECIAL_STRINGS = [
    "Infinity",
    "-Infinity",
    "NaN",
    "nan",
    "inf",
    "1e999",
    "-1",
    "0",
    "",
    "2048",
    "1.0",
    "success",
    "aborted",
    "closed",
    "open",
    "ssd",
    "bert",
    "FID",
    "CLIP",
    "samples_count",
    "\udcff",
    "\x1b[31m",
    "\n::error::x",
    "../../../etc/passwd",
    "x" * 300,
]
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.integers(-(10**400), 10**400)
    | st.floats()  # NaN and the infinities are written as the NaN/Infinity literals
    | st.sampled_from(SPECIAL_STRINGS)
    | st.text(max_size=12)
)
containers = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=8,
)


def _nest(value, depth: int, as_dict: bool):
    for _ in range(depth):
        value = {"k": value} if as_dict else [value]
    return value


#: A metadata field sits at level 3 of a record: 61 more levels is the parser's bound, a few more LOG011.
deep = st.builds(_nest, scalars, st.integers(1, MAX_JSON_DEPTH + 2), st.booleans())
values = containers | deep
META_FIELDS = [
    "epoch_num",
    "samples_count",
    "step_num",
    "status",
    "metric",
    "epoch_count",
    "first_epoch_num",
    "lineno",
    "file",
    "value",
]
SYSTEM_FIELDS = [
    "division",
    "status",
    "submitter",
    "system_name",
    "number_of_nodes",
    "accelerators_per_node",
    "accelerator_model_name",
    "host_processors_per_node",
    "framework",
    "other_software_stack",
]
#: (where, which key or field, which occurrence, in which runs, the value): a `value`, or a metadata
#: field, of one record or every record of a key (any key of the log: an index into its sorted keys),
#: in one run or in every run (statistics over runs need the same defect in many), or a field of the
#: system description.
keys = st.integers(0, 200)
edits = st.one_of(
    st.tuples(st.just("value"), keys, st.sampled_from(["one", "every"]), st.booleans(), values),
    st.tuples(st.sampled_from(META_FIELDS), keys, st.sampled_from(["one", "every"]), st.booleans(), values),
    st.tuples(st.just("system"), st.sampled_from(SYSTEM_FIELDS), st.just("one"), st.just(False), values),
)

EXPLORE = int(os.environ.get("MLPERF_AUDIT_EXPLORE", "0"))


def _records(path: Path) -> list[dict]:
    return [json.loads(line.split(":::MLLOG ", 1)[1]) for line in path.read_text().splitlines() if ":::MLLOG " in line]


def _apply(records: list[dict], edit: tuple, first_run: bool) -> list[dict]:
    where, which, occurrence, every_run, value = edit
    if not (first_run or every_run):
        return records
    names = sorted({record["key"] for record in records})
    key = which if isinstance(which, str) else names[which % len(names)]
    matching = [record for record in records if record["key"] == key]
    for record in matching if occurrence == "every" else matching[:1]:
        if where == "value":
            record["value"] = value
        else:
            record["metadata"][where] = value
    return records


@settings(
    max_examples=EXPLORE or 24,
    derandomize=not EXPLORE,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    st.sampled_from(["ssd", "bert", "stable_diffusion", "llama2_70b_lora", "gpt3"]),
    st.lists(edits, min_size=1, max_size=4),
)
# the crashes this test found, kept as examples that always run:
@example("ssd", [("system", "accelerator_model_name", "one", False, [])])  # plausibility: unhashable (exit 2)
@example("bert", [("system", "accelerators_per_node", "one", False, "9" * 400)])  # rate / count overflows
@example("ssd", [("file", "seed", "every", True, ["train.py"])])  # SEED004/SEED005: unhashable place
@example("llama2_70b_lora", [("samples_count", "eval_accuracy", "every", True, "Infinity")])  # REP013/REP014, score
def test_any_value_in_any_field_is_a_finding(benchmark, changes):
    """Any JSON value (huge or negative numbers, floats, NaN, "Infinity", lists, objects, nesting up
    to the parser's bound and past it, null, booleans) as any key's value, any metadata field or
    any system description field, on top of valid runs: `check` and `score` report, never crash."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "Fixture"
        system_name = "fx_64xh100" if benchmark == "gpt3" else SYSTEM  # gpt3 needs 64 H100s
        shutil.copytree(CLEAN / "systems", root / "systems")
        shutil.copytree(CLEAN / "results" / system_name / benchmark, root / "results" / system_name / benchmark)
        shutil.copytree(CLEAN / "benchmarks" / benchmark, root / "benchmarks" / benchmark)
        description = root / "systems" / f"{system_name}.json"
        system = json.loads(description.read_text())
        for edit in changes:
            if edit[0] == "system":
                system[edit[1]] = edit[4]
        description.write_text(json.dumps(system))
        logs = sorted((root / "results" / system_name / benchmark).glob("result_*.txt"))
        for index, log in enumerate(logs):
            records = _records(log)
            for edit in changes:
                if edit[0] != "system":
                    records = _apply(records, edit, first_run=index == 0)
            log.write_text("".join(f":::MLLOG {json.dumps(record)}\n" for record in records))
        check_json(root)
        code, out, err = run_cli("score", str(root), "--format", "json")
        assert_no_crash(code, out, err, "score")
        json.loads(out)


def test_subnormal_convergence_points_do_not_break_the_report(cli, tmp_path):
    """Every bert evaluation at epoch -5e-324: the plot's axis had no width (ZeroDivisionError)."""
    submitter = tmp_path / "Fixture"
    shutil.copytree(CLEAN, submitter)
    system = submitter / "systems" / "fx_8xh100.json"
    system.write_text(system.read_text().replace('"closed"', '"open"'))
    for log in (submitter / "results" / "fx_8xh100" / "bert").glob("result_*.txt"):
        log.write_text(re.sub(r'"epoch_num": [^,}]+', '"epoch_num": -5e-324', log.read_text()))
    result = cli(
        "report", str(submitter / "results" / "fx_8xh100" / "bert"), "-o", str(tmp_path / "r.html"), "--no-cache"
    )
    assert result.code in (0, 1) and "internal error" not in result.err, result.err
    # the curves are in the page's data (the browser draws them): one per run, at the subnormal point
    data = re.search(r'id="report-data">(.*?)</script>', (tmp_path / "r.html").read_text(), re.DOTALL)
    curves = json.loads(data.group(1))["folders"][0]["curves"] if data else []
    assert curves and all(x == -5e-324 for curve in curves for x, _ in curve["points"])


def test_a_terminal_that_cannot_show_a_name_gets_its_escape(tmp_path):
    """A stdout in latin-1 and a submitter folder named in CJK: UnicodeEncodeError, exit 2."""
    import subprocess
    import sys

    shutil.copytree(CLEAN, tmp_path / "repo" / "漢字")
    result = subprocess.run(
        # -v: the clean package's infos name the folder (a clean check prints no finding by default)
        [sys.executable, "-m", "mlperf_audit", "check", str(tmp_path / "repo"), "--no-cache", "-v"],
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "latin-1"},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert b"\\u6f22\\u5b57" in result.stdout and b"internal error" not in result.stderr


@pytest.mark.parametrize("hidden", [".github/Acme", ".x/Acme", ".github/ISSUE_TEMPLATE/Acme", ".x/a/b/c/d/Acme"])
def test_a_submission_in_a_hidden_folder_of_a_repository_is_reported(tmp_path, fixtures, cli, hidden):
    """Issue 25, attack 2, outside the Action: a hidden folder was skipped whole, so a submission
    placed in one was neither checked nor mentioned."""
    repo = tmp_path / "repo"
    shutil.copytree(fixtures / "clean", repo)
    shutil.copytree(fixtures / "clean" / "Fixture", repo / hidden)
    (repo / ".github" / "workflows").mkdir(parents=True, exist_ok=True)
    result = cli("check", str(repo), "--no-cache", "--format", "json")
    findings = json.loads(result.out)["findings"]
    top = hidden.split("/")[0]
    hits = [f for f in findings if f["rule"] == "PKG022" and f["path"] == top]
    assert len(hits) == 1 and "holds a submission" in hits[0]["message"], findings
    assert not [f for f in findings if f["rule"] == "PKG022" and f["path"] != top]


def test_a_hidden_folder_too_large_to_search_counts_as_hiding_one(tmp_path, fixtures, cli, monkeypatch):
    """Issue 35: the search of a hidden folder goes to any depth, within a bound; past it, what the
    check cannot search is said, never passed in silence. Links below it are not followed nor reported."""
    from mlperf_audit.reading import discovery

    monkeypatch.setattr(discovery, "HIDDEN_SEARCH_FOLDERS", 50)
    repo = tmp_path / "repo"
    shutil.copytree(fixtures / "clean", repo)
    for index in range(60):
        (repo / ".x" / f"d{index}").mkdir(parents=True)
    (repo / ".github" / "workflows" / "deep").mkdir(parents=True)
    (repo / ".github" / "workflows" / "deep" / "elsewhere").symlink_to("/etc")
    findings = json.loads(cli("check", str(repo), "--no-cache", "--format", "json").out)["findings"]
    assert [f["path"] for f in findings if f["rule"] == "PKG022" and "too many to search" in f["message"]] == [".x"]
    assert not [f for f in findings if "elsewhere" in (f["path"] or "")], findings
