"""The terminal: the one place that decides colour and width, and builds rich's consoles.

Output is rendered to text first (`render`) and written by the command like any other report,
so a file, a pipe and a terminal receive the same words; only a terminal gets colour, and only
when neither `NO_COLOR` nor `TERM=dumb` says no (`FORCE_COLOR` asks for it anywhere; `NO_COLOR`
wins, as rich and pip decide). The width is `COLUMNS` when set, else the terminal's, else 80.
Nothing here parses markup: every text comes in as `rich.text.Text`, so a `[bold]` in a log
value is shown as written.
"""

from __future__ import annotations

import io
import os
import shutil
from dataclasses import dataclass
from typing import IO, Any

from rich.console import Console
from rich.text import Text

DEFAULT_WIDTH = 80
#: Narrower than this, wrapping would put a word per line: lines are left long instead.
MINIMUM_WIDTH = 40


def _is_terminal(stream: IO[str] | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError, OSError):  # a closed or unusual stream is no terminal
        return False


def _columns() -> int | None:
    value = os.environ.get("COLUMNS", "").strip()
    if value.isascii() and value.isdigit() and 0 < int(value) < 100_000:
        return int(value)
    return None


@dataclass(frozen=True)
class Screen:
    """How output to one stream is drawn: its width, whether it takes colour, whether a person
    watches it live (a terminal, where progress is shown)."""

    width: int = DEFAULT_WIDTH
    color: bool = False
    live: bool = False

    @classmethod
    def of(cls, stream: IO[str] | None) -> "Screen":
        """The screen of `stream` (None: a file the report is written to)."""
        terminal = _is_terminal(stream)
        dumb = os.environ.get("TERM", "") == "dumb"
        color = (terminal and not dumb) or bool(os.environ.get("FORCE_COLOR"))
        if os.environ.get("NO_COLOR"):
            color = False
        width = _columns()
        if width is None:
            width = shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns if terminal else DEFAULT_WIDTH
        return cls(width=max(width, MINIMUM_WIDTH), color=color, live=terminal and not dumb)

    def console(self, file: IO[str] | None = None) -> Console:
        """A rich console drawing for this screen into `file` (a string buffer by default)."""
        return Console(
            file=file if file is not None else io.StringIO(),
            width=self.width,
            force_terminal=self.color,
            no_color=not self.color,
            color_system="standard" if self.color else None,
            highlight=False,  # numbers and paths in messages are not coloured by guess
            markup=False,
            emoji=False,
            legacy_windows=False,
            soft_wrap=False,
            force_jupyter=False,
            force_interactive=self.live if file is not None else False,
        )


def render(screen: Screen, *renderables: Any) -> str:
    """`renderables` drawn for `screen`, as text (with colour codes only if the screen takes colour)."""
    console = screen.console()
    with console.capture() as captured:
        for renderable in renderables:
            # a text that must not wrap (a path to open) is written whole, past the width if need be
            whole = isinstance(renderable, Text) and bool(renderable.no_wrap)
            console.print(renderable, soft_wrap=whole)
    return "\n".join(line.rstrip() for line in captured.get().rstrip("\n").split("\n"))
