"""The charting library the HTML report inlines: the published build, unmodified, with its licence.

The files under `mlperf_audit/formats/html/vendor/` are the npm registry's builds of d3 and
Observable Plot; `vendored.json` records each one's version and SHA-256. A file changed by hand (or
replaced by another version without its record) fails here, and so does a licence left behind.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json

from mlperf_audit.formats import html

VENDOR = importlib.resources.files("mlperf_audit.formats.html") / "vendor"


def manifest() -> dict:
    return json.loads((VENDOR / "vendored.json").read_text())


def test_each_vendored_file_is_the_recorded_build() -> None:
    libraries = manifest()["libraries"]
    assert [lib["name"] for lib in libraries] == ["d3", "@observablehq/plot"]
    for lib in libraries:
        assert hashlib.sha256((VENDOR / lib["file"]).read_bytes()).hexdigest() == lib["sha256"], lib["file"]


def test_each_licence_ships_beside_its_library() -> None:
    for lib in manifest()["libraries"]:
        licence = (VENDOR / lib["licence"]).read_text()
        assert lib["licence_name"] == "ISC" and "Permission to use, copy, modify" in licence, lib["licence"]
        # an ISC licence asks that its notice go with every copy: the page names it too
        assert licence.splitlines()[0] in html.vendored_notice(), lib["licence"]


def test_a_vendored_file_can_be_inlined_as_a_script() -> None:
    """Inlined in a <script>, a library that held `</script` or `<!--` would end or bend it."""
    for lib in manifest()["libraries"]:
        text = (VENDOR / lib["file"]).read_text().lower()
        assert "</script" not in text and "<!--" not in text, lib["file"]
