"""The HTML report (document kind `html-report`): one self-contained page for a reviewer.

A round overview (the system x benchmark matrix of scores, sortable and filterable), per benchmark
folder the convergence curves of every run, the runs' times and the folder's findings, and per
benchmark the score against the number of accelerators with the envelope's bound and the energy
where power was measured.

The page's markup (`templates/report.html.j2`) holds no value of the package: every one travels
in a `<script type="application/json">` block, written for that context (`script_json`), and our
script (`report.js`) puts it on the page through the DOM (`textContent`, never markup). The charts
are drawn by Observable Plot and d3, vendored unmodified under `vendor/` (docs/report.md says
why), inlined, and allowed to run by their SHA-256 in the page's Content Security Policy, which
lets nothing else run and nothing load.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib.resources
import json
from typing import TYPE_CHECKING, Any, Container, Sequence

from markupsafe import Markup

from ...reference import hardware
from ...safety import html_text, visible_data
from ...scores import BenchmarkScore
from ..documents import FolderPlotData, HtmlReportDocument

if TYPE_CHECKING:
    import jinja2

#: The charting library the page inlines (`vendor/vendored.json` records each file's version and SHA-256).
VENDORED = (("d3.min.js", "d3.LICENSE"), ("plot.umd.min.js", "plot.LICENSE"))


def _package_text(*parts: str) -> str:
    return importlib.resources.files(__name__).joinpath(*parts).read_text(encoding="utf-8")


@functools.cache
def vendored_notice() -> str:
    """The licences of the vendored libraries, which their ISC terms ask to go with every copy."""
    return "\n\n".join(_package_text("vendor", licence) for _, licence in VENDORED)


def _ascii_script(text: str) -> str:
    """A script with every character beyond ASCII as its JavaScript escape: the libraries hold a
    soft hyphen, a zero-width space and a variation selector, which no output of this tool may
    (`safety.visible`). Each sits in a string, template or regular-expression literal (checked
    for the vendored versions), where the escape means the same character."""
    return "".join(
        char if char in "\t\n" or " " <= char <= "~" else "".join(f"\\u{unit:04x}" for unit in _utf16(char))
        for char in text
    )


def _utf16(char: str) -> tuple[int, ...]:
    data = char.encode("utf-16-be")
    return tuple(int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2))


@functools.cache
def scripts() -> tuple[str, ...]:
    """The page's scripts, in order: d3, Plot (which reads d3's global), ours."""
    vendored = tuple(_ascii_script(_package_text("vendor", name)) for name, _ in VENDORED)
    return vendored + (_ascii_script(_package_text("report.js")),)


def _hash(script: str) -> str:
    return f"'sha256-{base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()}'"


def policy() -> str:
    """Only the page's own scripts may run (no inline handler, no other script), and nothing is
    fetched; Plot writes inline styles, which is all `unsafe-inline` allows."""
    return f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src {' '.join(map(_hash, scripts()))}"


#: JSON inside a <script> element: `<` ends it (`</script>`) or opens a comment (`<!--`) the HTML
#: parser honours there; U+2028 and U+2029 end a line in older JavaScript.
_SCRIPT_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def script_json(data: Any) -> str:
    """`data` as strict JSON that can sit inside a <script> element, every string `visible`."""
    return json.dumps(visible_data(data), ensure_ascii=False, allow_nan=False).translate(_SCRIPT_SAFE)


def _escaped(value: Any) -> Markup:
    """Every value a template writes: markup built here as it is, anything else `visible` and
    escaped (both quotes included)."""
    if isinstance(value, Markup):
        return value
    return Markup(html_text(str(value)))


@functools.cache
def _environment() -> jinja2.Environment:
    """The template engine, built when a report is first written: importing jinja2 costs every
    process that loads the formats (the check's workers among them) a tenth of its start."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("mlperf_audit.formats.html", "templates"),
        autoescape=True,
        finalize=_escaped,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
    )


def _run_name(file: str) -> str:
    name = file.rsplit("/", 1)[-1]
    return name[: -len(".txt")] if name.endswith(".txt") else name


def _folder_of(path: str | None, folders: Container[str]) -> str | None:
    """The benchmark folder a finding's path lies in (the longest that holds it), if any: looked
    up by each of the path's folders, longest first, so that a package of thousands of systems
    never costs its findings times its folders."""
    if path is None:
        return None
    end = len(path)
    while end >= 0:
        if path[:end] in folders:
            return path[:end]
        end = path.rfind("/", 0, end)
    return None


