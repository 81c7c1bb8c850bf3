"""`audit`'s report as text and JSON (document kind `audit`): the check's report, then each result
against its peers, the best results against a baseline's, and the claims' verdicts.

Names, description fields and claims are shown `visible`, and no line of the text can start a CI
workflow command.
"""

from __future__ import annotations

from typing import Any

from ..review.claims import ClaimVerdict
from ..safety import json_document, no_workflow_commands, visible
from ..scores import MEASURE_HEADERS, WORK_RATE_RATIO, measures_legend
from ..terminal import Screen, table, wrapped
from .documents import AuditDocument


def _fmt(value: Any, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _shown(value: Any) -> str:
    return visible(str(value))


def render_text(
    report_text: str,
    peers: list[dict[str, Any]],
    versus: list[dict[str, Any]],
    claims: list[ClaimVerdict],
    screen: Screen | None = None,
    judged_under: str = "",
) -> str:
    """The check's text, then the peers, the baseline and the claims (`judged_under`: the round the
    claims' numbers were recomputed under, and what named it)."""
    parts = [
        report_text.rstrip("\n"),
        "",
        wrapped(
            "Peers (work/acc-min = work per accelerator-minute, convergence units per minute per accelerator; "
            "vs peers = against the median of the "
            "other results on the same accelerator at a similar scale, 1/1.5 to 1.5 times its accelerators (peers: "
            "how many, and their scale); utilisation = of the best dense peak the accelerator offers, in "
            "the precision named; envelope = the published envelope's bound over the result's "
            "accelerator-minutes, above 1.00 beyond it: AUD008, AUD009):",
            screen,
        ),
    ]
    parts.append(
        table(
            [
                [
                    _shown(p["benchmark"]),
                    _shown(f"{p['submitter']}/{p['system']}"),
                    _shown(f"{p['accelerators']} x {p['accelerator']}"),
                    _fmt(p["score_minutes"], ".3f"),
                    _fmt(p["work_per_accelerator_minute"], ",.6g"),
                    _fmt(p["relative_to_peers"], ".2f"),
                    _shown(f"{p['peers']} at {p['peer_scale'].removesuffix(' accelerators')}")
                    if p.get("peer_scale")
                    else "-",
                    _fmt(p["utilisation"], ".0%")
                    + (f" {p['utilisation_precision']}" if p["utilisation_precision"] else ""),
                    _fmt(p["envelope"], ".2f"),
                    _shown(", ".join(p["stands_out"]) or "-"),
                ]
                for p in peers
            ],
            [
                "benchmark",
                "result",
                "accelerators",
                "score (min)",
                "work/acc-min",
                "vs peers",
                "peers",
                "utilisation",
                "envelope",
                "stands out",
            ],
            screen,
        )
    )
    if versus:
        parts += ["", "Against the baseline (best result per benchmark):"]
        parts.append(
            table(
                [
                    [
                        _shown(v["benchmark"]),
                        _shown(v["new"]),
                        _shown(v["baseline"]),
                        _fmt(v["accelerator_minutes_ratio"], ".3f"),
                        _fmt(v["work_per_accelerator_minute_ratio"], ".3f"),
                        _fmt(v["hardware_bound"], ".2f"),
                        _shown(v["verdict"]),
                    ]
                    for v in versus
                ],
                ["benchmark", "result", "baseline", *MEASURE_HEADERS, "hardware bound", "verdict"],
                screen,
            )
        )
        parts += [
            "",
            wrapped(measures_legend("the baseline", "the result"), screen),
            f"the hardware bound judges the {WORK_RATE_RATIO}",
        ]
    claims_from = len(parts)
    if claims:
        parts += ["", "Claims:"] + ([f"  judged under {_shown(judged_under)}"] if judged_under else [])
        for claim in claims:
            said = f": {_shown(claim.statement)}" if claim.statement else ""
            parts.append(f"- [{claim.verdict}] {_shown(claim.id)}{said}")
            if claim.reason:
                parts.append(f"    why: {_shown(claim.reason)}")
            if claim.recomputed is not None:
                parts.append(f"    claimed {_shown(claim.claimed)}, recomputed {_shown(claim.recomputed)}")
            elif claim.claimed is not None:
                parts.append(f"    claimed {_shown(claim.claimed)}, nothing recomputed")
            if claim.breakdown:
                parts.append(f"    breakdown: {_shown(claim.breakdown)}")
            if claim.hardware:
                parts.append(f"    hardware: {_shown(claim.hardware)}")
            parts += [f"    caveat: {_shown(c)}" for c in claim.caveats]
    if claims:  # the claims' lines, each wrapped to the screen (the tables above are fitted already)
        parts[claims_from:] = [wrapped(part, screen) for part in parts[claims_from:]]
    return no_workflow_commands("\n".join(parts) + "\n")


def text_document(document: AuditDocument) -> str:
    # the check report's own text rendering, imported here: the package imports this module
    from . import TextDisplay
    from . import render_text as render_report_text

    report_text = render_report_text(document.report, TextDisplay(screen=document.screen or Screen()))
    config = document.report.config
    return render_text(
        report_text,
        document.peers,
        document.baseline,
        document.claims,
        document.screen,
        judged_under=f"{config.ruleset} ({config.ruleset_named_by()})",
    )


def json_document_of(document: AuditDocument) -> str:
    rendered = document.report.to_dict()
    rendered.update(
        {"peers": document.peers, "baseline": document.baseline, "claims": [c.to_dict() for c in document.claims]}
    )
    return json_document(rendered)
