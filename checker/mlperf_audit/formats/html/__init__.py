"""The HTML report (document kind `html-report`): one self-contained page for a reviewer.

Summary, scores, findings (with filters), and per benchmark folder the plots a reviewer wants:
the convergence curves of every run (quality against the logged unit, with the quality target and
the RCP band of acceptable mean convergence), time-to-train per run with the olympic mean, and,
where the work model applies, the utilisation of the accelerator's peak, and, for closed results,
where the result stands against the published envelope (AUD008, AUD009).

The page's markup is the Jinja2 template `templates/report.html.j2`, rendered with autoescape on
and every value passed through `safety.html_text` by the engine itself (`finalize`): a value from
the package can open no tag and leave no attribute, wherever a template puts it, and shows its
control characters visibly. The plots are inline SVG written here: no plotting library
(matplotlib would add tens of MB of dependencies for a few lines and rectangles) and nothing
fetched when the file is opened. The page's Content Security Policy lets only its own script run
and nothing load, should escaping ever miss.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import math
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from markupsafe import Markup

from ...reference import hardware
from ...safety import html_text
from ...scores import BenchmarkScore
from ..documents import FolderPlotData, HtmlReportDocument, PlottedCurve

if TYPE_CHECKING:
    import jinja2

COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
WIDTH, HEIGHT, MARGIN = 520, 240, 48


def _scale(values: Iterable[float], pad: float = 0.05) -> tuple[float, float]:
    """An axis range of positive width around the finite `values` (a log may hold an infinity, or
    subnormal numbers whose differences vanish in floating point)."""
    finite = [value for value in values if math.isfinite(value)] or [0.0]
    low, high = min(finite), max(finite)
    span = high - low
    low, high = low - pad * span, high + pad * span
    if not high - low > 0 or not math.isfinite(high - low):
        middle = low / 2 + high / 2
        low, high = (middle - 1, middle + 1) if math.isfinite(middle) else (-1.0, 1.0)
    return low, high


def _width(axis: tuple[float, float]) -> float:
    """An axis's width, or 1 where the logged values leave none to divide by."""
    width = axis[1] - axis[0]
    return width if width > 0 and math.isfinite(width) else 1.0


def _axes(x_range: tuple[float, float], y_range: tuple[float, float], x_label: str, y_label: str) -> str:
    parts = [
        f'<rect x="{MARGIN}" y="10" width="{WIDTH - MARGIN - 10}" height="{HEIGHT - MARGIN - 10}" '
        'fill="none" stroke="#999"/>'
    ]
    for i in range(5):
        fraction = i / 4
        x = MARGIN + fraction * (WIDTH - MARGIN - 10)
        y = HEIGHT - MARGIN - fraction * (HEIGHT - MARGIN - 20)
        x_value = x_range[0] + fraction * (x_range[1] - x_range[0])
        y_value = y_range[0] + fraction * (y_range[1] - y_range[0])
        parts.append(
            f'<text x="{x:.1f}" y="{HEIGHT - MARGIN + 14}" font-size="9" text-anchor="middle">{x_value:.4g}</text>'
        )
        parts.append(f'<text x="{MARGIN - 4}" y="{y + 3:.1f}" font-size="9" text-anchor="end">{y_value:.4g}</text>')
    parts.append(
        f'<text x="{(WIDTH + MARGIN) / 2}" y="{HEIGHT - 8}" font-size="10" text-anchor="middle">'
        f"{html_text(x_label)}</text>"
    )
    parts.append(
        f'<text x="12" y="{HEIGHT / 2}" font-size="10" text-anchor="middle" '
        f'transform="rotate(-90 12 {HEIGHT / 2})">{html_text(y_label)}</text>'
    )
    return "".join(parts)


def _project(x_range: tuple[float, float], y_range: tuple[float, float]) -> Any:
    x_width, y_width = (_width(x_range), _width(y_range))

    def point(x: float, y: float) -> tuple[float, float]:
        px = MARGIN + (x - x_range[0]) / x_width * (WIDTH - MARGIN - 10)
        py = HEIGHT - MARGIN - (y - y_range[0]) / y_width * (HEIGHT - MARGIN - 20)
        return px, py

    return point


