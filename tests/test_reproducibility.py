"""Reproducibility (REP) beyond the per-rule YAML cases: real data, output formats, archives,
hostile implementation folders, and the run-to-run spread in `score` and the report."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import published_rounds
from mlperf_audit.config import Config
from mlperf_audit.engine.api import check
from mlperf_audit_rules.support import code_text, dockerfile, shell
from test_cli import validate_report
from test_formats import sarif_schema

IRREPRODUCIBLE = Path(__file__).resolve().parent.parent / "fixtures" / "packages" / "irreproducible"


def rep(report) -> list:
    return [f for f in report.findings if f.rule.startswith("REP")]


def test_results_only_sample_gets_one_info_per_submitter(sample, host):
    found = rep(check(sample, Config(select=("REP",)), host))
    assert [(f.rule, f.severity.value, f.path) for f in found] == [
        ("REP001", "info", f"{name}/benchmarks") for name in ("Dell", "Google", "NVIDIA", "tinycorp")
    ]


def test_spread_rules_are_silent_on_real_results(sample, host):
    """Real v4.1 results (0.12% to 11.8% spread) are neither too tight nor too wide."""
    assert rep(check(sample, Config(select=("REP012", "REP013", "REP014")), host)) == []


def test_score_shows_the_spread(cli, sample):
    text = cli("score", str(sample)).out
    assert "spread" in text.splitlines()[0]
    assert (
        "Dell/results/XE9680x8H100-SXM-80GB/bert: " in text
        and "spread: time-to-train varies by 6.67% (coefficient of variation over 10 runs; slowest/fastest 1.201); "
        "convergence point by 6.71% (10 distinct)"
        in text
    )
    results = json.loads(cli("score", str(sample), "--format", "json").out)["results"]
    ssd = next(r for r in results if (r["submitter"], r["benchmark"]) == ("Dell", "ssd"))["spread"]
    assert ssd["runs"] == 5 and ssd["convergence_distinct"] == 1 and ssd["convergence_cv"] == 0
    assert ssd["time_to_train_cv"] == pytest.approx(0.0012, abs=5e-5)
    green = next(r for r in results if r["system"] == "tinybox_green")["spread"]
    assert green["runs"] == 9  # the failed run is not part of the spread


def test_csv_tables_keep_the_official_columns(cli, sample):
    """The spread is not a column of the summarizer's CSV, which stays byte-identical to the official one."""
    assert "spread" not in cli("score", str(sample), "--format", "csv").out


def test_report_shows_the_spread(cli, fixtures, tmp_path):
    out = tmp_path / "report.html"
    assert cli("report", str(IRREPRODUCIBLE / "wild-spread"), "-o", str(out)).code == 0
    page = out.read_text()
    # in the page's data, which report.js shows under the folder's heading
    assert '"spread": "Run-to-run spread: time-to-train varies by 40.95%' in page


