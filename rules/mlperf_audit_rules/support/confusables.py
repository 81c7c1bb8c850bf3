"""Names that look alike: the skeleton of Unicode Technical Standard #39 (Unicode Security
Mechanisms, section 4 "Confusable Detection"), over the confusables table shipped in
`data/confusables.txt` (Unicode 17.0.0; its source and licence are in the file's header and in
`data/UNICODE-LICENSE.txt`).

Two names are confusable when their skeletons are equal: `tinybox_red` and `tinybox_rеd` (a
Cyrillic `е`), or `Ünicorn` composed and decomposed. A name is first brought to NFKC, so that
compatibility forms (full-width letters, mathematical letters, ligatures) compare as the letters
they stand for.
"""

from __future__ import annotations

import unicodedata
from functools import cache
from importlib import resources

from mlperf_audit import visible


@cache
def _prototypes() -> dict[str, str]:
    table = resources.files("mlperf_audit_rules").joinpath("data/confusables.txt").read_text(encoding="utf-8")
    prototypes = {}
    for line in table.splitlines():
        if line and not line.startswith("#"):
            source, _, target = line.partition(";")
            prototypes[chr(int(source, 16))] = "".join(chr(int(code, 16)) for code in target.split())
    return prototypes


def skeleton(text: str) -> str:
    """UTS #39's skeleton of `text`: NFD, without the characters nothing shows (what `visible`
    writes as an escape: the default-ignorable code points, which the standard drops, and the
    controls), each character replaced by its prototype, NFD again."""
    prototypes = _prototypes()
    decomposed = unicodedata.normalize("NFD", text)
    shown = "".join(prototypes.get(char, char) for char in decomposed if visible(char) == char)
    return unicodedata.normalize("NFD", shown)


def comparison_key(name: str) -> str:
    """What two names must share to be shown alike: the skeleton of the name's NFKC form."""
    return skeleton(unicodedata.normalize("NFKC", name))


def spelled(text: str) -> str:
    """Every character of `text` outside printable ASCII by its code point and name
    (`U+0435 CYRILLIC SMALL LETTER IE`), comma-separated; empty for printable ASCII."""
    return ", ".join(
        f"U+{ord(char):04X} {unicodedata.name(char, 'unnamed')}"
        for char in dict.fromkeys(text)
        if not " " <= char <= "~"
    )


def latin_lookalikes(name: str) -> list[tuple[str, str]]:
    """The letters of `name` that are not Latin yet look like ASCII letters or digits (the
    Cyrillic `е` of `tinybox_rеd`), each with what it looks like, when `name` also holds ASCII
    letters: a name that mixes scripts that way reads as a Latin name it is not."""
    if not any("a" <= char.lower() <= "z" for char in name):
        return []
    found = []
    for char in dict.fromkeys(unicodedata.normalize("NFC", name)):
        if char.isascii() or not unicodedata.category(char).startswith("L"):
            continue
        if unicodedata.name(char, "").startswith("LATIN "):
            continue  # an accented or special Latin letter is the name's own script
        looks_like = comparison_key(char)
        if looks_like and looks_like.isascii() and looks_like.isalnum():
            found.append((char, looks_like))
    return found