def convergence_svg(
    found: Sequence[PlottedCurve],
    target: tuple[float, str] | None,
    band: tuple[float, float] | None,
    unit: str,
    quality: str,
) -> str:
    xs = [x for c in found for x, _ in c.points] + (list(band) if band else []) + [0.0]
    ys = [y for c in found for _, y in c.points] + ([target[0]] if target else [])
    x_range, y_range = (0.0, _scale(xs)[1]), _scale(ys)
    point = _project(x_range, y_range)
    parts = [
        f'<svg class="plot convergence" width="{WIDTH}" height="{HEIGHT}" xmlns="http://www.w3.org/2000/svg">',
        _axes(x_range, y_range, unit, quality),
    ]
    if band:
        left, right = point(band[0], 0)[0], point(band[1], 0)[0]
        parts.append(
            f'<rect class="rcp-band" x="{left:.1f}" y="10" width="{max(right - left, 1):.1f}" '
            f'height="{HEIGHT - MARGIN - 10}" fill="#2ca02c" opacity="0.15"><title>RCP band: minimum '
            f"allowed mean {band[0]:.4g} to RCP mean {band[1]:.4g}</title></rect>"
        )
    if target:
        y = point(0, target[0])[1]
        parts.append(
            f'<line class="target" x1="{MARGIN}" x2="{WIDTH - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#d62728" '
            f'stroke-dasharray="4 3"><title>target {target[1]} {target[0]:g}</title></line>'
        )
    for index, curve in enumerate(found):
        coordinates = " ".join(f"{px:.1f},{py:.1f}" for px, py in (point(x, y) for x, y in curve.points))
        color = COLORS[index % len(COLORS)]
        parts.append(
            f'<polyline class="run" points="{coordinates}" fill="none" stroke="{color}" stroke-width="1.5">'
            f"<title>{html_text(curve.name)}</title></polyline>"
        )
    parts.append("</svg>")
    return "".join(parts)


