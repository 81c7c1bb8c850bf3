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
from typing import IO, Any, Sequence

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text
from tabulate import tabulate

DEFAULT_WIDTH = 80
#: Narrower than this, wrapping would put a word per line: lines are left long instead.
MINIMUM_WIDTH = 40
#: A table's last column (a message, a summary) is given at least this much before rows become blocks.
MINIMUM_LAST = 24
#: A table's other columns wider than this wrap, down to this width, when the table is too wide.
SHRUNK = 14


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
    #: Someone reads it at this width (a terminal, or COLUMNS set): tables are fitted to it.
    fitted: bool = False

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
        return cls(
            width=max(width, MINIMUM_WIDTH),
            color=color,
            live=terminal and not dumb,
            fitted=terminal or _columns() is not None,
        )

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


@dataclass(frozen=True)
class Indented:
    """A text wrapped as a paragraph indented by `indent` columns (each of its lines)."""

    text: Text
    indent: int


def _between_words(console: Console, text: Text, indent: int = 0) -> list[Text]:
    """`text` wrapped between words to the console's width less `indent`; a word longer than
    that (a path, a URL) is left whole past the edge, never cut: it must open when copied."""
    text = text.copy()
    text.overflow = "ignore"  # as the text's own: between words still, a long word whole
    lines = text.wrap(console, max(console.width - indent, 1))
    return [Text(" " * indent) + line if indent else line for line in lines]


def render(screen: Screen, *renderables: Any) -> str:
    """`renderables` drawn for `screen`, as text (with colour codes only if the screen takes colour)."""
    console = screen.console()
    with console.capture() as captured:
        for renderable in renderables:
            if isinstance(renderable, Text) and renderable.no_wrap:
                console.print(renderable, soft_wrap=True)  # a line that must not wrap is written whole
            elif isinstance(renderable, (Text, Indented)):
                paragraph = renderable if isinstance(renderable, Indented) else Indented(renderable, 0)
                for line in _between_words(console, paragraph.text, paragraph.indent):
                    console.print(line, soft_wrap=True)
            else:
                console.print(renderable)
    return "\n".join(line.rstrip() for line in captured.get().rstrip("\n").split("\n"))


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str], screen: Screen | None = None) -> str:
    """A table as text. Where someone reads it at a width (`Screen.fitted`) it fits that width:
    its narrow columns as wide as their content, its wide ones wrapped; when even that cannot fit,
    each row becomes a block (its first cell, then `header: value` pairs, wrapped). Elsewhere (a
    pipe, a file) one row per line as tabulate lays it out, for grep and awk, as before.
    Cells are shown as written: never parsed as markup or reformatted as numbers."""
    cells = [[cell if isinstance(cell, Text) else Text(str(cell)) for cell in row] for row in rows]
    if screen is None or not screen.fitted:
        return tabulate([[cell.plain for cell in row] for row in cells], headers=list(headers), disable_numparse=True)
    natural = [
        max([len(header)] + [cell.cell_len for row in cells for cell in row[index : index + 1]])
        for index, header in enumerate(headers)
    ]
    # a narrow column keeps its width; a wide one wraps, down to SHRUNK (the last to MINIMUM_LAST)
    least = [min(width, SHRUNK) for width in natural[:-1]] + [min(natural[-1], MINIMUM_LAST)]
    if sum(least) + 3 * (len(headers) - 1) <= screen.width:  # a gap: padding, rule, padding
        grid = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, header_style="bold")
        for header, width, minimum in zip(headers, natural, least):
            grid.add_column(Text(header), no_wrap=width <= minimum, overflow="fold", min_width=minimum)
        for row in cells:
            grid.add_row(*row)
        return render(screen, grid)
    blocks: list[Any] = []
    for row in cells:
        pairs = Text()
        for header, cell in zip(headers[1:], row[1:]):
            if pairs:
                pairs.append(" · ", style="dim")
            pairs.append(f"{header}: ", style="dim")
            pairs.append(cell)
        blocks += [Text.assemble(row[0], style="bold") if row else Text(), Indented(pairs, 2)]
    return render(screen, *blocks)


def wrapped(text: str, screen: Screen | None = None) -> str:
    """Plain lines of text wrapped to the screen where someone reads it at a width, between words
    (continuation lines indented as the line itself); unchanged elsewhere."""
    if screen is None or not screen.fitted:
        return text
    lines = []
    for line in text.split("\n"):
        indent = len(line) - len(line.lstrip(" "))
        lines.append(render(screen, Indented(Text(line.lstrip(" ")), indent)) if line.strip() else "")
    return "\n".join(lines)
