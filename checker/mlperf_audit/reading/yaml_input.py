"""YAML written by a user (a claims file, a plugin's rule cases): read as plain data, in memory
and time bounded by the text's size, and its errors said in one readable line.

PyYAML's safe loader builds no objects from tags, but an alias (`*name`) repeats a whole anchored
node: nine levels of nine aliases are a 538-byte file that expands to 9^9 values in whatever
walks the data (1.6 GB and MemoryError in `audit --claims`). A claims file needs none: there an
alias is an error at its line. Rule cases reuse a package with one (`&power`, `*power`): there
the document may expand to `MAX_VALUES` values, counted as it is composed, before anything walks
it. Nesting past `MAX_DEPTH` (the composer recurses) and a key given twice in one mapping (PyYAML
keeps the last one without a word) are errors too.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

#: Deeper than any claims file or rule case nests; the composer recurses once per level.
MAX_DEPTH = 64
#: Values (scalars, lists, mappings) a document may expand to, aliases counted as what they repeat.
MAX_VALUES = 100_000


_SURROGATE = re.compile("[\ud800-\udfff]")


class YamlInputError(ValueError):
    """The text is not YAML this tool reads; the message is one line, with the line and column."""


class _PlainLoader(yaml.SafeLoader):
    """The safe loader, with every node counted as it will be expanded: an alias counts the whole
    value it repeats. Without `aliases`, an alias is an error; with them, a document that expands
    past `MAX_VALUES` values is, before anything walks it."""

    def __init__(self, stream: str, aliases: bool) -> None:
        super().__init__(stream)
        self.aliases = aliases
        self.depth = 0
        self.expanded: dict[int, int] = {}  # id(node): how many values it expands to, once composed
        self.children: list[int] = []  # for each node being composed: the values of its children so far

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]  # unannotated in types-PyYAML
            if not self.aliases:
                raise ComposerError(None, None, "an alias (*name) repeats an anchored value; write the value out", mark)
            node = super().compose_node(parent, index)
            size = self.expanded.get(id(node))
            if size is None:  # `&a [*a]`: a value that holds itself expands without end
                raise ComposerError(None, None, "an alias (*name) inside the value it names", mark)
            self._count(size, mark)
            return node
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ComposerError(None, None, f"nested deeper than {MAX_DEPTH} levels", self.peek_event().start_mark)  # type: ignore[no-untyped-call]
        self.children.append(0)
        try:
            node = super().compose_node(parent, index)
        finally:
            self.depth -= 1
            size = 1 + self.children.pop()
        if node is not None:
            self.expanded[id(node)] = size
            self._count(size, node.start_mark)
        return node

    def _count(self, size: int, mark: yaml.Mark) -> None:
        if size > MAX_VALUES:
            raise ComposerError(None, None, f"the document expands to more than {MAX_VALUES:,} values", mark)
        if self.children:
            self.children[-1] += size

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            value = super().construct_object(node, deep=deep)
        except ValueError as error:  # a scalar no Python value holds: 5,000 digits, the 45th of a month
            text = str(node.value) if isinstance(node, yaml.ScalarNode) else ""
            shown = f"{text[:12]}... ({len(text):,} characters)" if len(text) > 60 else repr(text)
            problem = "more digits than Python reads" if "integer string conversion" in str(error) else str(error)
            raise ConstructorError(None, None, f"{shown} cannot be read: {problem}", node.start_mark) from None
        if isinstance(value, str) and _SURROGATE.search(value):
            # "\ud83d\ude00" escapes one character in two halves, which PyYAML leaves apart
            try:
                value = value.encode("utf-16", "surrogatepass").decode("utf-16")
            except UnicodeDecodeError:
                raise ConstructorError(
                    None,
                    None,
                    "an escaped half of a character (\\ud800 to \\udfff) without its other half",
                    node.start_mark,
                ) from None
        return value

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                repeated = key in seen
                seen.add(key)
            except TypeError:  # an unhashable key: the constructor below says so
                continue
            if repeated:
                raise ConstructorError(None, None, f"the key {key!r} is given twice", key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def describe(error: yaml.YAMLError) -> str:
    """A YAML error in one line: the problem, where it is, and what it was inside of."""
    if isinstance(error, yaml.MarkedYAMLError) and error.problem_mark is not None:
        mark = error.problem_mark
        text = f"line {mark.line + 1}, column {mark.column + 1}: {error.problem}"
        if error.context and error.context_mark is not None:
            context = error.context_mark
            text += f" ({error.context} at line {context.line + 1}, column {context.column + 1})"
        elif error.context:
            text += f" ({error.context})"
        return text
    return " ".join(str(error).split())


def load(text: str, aliases: bool = False) -> Any:
    """The plain data of a YAML document: mappings, lists, strings, numbers, booleans, null,
    dates. Raises `YamlInputError` for anything else: an alias unless `aliases`, a document that
    expands past `MAX_VALUES` values, nesting past `MAX_DEPTH`, a key given twice."""
    loader = _PlainLoader(text, aliases)
    try:
        return loader.get_single_data()
    except yaml.YAMLError as error:
        raise YamlInputError(describe(error)) from None
    finally:
        loader.dispose()