def times_svg(result: BenchmarkScore) -> str:
    runs = [(r.file.rsplit("/", 1)[-1][:-4], r.minutes, r.counted) for r in result.runs]
    known = [m for _, m, _ in runs if m is not None]
    if not known:
        return ""
    mean = result.score_minutes / result.scaling_factor if result.score_minutes else None
    x_range = (-0.5, len(runs) - 0.5)
    y_range = _scale(known + ([mean] if mean else []))
    point = _project(x_range, y_range)
    parts = [
        f'<svg class="plot times" width="{WIDTH}" height="{HEIGHT}" xmlns="http://www.w3.org/2000/svg">',
        _axes(x_range, y_range, "run", "time-to-train (min)"),
    ]
    if mean:
        y = point(0, mean)[1]
        parts.append(
            f'<line class="olympic-mean" x1="{MARGIN}" x2="{WIDTH - 10}" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="#1f77b4" stroke-dasharray="4 3"><title>olympic mean {mean:.4g} min</title></line>'
        )
    for index, (name, minutes, counted) in enumerate(runs):
        if minutes is None:
            continue
        px, py = point(index, minutes)
        color = "#1f77b4" if counted else "#d62728"
        parts.append(
            f'<circle class="run" cx="{px:.1f}" cy="{py:.1f}" r="4" fill="{color}">'
            f"<title>{html_text(name)}: {minutes:.3f} min{'' if counted else ' (failed)'}</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)


def utilisation_svg(value: float, ceiling: float, label: str) -> str:
    width = WIDTH - 2 * MARGIN
    bar = min(value, 1.2) / 1.2 * width
    mark: Callable[[float], float] = lambda share: MARGIN + min(share, 1.2) / 1.2 * width  # noqa: E731
    color = "#d62728" if value > 1 else "#ff7f0e" if value > ceiling else "#2ca02c"
    return (
        f'<svg class="plot utilisation" width="{WIDTH}" height="70" xmlns="http://www.w3.org/2000/svg">'
        f'<rect class="bar" x="{MARGIN}" y="15" width="{max(bar, 1):.1f}" height="22" fill="{color}">'
        f"<title>{html_text(label)}</title></rect>"
        f'<line x1="{mark(1.0):.1f}" x2="{mark(1.0):.1f}" y1="8" y2="44" stroke="#000"/>'
        f'<text x="{mark(1.0):.1f}" y="58" font-size="9" text-anchor="middle">100% of peak</text>'
        f'<line x1="{mark(ceiling):.1f}" x2="{mark(ceiling):.1f}" y1="8" y2="44" stroke="#999" stroke-dasharray="3 2"/>'
        f'<text x="{mark(ceiling):.1f}" y="68" font-size="9" text-anchor="middle">ceiling {ceiling:.0%}</text>'
        f'<text x="{MARGIN + max(bar, 1) + 4:.1f}" y="31" font-size="10">{value:.1%}</text></svg>'
    )


#: Where AUD008 and AUD009 start: the envelope's bound, and half of it (the bar's scale ends beyond).
ENVELOPE_MARKS = ((1.0, "envelope bound (AUD008)"), (2.0, "half of it (AUD009)"))


def envelope_svg(factor: float, label: str) -> str:
    """A result against the published envelope: the bound over its accelerator-minutes (above 1,
    beyond the bound)."""
    width, top = WIDTH - 2 * MARGIN, 2.4
    mark: Callable[[float], float] = lambda share: MARGIN + min(share, top) / top * width  # noqa: E731
    color = "#d62728" if factor > 2 else "#ff7f0e" if factor > 1 else "#2ca02c"
    lines = "".join(
        f'<line x1="{mark(at):.1f}" x2="{mark(at):.1f}" y1="8" y2="44" stroke="#000"'
        + (' stroke-dasharray="3 2"' if at > 1 else "")
        + f'/><text x="{mark(at):.1f}" y="{58 + 10 * i}" font-size="9" text-anchor="middle">{text}</text>'
        for i, (at, text) in enumerate(ENVELOPE_MARKS)
    )
    bar = mark(factor) - MARGIN
    return (
        f'<svg class="plot envelope" width="{WIDTH}" height="80" xmlns="http://www.w3.org/2000/svg">'
        f'<rect class="bar" x="{MARGIN}" y="15" width="{max(bar, 1):.1f}" height="22" fill="{color}">'
        f"<title>{html_text(label)}</title></rect>{lines}"
        f'<text x="{MARGIN + max(bar, 1) + 4:.1f}" y="31" font-size="10">{factor:.2f} of the bound</text></svg>'
    )


STYLE = """
body{font-family:system-ui,sans-serif;margin:24px;color:#222} h1{font-size:22px} h2{font-size:18px;margin-top:28px}
table{border-collapse:collapse;font-size:12px;margin:8px 0} td,th{border:1px solid #ccc;padding:3px 6px;text-align:left}
th{background:#f3f3f3} tr.error td:first-child{color:#b00;font-weight:bold} tr.warning td:first-child{color:#b60}
.folder{border-top:1px solid #ddd;margin-top:18px;padding-top:6px} .plots{display:flex;flex-wrap:wrap;gap:12px}
.muted{color:#666;font-size:12px} .badge{display:inline-block;padding:2px 8px;border-radius:8px;color:#fff}
"""

SCRIPT = """
function filterFindings(){
  const severity=document.getElementById('severity').value, text=document.getElementById('filter').value.toLowerCase();
  for(const row of document.querySelectorAll('#findings tbody tr')){
    const show=(severity==='all'||row.dataset.severity===severity)&&row.textContent.toLowerCase().includes(text);
    row.style.display=show?'':'none';
  }
}
window.addEventListener('load',()=>{
  document.getElementById('severity').addEventListener('change',filterFindings);
  document.getElementById('filter').addEventListener('input',filterFindings);
  let drawn=0; const plots=document.querySelectorAll('svg.plot');
  for(const svg of plots){
    const marks=svg.querySelectorAll('polyline.run,circle.run,rect.bar');
    if([...marks].some(m=>{const b=m.getBBox();return b.width>0||b.height>0;})) drawn++;
  }
  document.body.dataset.plotsDrawn=drawn; document.body.dataset.plotsTotal=plots.length;
});
"""
#: Only the script above may run (no inline handler, no other script), and nothing is fetched.
POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; "
    f"script-src 'sha256-{base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()}'"
)


