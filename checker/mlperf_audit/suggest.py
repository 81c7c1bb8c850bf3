""" "Did you mean": the known names closest to a mistyped one (difflib's ratio, as Python 3.14's
argparse suggests), for the command line and for findings that name a folder or a system."""

from __future__ import annotations

import difflib
import re
from typing import Iterable, Sequence

#: difflib's default: below it, a "suggestion" is noise (`GNN` is not close to `bert`).
CUTOFF = 0.6
#: For rule codes: `RCP999` shares only its prefix with `RCP001` (a ratio of 0.5), and the codes of
#: that prefix are the useful answer.
CODE_CUTOFF = 0.5


def closest(
    word: str, known: Iterable[str], count: int = 3, cutoff: float = CUTOFF, *, stems_first: bool = True
) -> list[str]:
    """The names of `known` closest to `word`, best first, compared without case (`gnn` for
    `GNN`); a name that `word` abbreviates comes first (`--trust-tree-config` for `--trust`), then a
    name that `word` starts with (`bert` for `bert_large`, however much longer the typo is). With
    `stems_first=False` the similar names come before the stems: among keys, `speedup_pct` means
    `speedup_percent` rather than `speedup`."""
    by_folded: dict[str, str] = {}
    for name in known:
        by_folded.setdefault(name.casefold(), name)
    folded = word.casefold()
    completions = sorted(
        (name for name in by_folded if len(folded.lstrip("-")) >= 2 and name.startswith(folded)), key=len
    )
    stems = sorted(
        (name for name in by_folded if len(name) >= 3 and name != folded and folded.startswith(name)),
        key=len,
        reverse=True,
    )
    similar = difflib.get_close_matches(folded, list(by_folded), n=count, cutoff=cutoff)
    ordered = completions + stems + similar if stems_first else completions + similar + stems
    matches = list(dict.fromkeys(ordered))[:count]
    return [by_folded[match] for match in matches]


def did_you_mean(word: str, known: Iterable[str], count: int = 3, cutoff: float = CUTOFF) -> str:
    """`" (did you mean 'x'?)"` (or `'x', 'y' or 'z'`), or "" when nothing is close: to follow
    the mistyped word in a message."""
    return _question(closest(word, known, count, cutoff))


def did_you_mean_rule(selector: str, codes: Sequence[str], names: Sequence[str]) -> str:
    """As `did_you_mean`, for a rule selector: a mistyped code (`RCP999`, `rcp04`) is answered
    with the closest codes of its own prefix, when that prefix exists; anything else with the
    closest codes and names."""
    code = _CODE.fullmatch(selector.strip())
    if code:
        prefix = code.group(1).upper()
        own = [known for known in codes if known.startswith(prefix) and known[len(prefix) :].isdigit()]
        if own:
            return _question(closest(selector.strip().upper(), own, cutoff=0.0))
    return did_you_mean(selector, [*codes, *names], cutoff=CODE_CUTOFF)


_CODE = re.compile(r"([A-Za-z]+)\d+")


def _question(matches: list[str]) -> str:
    if not matches:
        return ""
    quoted = [repr(match) for match in matches]
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f" (did you mean {listed}?)"