def _score_data(s: BenchmarkScore) -> dict[str, Any]:
    dropped = {_run_name(name) for name in s.dropped}
    work = hardware.WORK.get(s.benchmark)
    return {
        "submitter": s.submitter,
        "system": s.system,
        "division": s.division,
        "availability": s.system_info.get("availability"),
        "accelerator": s.system_info.get("accelerator_model_name"),
        "accelerators": s.accelerators if isinstance(s.accelerators, int) else None,
        "score": s.score_minutes,
        "olympic_mean": s.score_minutes / s.scaling_factor if s.score_minutes and s.scaling_factor else None,
        "rcp_factor": s.rcp_factor,
        "rcp_status": s.rcp_status,
        "accelerator_minutes": s.accelerator_minutes,
        "work_rate": s.work_rate,
        "energy_joules": s.energy_joules,
        "spread": f"Run-to-run spread: {s.spread.describe()}",
        "note": s.note,
        "valid": s.valid,
        "invalid_reason": s.invalid_reason,
        "target": None
        if s.quality_target is None
        else {"value": s.quality_target[0], "direction": s.quality_target[1]},
        "band": list(s.rcp_band) if s.rcp_band else None,
        "envelope": None if s.envelope is None else {"factor": s.envelope[0], "bound": s.envelope[1]},
        "utilisation": (
            None
            if s.peak_utilisation is None
            else {
                "value": s.peak_utilisation[0],
                "peak": s.peak_utilisation[1],
                "ceiling": work.ceiling if work is not None else None,
            }
        ),
        "runs": [
            {
                "name": _run_name(r.file),
                "minutes": r.minutes,
                "status": r.status,
                "counted": r.counted,
                "dropped": _run_name(r.file) in dropped,
                "energy_joules": r.energy_joules,
            }
            for r in s.runs
        ],
    }


def _plotted(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """A curve's points to six significant digits, finer than a chart shows: a round's curves
    are half the page's data at full precision."""
    return [(float(f"{x:.6g}"), float(f"{y:.6g}")) for x, y in points]


def page_data(document: HtmlReportDocument) -> dict[str, Any]:
    """Everything the page shows, as plain data for its JSON block."""
    report = document.report
    scores = {s.path: s for s in document.scores}
    plotted = {folder.path: folder for folder in document.folders}
    paths = list(scores) + [path for path in plotted if path not in scores]
    ids = {path: f"folder-{index}" for index, path in enumerate(paths)}
    findings = []
    counts: dict[str, dict[str, int]] = {path: {"error": 0, "warning": 0, "info": 0} for path in paths}
    for f in report.findings:
        folder = _folder_of(f.path, ids)
        if folder is not None and not f.waived_by:
            counts[folder][f.severity.value] = counts[folder].get(f.severity.value, 0) + 1
        findings.append(
            {
                "severity": f.severity.value,
                "waived": f.waived_by is not None,
                "rule": f.rule,
                "location": f.location,
                "message": f.message,
                "hint": f.hint,
                "folder": ids.get(folder) if folder is not None else None,
            }
        )
    folders = []
    for path in paths:
        plot: FolderPlotData | None = plotted.get(path)
        result = scores.get(path) or (plot.score if plot is not None else None)
        entry: dict[str, Any] = {"id": ids[path], "path": path, "findings": counts[path]}
        entry["benchmark"] = result.benchmark if result is not None else path.rsplit("/", 1)[-1]
        entry.update(_score_data(result) if result is not None else {"runs": []})
        entry["unit"] = plot.unit if plot is not None else None
        entry["quality"] = plot.quality if plot is not None else None
        entry["curves"] = (
            [{"run": c.name, "points": _plotted(c.points)} for c in plot.curves] if plot is not None else []
        )
        folders.append(entry)
    verdict = {0: "passed", 1: "failed", 2: "incomplete"}[report.exit_code]
    return {
        "verdict": verdict,
        "target": report.target.describe(),
        "ruleset": f"{report.ruleset} ({report.config.ruleset_named_by()})",
        "mlperf_logging": report.mlperf_logging,
        "tool_version": report.tool_version,
        "configuration": report.config.describe(),
        "summary": dict(report.summary),
        "folders": folders,
        "findings": findings,
    }


def render_document(document: HtmlReportDocument) -> str:
    d3, plot, ours = scripts()
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            policy=Markup(policy()),
            data=Markup(script_json(page_data(document))),
            d3=Markup(d3),
            plot=Markup(plot),
            script=Markup(ours),
            licences=vendored_notice(),
        )
    )