def test_related_locations_in_json_and_sarif(cli):
    target = IRREPRODUCIBLE / "config-learning-rate"
    document = validate_report(cli("check", str(target), "--format", "json", "--select", "REP011").out)
    (finding,) = document["findings"]
    assert finding["related"] == [{"path": "Fixture/results/fx_8xh100/ssd/result_0.txt", "line": 13}]
    sarif = json.loads(cli("check", str(target), "--format", "sarif", "--select", "REP011").out)
    jsonschema.Draft4Validator(sarif_schema()).validate(sarif)
    (result,) = sarif["runs"][0]["results"]
    location = result["relatedLocations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("/Fixture/results/fx_8xh100/ssd/result_0.txt")
    assert location["region"] == {"startLine": 13}


def test_an_archive_gives_the_same_findings(tmp_path, host):
    folder = IRREPRODUCIBLE / "config-node-count"
    archive = tmp_path / "submission.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder / "Fixture", arcname="Fixture")
    from_folder = [(f.rule, f.path, f.line, f.message) for f in rep(check(folder, Config(select=("REP",)), host))]
    from_archive = [(f.rule, f.path, f.line, f.message) for f in rep(check(archive, Config(select=("REP",)), host))]
    assert from_archive == from_folder and {"REP010", "REP011"} <= {rule for rule, *_ in from_folder}


@pytest.fixture
def package(tmp_path) -> Path:
    root = tmp_path / "pkg"
    shutil.copytree(IRREPRODUCIBLE / "consistent", root)
    return root


IMPLEMENTATION = "Fixture/benchmarks/ssd/implementations/pytorch"


def test_unreadable_readme_is_a_finding(package, host, monkeypatch):
    real = code_text.open_binary

    def refuse(source):
        if str(getattr(source, "name", source)).endswith("README.md"):
            raise PermissionError(13, "Permission denied")
        return real(source)

    monkeypatch.setattr(code_text, "open_binary", refuse)
    found = rep(check(package, Config(select=("REP005",)), host))
    assert [(f.path, f.message) for f in found] == [
        (f"{IMPLEMENTATION}/README.md", "the README is empty or cannot be read")
    ]


@pytest.mark.parametrize(
    "name, content",
    [
        ("config_fx_8xh100.sh", b"export DGXNNODES='unterminated\nexport DGXNGPU=$((8\nif [[ x ]]; then\n"),
        ("config_fx_8xh100.sh", b"\x00\x01binary" * 100),
        ("config_fx_8xh100.sh", b"export LR=" + b"9" * (2 << 20) + b"\n"),
        ("Dockerfile", b"FROM\nFROM --platform=linux/amd64\nARG\nFROM ${UNCLOSED\n"),
        ("Dockerfile", "FROM ubuntu:22.04\u2028RUN echo \udcff".encode("utf-8", "surrogateescape")),
        ("README.md", b"\xff\xfe" + "run".encode("utf-16-le")),
    ],
)
def test_hostile_implementation_files_never_crash(package, host, name, content):
    (package / IMPLEMENTATION / name).write_bytes(content)
    report = check(package, Config(select=("REP",)), host)
    assert not [f for f in report.findings if f.rule == "CHK001"]


def test_a_huge_implementation_is_listed_up_to_the_cap(package, host, monkeypatch):
    from mlperf_audit.reading import discovery

    monkeypatch.setattr(discovery, "MAX_IMPLEMENTATION_FILES", 50)
    for index in range(80):
        (package / IMPLEMENTATION / "vendor" / f"module_{index}.py").parent.mkdir(exist_ok=True)
        (package / IMPLEMENTATION / "vendor" / f"module_{index}.py").write_text("")
    tree = discovery.discover(package)
    (implementation,) = tree.submissions[0].implementations
    assert implementation.truncated and len(implementation.files) == 50
    assert [f for f in rep(check(package, Config(), host)) if f.severity.value != "info"] == []


def test_jobs_do_not_change_the_findings(fixtures, host):
    one = check(fixtures / "clean", Config(select=("REP",)), host, jobs=1)
    two = check(fixtures / "clean", Config(select=("REP",)), host, jobs=2)
    assert one.findings == two.findings
    assert len([f for f in one.findings if f.rule == "REP003"]) == 7


def test_implementation_findings_point_at_the_results_they_serve(host):
    (finding,) = rep(check(IRREPRODUCIBLE / "no-readme", Config(select=("REP005",)), host))
    assert finding.path == IMPLEMENTATION and finding.related == (("Fixture/results/fx_8xh100/ssd", None),)


@pytest.mark.parametrize(
    "shape", ["benchmarks-is-a-file", "implementations-is-a-file", "linked-implementation", "link-loop"]
)
def test_odd_benchmarks_folders_never_crash(package, host, shape):
    code = package / "Fixture" / "benchmarks"
    if shape == "benchmarks-is-a-file":
        shutil.rmtree(code)
        code.write_text("not a folder\n")
    elif shape == "implementations-is-a-file":
        shutil.rmtree(code / "ssd" / "implementations")
        (code / "ssd" / "implementations").write_text("not a folder\n")
    elif shape == "linked-implementation":
        moved = package / "elsewhere"
        shutil.move(code / "ssd" / "implementations" / "pytorch", moved)
        (code / "ssd" / "implementations" / "pytorch").symlink_to(moved, target_is_directory=True)
    else:
        (code / "ssd" / "implementations" / "pytorch" / "loop").symlink_to("..", target_is_directory=True)
    report = check(package, Config(), host)
    assert not [f for f in report.findings if f.rule == "CHK001"]
    codes = {f.rule for f in report.findings}
    if shape != "link-loop":
        assert "REP002" in codes or "REP001" in codes  # the code is not where it must be
    else:
        assert "PKG004" in codes and "REP002" not in codes


SHELLISH = st.lists(
    st.sampled_from(
        [
            "export A=1",
            "B=${B:-2}",
            "if [[ x ]]; then",
            "fi",
            "source config_common.sh",
            "export C=$(( 1 + 2 ))",
            "case $x in",
            "esac",
            "for i in 1 2; do",
            "done",
            "function f {",
            "}",
            "export D='unterminated",
            'export E="a b"',
            "F=$G",
            "# comment",
            "export DGXNNODES=\\",
            "  indented=1",
            "ARG X=1",
            "FROM ${X}",
            "FROM a AS b",
            "FROM b",
            "FROM --platform=x",
            "FROM",
            "RUN \\",
        ]
    )
    | st.text(max_size=30),
    max_size=30,
)


@settings(max_examples=200, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SHELLISH)
def test_configurations_and_dockerfiles_of_any_shape_never_raise(tmp_path_factory, lines):
    folder = tmp_path_factory.mktemp("impl")
    text = "\n".join(lines)
    (folder / "config_x.sh").write_text(text, encoding="utf-8", errors="replace")
    (folder / "config_common.sh").write_text(text, encoding="utf-8", errors="replace")
    from mlperf_audit.model import FileEntry, Implementation

    entries = tuple(FileEntry(f"impl/{p.name}", p, p.stat().st_size) for p in sorted(folder.iterdir()))
    implementation = Implementation("ssd", "impl", "impl", entries)
    variables = shell.parse_shell(implementation, entries[1])
    assert all(isinstance(a.value, str) and a.line >= 1 for a in variables.values())
    shell.LaunchConfig(entries[1], variables).global_batch()
    for image in dockerfile.base_images(text):
        assert image.line >= 1
        if image.image is not None:
            dockerfile.unpinned(image.image)


#: The 6.x disclosure NVIDIA's v4.1 llama2_70b_lora runs would have logged, from the configuration
#: traced to them (config_DGXH200_1x8x2xtp1pp1cp2.sh: TP=1, CP=2, MINIBS=2; the logs' accumulation 2
#: and global batch 8 on 8 H200: a micro batch of 1).
NVIDIA_LLAMA2 = "NVIDIA/results/h200_ngc24.09_nemo/llama2_70b_lora"
LLAMA2_DISCLOSURE = {
    "lowest_numerical_precision_in_linear": "fp8",
    "lowest_numerical_precision_in_attn": "bfloat16",
    "lowest_numerical_precision_in_comm": "bfloat16",
    "tensor_parallelism": 1,
    "pipeline_parallelism": 1,
    "context_parallelism": 2,
    "expert_parallelism": 1,
    "micro_batch_size": 1,
    "config_filename": "config_DGXH200_1x8x2xtp1pp1cp2.sh",
}


def disclose(folder: Path, values: dict) -> None:
    """Adds the disclosure records after each run's gradient_accumulation_steps, as a 6.1 run logs them."""
    for path in sorted(folder.glob("result_*.txt")):
        lines = path.read_text().splitlines(keepends=True)
        at = next(i for i, line in enumerate(lines) if '"key": "gradient_accumulation_steps"' in line) + 1
        record = json.loads(lines[at - 1].split(":::MLLOG ", 1)[1])
        added = [
            ":::MLLOG " + json.dumps({**record, "key": key, "value": value}) + "\n" for key, value in values.items()
        ]
        path.write_text("".join(lines[:at] + added + lines[at:]))


def test_disclosure_checks_on_real_nvidia_code(sample_with_code, host):
    """A real result and its real code, given the disclosure they imply: silent; one degree changed
    in every run: its configuration (REP020) and its batch (REP017) disagree."""
    codes = ("REP017", "REP018", "REP019", "REP020", "HYP001")
    folder = sample_with_code / NVIDIA_LLAMA2
    disclose(folder, LLAMA2_DISCLOSURE)
    config = Config(select=codes, ruleset="training-4.1.0")
    traced = check(sample_with_code / "NVIDIA", Config(select=("REP003",), ruleset="training-4.1.0"), host)
    (trace,) = [f for f in traced.findings if f.path.endswith("llama2_70b_lora")]
    assert "config_DGXH200_1x8x2xtp1pp1cp2.sh, certain: the log names it: config_filename" in trace.message
    assert [f for f in check(sample_with_code / "NVIDIA", config, host).findings if "llama2" in f.path] == []

    for path in folder.glob("result_*.txt"):
        text = path.read_text()
        path.write_text(
            text.replace('"key": "tensor_parallelism", "value": 1', '"key": "tensor_parallelism", "value": 2')
        )
    found = {(f.rule, f.severity.value): f for f in check(sample_with_code / "NVIDIA", config, host).findings}
    assert set(found) >= {("REP020", "error"), ("REP017", "warning")}
    assert "sets TP=1 but" in found["REP020", "error"].message
    assert found["REP020", "error"].path.endswith("config_DGXH200_1x8x2xtp1pp1cp2.sh")
    assert "is not micro_batch_size 1 x data parallelism 2 (8 / 4) x gradient_accumulation_steps 2 = 4" in (
        found["REP017", "warning"].message
    )


V51 = published_rounds().get("5.1")
#: The issue's false alarm: ten llama31_8b runs evaluating every 49,152 samples, 4x the reference runs' cadence.
UF_LLAMA = "University-of-Florida/results/hpg.dgxb200x8.n32/llama31_8b"


def _spread_findings(folder: Path, host) -> list:
    return [f for f in check(folder, Config(select=("REP013",), ruleset="training-5.1.0"), host).findings]


def _on_reference_cadence(folder: Path) -> None:
    """Plants evaluations every 12,288 samples (the llama31_8b reference runs' cadence at batch 128)
    before each run's last one, at 344,064: the same convergence point on the reference's grid."""
    for log in sorted(folder.glob("result_*.txt")):
        lines = log.read_text().splitlines(keepends=True)
        evals = [i for i, line in enumerate(lines) if '"key": "eval_accuracy"' in line]
        template = lines[evals[-1]]
        planted = [
            template.replace('"samples_count": 344064', f'"samples_count": {samples}')
            for samples in range(12288, 344064, 12288)
        ]
        log.write_text("".join(lines[: evals[0]] + planted + lines[evals[-1] :]))


@pytest.mark.skipif(V51 is None, reason="the v5.1 round is not under $MLPERF_AUDIT_ROUNDS")
def test_same_point_on_a_coarser_grid_than_the_reference_is_not_flagged(host, tmp_path):
    """The reference runs at batch 128 converge at 8 distinct points in 20; on the folder's grid of
    49,152 samples they fall on 3 (12 of 20 at 344,064): ten runs there are a 0.6% chance, not 2.2e-07."""
    assert V51 is not None
    real = V51 / UF_LLAMA
    assert _spread_findings(real, host) == []
    # the same runs, evaluating at the reference runs' cadence: the same point is now unlikely
    planted = tmp_path / "llama31_8b"
    shutil.copytree(real, planted)
    _on_reference_cadence(planted)
    [finding] = _spread_findings(planted, host)
    assert (
        "converge at 8 distinct points in 20 runs, 8 on this result's evaluation grid (every 12,288 samples_count)"
        in finding.message
    )
    assert "a 2.2e-07 chance" in finding.message


def test_reference_points_are_seen_at_the_next_evaluation():
    from mlperf_audit_rules.reproducibility import _all_equal_chance, on_grid

    grid = (49152.0, 98304.0, 147456.0)
    # before, on and between grid points, and beyond the last one (the last step continued)
    assert on_grid([100.0, 49152.0, 49153.0, 147456.0, 147457.0, 250000.0], grid) == [
        49152.0,
        49152.0,
        98304.0,
        147456.0,
        196608.0,
        294912.0,
    ]
    assert on_grid([1.0, 2.0], (5.0,)) == [1.0, 2.0]  # no cadence from one point
    assert _all_equal_chance(on_grid([1.0, 2.0, 3.0, 4.0], (4.0, 8.0)), 3) == 1.0


def _launch_config(tmp_path: Path, benchmark: str, text: str) -> shell.LaunchConfig:
    from mlperf_audit.model import FileEntry, Implementation

    path = tmp_path / "config_DGXA100.sh"
    path.write_text(text)
    entry = FileEntry("impl/config_DGXA100.sh", path, path.stat().st_size)
    return shell.LaunchConfig(entry, shell.parse_shell(Implementation(benchmark, "impl", "impl", (entry,)), entry))


#: NVIDIA's v2.0 maskrcnn config_DGXA100.sh as Fujitsu published it (pytorch-fujitsu): BATCHSIZE=6 on
#: 8 GPUs, while train_mlperf.py logs cfg.SOLVER.IMS_PER_BATCH, 96, and EXTRA_CONFIG is extended
#: with a value only the shell knows.
MASKRCNN_CONFIG = """## DL params
export BATCHSIZE=6
export EXTRA_PARAMS=""
export EXTRA_CONFIG='SOLVER.BASE_LR 0.12 SOLVER.WARMUP_ITERS 625 SOLVER.IMS_PER_BATCH 96 TEST.IMS_PER_BATCH 96 NHWC True'
export EXTRA_CONFIG="${EXTRA_CONFIG} SOLVER.MAX_ITER ${SOLVER_MAX_ITER} DATALOADER.DALI $ENABLE_DALI"
# SOLVER.IMS_PER_BATCH 48 in a comment is not read

## System run parms
export DGXNNODES=1
export DGXNGPU=8
"""


def test_maskrcnn_global_batch_is_solver_ims_per_batch(tmp_path):
    batch = _launch_config(tmp_path, "maskrcnn", MASKRCNN_CONFIG).global_batch("maskrcnn")
    assert batch is not None and batch.value == 96 and batch.assignment.line == 4
    assert batch.formula == "SOLVER.IMS_PER_BATCH 96" and batch.agrees(96) and not batch.agrees(48)
    # without the option written out, what BATCHSIZE means there is not known: not compared
    bare = MASKRCNN_CONFIG.replace("SOLVER.IMS_PER_BATCH 96 ", "")
    assert _launch_config(tmp_path, "maskrcnn", bare).global_batch("maskrcnn") is None
    # other benchmarks keep the per-accelerator formula
    assert _launch_config(tmp_path, "ssd", MASKRCNN_CONFIG).global_batch("ssd").value == 48


def test_rnnt_batch_already_holds_the_accumulation(tmp_path):
    # v2.0 ASUSTeK config_ESCN4A-E11.sh (rnnt): BATCHSIZE=384 on 4 GPUs with 2 accumulation steps;
    # train.py divides --batch_size by the steps and logs 1536 (result_0.txt:149)
    text = "export BATCHSIZE=384\nexport GRAD_ACCUMULATION_STEPS=2\nexport DGXNNODES=1\nexport DGXNGPU=4\n"
    batch = _launch_config(tmp_path, "rnnt", text).global_batch("rnnt")
    assert batch is not None and batch.value == 1536 and "GRAD_ACCUMULATION_STEPS" not in batch.formula
    assert _launch_config(tmp_path, "ssd", text).global_batch("ssd").value == 3072


def _rename_system(package: Path, new: str) -> None:
    """The fixture's system fx_8xh100 renamed `new` (its description, result folder and name inside)."""
    fixture = package / "Fixture"
    (fixture / "results" / "fx_8xh100").rename(fixture / "results" / new)
    description = fixture / "systems" / "fx_8xh100.json"
    description.rename(fixture / "systems" / f"{new}.json")
    path = fixture / "systems" / f"{new}.json"
    path.write_text(path.read_text().replace('"fx_8xh100"', f'"{new}"'))


def test_an_implementation_the_system_is_named_after_is_chosen(package, host):
    # v2.0 Azure: ND96amsr_A100_v4_n1_pytorch ran ND96amsr_A100_v4's code, not NC96ads_A100_v4's
    # (a 4-GPU VM's configurations, first by name)
    _rename_system(package, "ndx_8xh100_n1_pytorch")
    code = package / "Fixture/benchmarks/ssd/implementations"
    (code / "pytorch").rename(code / "ndx_8xh100")
    (code / "ndx_8xh100" / "config_fx_8xh100.sh").rename(code / "ndx_8xh100" / "config_DGXH100_1x8x32.sh")
    (code / "ncx_8xh100").mkdir()
    (code / "ncx_8xh100" / "config_DGXH100_1x8x32.sh").write_text("export DGXNNODES=1\nexport DGXNGPU=4\n")
    findings = rep(check(package, Config(select=("REP",)), host))
    traced = [f.message for f in findings if f.rule == "REP003"]
    assert len(traced) == 1 and "implementations/ndx_8xh100 (the system's name begins with its name" in traced[0]
    assert not [f for f in findings if f.rule in ("REP010", "REP011")]


def test_a_configuration_in_an_implementation_taken_by_name_order_is_a_guess(package, host):
    # two implementations fit the system equally; the first by name was taken: its configuration's
    # disagreement with the description is a warning, not an error
    code = package / "Fixture/benchmarks/ssd/implementations"
    (code / "jax").mkdir()
    (code / "jax" / "config_fx_8xh100.sh").write_text("export DGXNNODES=1\nexport DGXNGPU=4\n")
    description = package / "Fixture/systems/fx_8xh100.json"
    description.write_text(description.read_text().replace("PyTorch NVIDIA", "NVIDIA"))
    findings = [f for f in rep(check(package, Config(select=("REP",)), host)) if f.rule == "REP010"]
    assert len(findings) == 1 and findings[0].severity.value == "warning"
    assert findings[0].path.endswith("jax/config_fx_8xh100.sh")
    assert "taken first by name of 2 implementations that fit the system as well" in findings[0].message


def test_hugectr_dlrm_batch_size_variable_is_not_compared(tmp_path):
    # v2.0 Inspur config_NF5488A5.sh exports BATCH_SIZE=55296; run_and_time.sh runs `python3 ${CONFIG}`
    # (nf5488a5.py: batchsize = 51200, which is logged) and passes BATCH_SIZE to nothing
    text = 'export BATCH_SIZE=55296\nexport DGXNGPU=8\nexport CONFIG="nf5488a5.py"\nexport DGXNNODES=1\n'
    assert _launch_config(tmp_path, "dlrm", text).global_batch("dlrm") is None
    assert _launch_config(tmp_path, "dlrm_dcnv2", text).global_batch("dlrm_dcnv2") is not None


def test_a_variable_nothing_reads_is_not_compared(package, host):
    # v2.0 Baidu bert: config_DGXA100_1x8x56x1.sh:18 exports LR=3.5e-4, but run_benchmark.sh:126
    # passes --learning_rate 0.000425 (what is logged) and no script reads LR
    code = package / IMPLEMENTATION
    config = code / "config_fx_8xh100.sh"
    config.write_text(config.read_text().replace("export LR=0.0001", "export LR=0.0002"))
    (code / "run_and_time.sh").write_text("#!/bin/bash\npython train.py --lr 0.0001 --batch-size ${BATCHSIZE}\n")
    assert not [f for f in rep(check(package, Config(select=("REP011",)), host)) if "LR=" in f.message]
    # once the launcher reads it, the configuration's value is what runs: the disagreement stands
    (code / "run_and_time.sh").write_text("#!/bin/bash\npython train.py --lr ${LR} --batch-size ${BATCHSIZE}\n")
    found = [f for f in rep(check(package, Config(select=("REP011",)), host)) if "LR=" in f.message]
    assert len(found) == 1 and found[0].severity.value == "error"


def test_a_configuration_chosen_over_another_systems_that_reproduces_the_logs_is_a_guess(package, host):
    # v3.0 Supermicro SYS-421GU-TNX resnet: its folder holds config_DGXH100.sh (BATCHSIZE=400, 1600 on
    # 4 GPUs) and config_SYS-421GU-TNXR.sh (800: the logged 3200), named after the submitter's other system
    code = package / IMPLEMENTATION
    (code / "config_fx_8xh100.sh").unlink()
    (code / "config_DGXH100.sh").write_text("export BATCHSIZE=64\nexport DGXNNODES=1\nexport DGXNGPU=8\n")
    (code / "config_fxother_8xh100.sh").write_text("export BATCHSIZE=32\nexport DGXNNODES=1\nexport DGXNGPU=8\n")
    systems = package / "Fixture/systems"
    (systems / "fxother_8xh100.json").write_text(
        (systems / "fx_8xh100.json").read_text().replace('"fx_8xh100"', '"fxother_8xh100"')
    )
    found = [f for f in rep(check(package, Config(select=("REP011",)), host)) if "global batch" in f.message]
    assert len(found) == 1 and found[0].severity.value == "warning"
    assert "though config_fxother_8xh100.sh, named after another system, gives the logged values" in found[0].message


def test_a_launcher_sourcing_another_systems_configuration_does_not_decide_against_the_logs(package, host):
    # v2.0 Dell bert: bert_runner_XE8545_4gpu.sh sources config_XE8545_1x4x56x1.sh (another system's),
    # while the R750xa results log every value of config_R750xax4A100-PCIE-80GB_nvbridged.sh
    code = package / IMPLEMENTATION
    (code / "config_fxother_8xh100.sh").write_text("export BATCHSIZE=64\nexport DGXNNODES=1\nexport DGXNGPU=8\n")
    (code / "runner_fxother.sh").write_text("#!/bin/bash\nsource ./config_fxother_8xh100.sh\n")
    systems = package / "Fixture/systems"
    (systems / "fxother_8xh100.json").write_text(
        (systems / "fx_8xh100.json").read_text().replace('"fx_8xh100"', '"fxother_8xh100"')
    )
    findings = rep(check(package, Config(select=("REP003", "REP011")), host))
    assert not [f for f in findings if f.rule == "REP011"]
    assert [f for f in findings if f.rule == "REP003" and "config_fx_8xh100.sh, certain" in f.message]


def test_a_configuration_giving_every_logged_value_beats_one_a_default_apart(package, host):
    # v3.1 Fujitsu ssd: do_ssd_10gpu.sh sources config_PG_10gpu_gbs240.sh (BATCHSIZE=${BATCHSIZE:-24});
    # the system primergy-..._gbs320 logs 320, which config_PG_10gpu_gbs320.sh gives
    code = package / IMPLEMENTATION
    (code / "config_fx_8xh100.sh").unlink()
    common = "export DGXNNODES=1\nexport DGXNGPU=8\nexport LR=0.0001\n"
    (code / "config_PG_8gpu_gbs512.sh").write_text("export BATCHSIZE=${BATCHSIZE:-64}\n" + common)
    (code / "config_PG_8gpu_gbs256.sh").write_text("export BATCHSIZE=32\n" + common)
    (code / "do_ssd_8gpu.sh").write_text("#!/bin/bash\nsource config_PG_8gpu_gbs512.sh\n")
    findings = rep(check(package, Config(select=("REP003", "REP011")), host))
    assert not [f for f in findings if f.rule == "REP011"]
    assert [f for f in findings if f.rule == "REP003" and "launch configuration config_PG_8gpu_gbs256.sh" in f.message]