#: The charting library the page inlines (`vendor/vendored.json` records each file's version and SHA-256).
VENDORED = (("d3.min.js", "d3.LICENSE"), ("plot.umd.min.js", "plot.LICENSE"))


def _vendor_text(name: str) -> str:
    import importlib.resources

    return (importlib.resources.files(__name__) / "vendor" / name).read_text(encoding="utf-8")


@functools.cache
def vendored_notice() -> str:
    """The licences of the vendored libraries, which their ISC terms ask to go with every copy."""
    return "\n\n".join(_vendor_text(licence) for _, licence in VENDORED)


def _escaped(value: Any) -> Markup:
    """Every value a template writes: markup the templates built (a macro's table, a plot drawn
    here) as it is, anything else `visible` and escaped (both quotes included)."""
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


def folder_plots(folder: FolderPlotData) -> list[Markup]:
    """A benchmark folder's plots: the convergence curves, the runs' times, and the highest
    utilisation of the accelerators' peak and the envelope (from its score)."""
    svgs = []
    result = folder.score
    if folder.curves:
        band = result.rcp_band if result is not None else None
        target = result.quality_target if result is not None else None
        svgs.append(convergence_svg(folder.curves, target, band, folder.unit, folder.quality))
    if result is not None:
        svgs.append(times_svg(result))
        work = hardware.WORK.get(result.benchmark)
        if result.peak_utilisation is not None and work is not None:
            value, peak = result.peak_utilisation
            svgs.append(utilisation_svg(value, work.ceiling, f"highest run: {value:.1%} of {peak}"))
        if result.envelope is not None:
            svgs.append(envelope_svg(*result.envelope))
    # drawn here, every value from the package in them escaped as they were drawn
    return [Markup(svg) for svg in svgs if svg]


def _score_row(s: BenchmarkScore) -> list[Any]:
    return [
        s.submitter,
        s.system,
        s.benchmark,
        f"{s.accelerators} x {s.system_info.get('accelerator_model_name')}" if s.accelerators else None,
        len(s.runs),
        f"{s.rcp_factor:.4f}",
        None if s.score_minutes is None else f"{s.score_minutes:.3f}",
        None if s.accelerator_minutes is None else f"{s.accelerator_minutes:,.1f}",
        None if s.work_rate is None else f"{s.work_rate:,.6g}",
        None if s.spread.minutes_cv is None else f"{s.spread.minutes_cv:.1%}",
        s.note,
    ]


def render_document(document: HtmlReportDocument) -> str:
    report, scores = document.report, document.scores
    spreads = {s.path: f"Run-to-run spread: {s.spread.describe()}" for s in scores}
    verdict = {0: ("passed", "#2ca02c"), 1: ("failed", "#d62728"), 2: ("incomplete", "#ff7f0e")}[report.exit_code]
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            policy=Markup(POLICY),
            style=Markup(STYLE),
            script=Markup(SCRIPT),
            verdict=verdict,
            report=report,
            summary=report.summary,
            score_rows=[_score_row(s) for s in scores],
            folders=[(folder.path, spreads.get(folder.path), folder_plots(folder)) for folder in document.folders],
            findings=[
                [f.severity.value + (" (waived)" if f.waived_by else ""), f.rule, f.location, f.message, f.hint]
                for f in report.findings
            ],
            severities=[f.severity.value for f in report.findings],
        )
    )
