"""The commands of `mlperf-audit`, one module each, and what they share.

Each module holds one `Command`: its name, its help, its arguments (`add_arguments`) and what it
does (`run`); `mlperf_audit.cli` builds the command line from `BUILTIN` and from the commands
plugins return from `mlperf_audit_register_commands`. A command parses its arguments, calls the
domain (`api`, `claims`, `peers`, `comparison`) and hands a document to a format
(`mlperf_audit.formats`). What they share is here: the options of a command that reads a PATH
(`reading_options`, an argparse parent parser), the preamble of one (`prepare`: the PATH exists,
its outputs are allowed, the configuration of its round), the progress line, and writing a result
(never inside a checked PATH).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..command import Command as Command
from ..command import Prepared as Prepared
from ..command import checked_target as checked_target
from ..command import must_exist as must_exist
from ..command import noted as noted
from ..command import prepare as prepare
from ..command import progress as progress
from ..command import reading_options as reading_options
from ..engine.plugins import PluginHost
from ..errors import AuditError
from ..formats import Format, as_files, formats_of, lookup
from ..safety import write_text

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(AuditError):
    """The command line asks for something impossible."""


def split(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def add_command(commands: Any, command: Command, formats: Mapping[str, Format]) -> argparse.ArgumentParser:
    """`command`'s parser among `commands` (argparse's subparsers), with `--format` among `formats`
    when it writes a document, its handler set to `command.run`."""
    options: dict[str, Any] = {"help": command.help, "parents": command.parents()}
    if command.description is not None:
        options["description"] = command.description
    if command.epilog is not None:
        options["epilog"] = command.epilog
        options["formatter_class"] = argparse.RawDescriptionHelpFormatter
    parser: argparse.ArgumentParser = commands.add_parser(command.name, **options)
    command.add_arguments(parser)
    if command.document is not None:
        parser.add_argument(
            "--format",
            default=command.default_format,
            choices=formats_of(formats, command.document),
            help=command.format_help,
        )
    parser.set_defaults(handler=command.run)
    return parser


def output_format(host: PluginHost, kind: str, name: str) -> Format:
    """The format `name` of the registry for a document of `kind` (a usage error naming the closest
    one otherwise)."""
    return lookup(host.formats, kind, name)


def write(text: str, output: str | None, checked: Sequence[Path] = (), append: bool = False) -> None:
    """Standard output, or the file `output`, which `safety.output_path` allows (never inside a checked PATH)."""
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    write_text(output, text, checked, append=append)


def rendered(fmt: Format, kind: str, document: Any) -> str:
    """`document` in the format `fmt`, as one text (a format of several files: joined by a blank line)."""
    return "\n".join(as_files(fmt.render_document(kind, document)))
