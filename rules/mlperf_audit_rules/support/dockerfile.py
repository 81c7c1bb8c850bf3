"""Reading Dockerfiles (and the other files that build an environment): the base images, with build
arguments expanded; which are unpinned; the YY.MM releases they name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .code_text import unix_newlines

DOCKERFILE_NAMES = re.compile(r"^(dockerfile|containerfile)([._-].*)?$|.*\.dockerfile$", re.IGNORECASE)
#: Other ways to build the environment than a container file.
ENVIRONMENT_NAMES = re.compile(
    r"^(requirements.*\.txt|environment\.ya?ml|conda.*\.ya?ml|setup\.py|pyproject\.toml|.*\.def|.*\.sif|"
    r"singularity.*|apptainer.*|Pipfile(\.lock)?|poetry\.lock|uv\.lock)$",
    re.IGNORECASE,
)


# --------------------------------------------------------------------------------------------
# Dockerfiles
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BaseImage:
    image: str | None  # None when a build argument without default decides it
    line: int
    written: str  # as the FROM line gives it


def base_images(text: str) -> list[BaseImage]:
    """The external images a Dockerfile builds FROM (earlier build stages are not images)."""
    arguments: dict[str, str | None] = {}
    stages: set[str] = set()
    images: list[BaseImage] = []
    for number, raw in instructions(text):
        line = raw.strip()
        upper = line.upper()
        if upper.startswith("ARG "):
            for item in line[4:].split():
                name, _, default = item.partition("=")
                arguments[name] = default.strip("'\"") if "=" in item else arguments.get(name)
        elif upper.startswith("FROM "):
            words = [w for w in line[5:].split() if not w.startswith("--")]
            if not words:
                continue
            written = words[0]
            if written.lower() not in stages:  # `FROM builder` names an earlier stage, not an image
                images.append(BaseImage(_expand(written, arguments), number, written))
            if len(words) >= 3 and words[1].upper() == "AS":
                stages.add(words[2].lower())
    return images


def instructions(text: str) -> list[tuple[int, str]]:
    """A Dockerfile's logical lines, each with the physical line it starts on: a line whose last
    character other than spaces and tabs is a backslash continues on the next, as Docker reads it.
    Lines and their numbers come from one pass, whatever ends the lines (LF, CRLF, CR)."""
    found: list[tuple[int, str]] = []
    parts: list[str] = []
    start = 1
    for number, line in enumerate(unix_newlines(text).split("\n"), 1):
        if not parts:
            start = number
        kept = line.rstrip(" \t")
        if kept.endswith("\\"):
            parts.append(kept[:-1])
            continue
        parts.append(line)
        found.append((start, " ".join(parts)))
        parts = []
    if parts:  # the last line continues into the end of the file
        found.append((start, " ".join(parts)))
    return found


def _expand(word: str, arguments: dict[str, str | None]) -> str | None:
    unresolved = False

    def replace(match: re.Match[str]) -> str:
        nonlocal unresolved
        name, default = match.group(1) or match.group(3), match.group(2)
        value = arguments.get(name)
        if value:
            return value
        if default is not None:
            return default
        unresolved = True
        return ""

    expanded = re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)", replace, word)
    return None if unresolved else expanded


def unpinned(image: str) -> str | None:
    """Why an image reference is not reproducible, or None when it is pinned."""
    if image.lower() == "scratch" or "@sha256:" in image:
        return None
    name, _, tag = image.rpartition(":") if ":" in image.rsplit("/", 1)[-1] else (image, "", "")
    if not tag:
        return "names no tag, so it means whatever `latest` is on the day of the build"
    if tag.lower() == "latest":
        return "uses the tag `latest`, which moves"
    return None


#: A YY.MM release, not a version inside a word (`ubuntu22.04`, `rocm6.4_ubuntu22.04`).
_RELEASE = re.compile(r"(?<![\w.])(\d{2})\.(\d{2})(?![\d])")


def release(text: str) -> str | None:
    """A YY.MM container release (NVIDIA NGC and similar), e.g. 24.09 in 'pytorch:24.09-py3'."""
    match = _RELEASE.search(text)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def releases(text: str) -> set[str]:
    """Every YY.MM release a text names ("NVIDIA Release 24.09 MxNet, pytorch and 23.09 pytorch")."""
    return {f"{match.group(1)}.{match.group(2)}" for match in _RELEASE.finditer(text)}
