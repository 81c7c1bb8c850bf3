"""The JSON Schemas shipped in `rules/mlperf_audit_rules/schemas/`, loaded once, validated with jsonschema."""

from __future__ import annotations

import json
import reprlib
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Callable, Iterator, cast

if TYPE_CHECKING:  # imported when a schema is first used: jsonschema takes a tenth of a second to import
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError


@cache
def load(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(resources.files("mlperf_audit_rules").joinpath(f"schemas/{name}").read_text())
    return schema  # every shipped schema is a JSON object


@cache
def validator(name: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    schema = load(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def errors(name: str, instance: Any) -> Iterator[ValidationError]:
    """Schema errors, the most specific first, in a stable order."""
    found = sorted(validator(name).iter_errors(instance), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    yield from found


def field_of(error: ValidationError) -> str:
    """The top-level field an error is about (for 'required', the missing field)."""
    if error.absolute_path:
        return str(error.absolute_path[0])
    if error.validator == "required":
        return str(error.message.split("'")[1]) if "'" in error.message else "(object)"
    return "(object)"


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlist, _REPR.maxdict = 3, 80, 80, 8, 8


def shown(value: Any) -> str:
    """`repr` of a value from a package, short enough for a message: lists and objects to 3 levels
    and 8 items, strings to 80 characters. A log may hold a value nested 64 levels deep (the
    parser's bound) or a megabyte long; a finding quotes enough of it to recognise it."""
    return _REPR.repr(value)


def describe(error: ValidationError) -> str:
    if error.validator == "oneOf" and error.absolute_path:
        wanted = error.schema.get("description") if isinstance(error.schema, dict) else None
        wanted = wanted or "a positive integer, as a JSON number or a string of digits"
        return f"{shown(error.instance)} is not {wanted}"
    if error.validator == "enum":
        allowed = cast("list[Any]", error.validator_value)  # set (to the schema's `enum`) by the validator that failed
        return f"{shown(error.instance)} is not one of {', '.join(repr(v) for v in allowed)}"
    message = error.message
    if isinstance(error.instance, (list, dict, str)):  # jsonschema quotes the whole value: shorten it
        whole = repr(error.instance)
        if message.startswith(whole) and len(whole) > len(shown(error.instance)):
            message = shown(error.instance) + message[len(whole) :]
    return message


@cache
def _value_validator(name: str, schema_json: str) -> Draft202012Validator:
    """A validator for one sub-schema of a schema file, resolving that file's `$defs`."""
    from jsonschema import Draft202012Validator

    schema = {**json.loads(schema_json), "$defs": load(name).get("$defs", {})}
    return Draft202012Validator(schema)


#: Scalar verdicts remembered per sub-schema; past this many distinct values, validate each time.
_VERDICTS_KEPT = 4096
_SCALARS = (str, int, float, bool, type(None))


@cache
def value_checker(name: str, schema_json: str) -> Callable[[Any], bool]:
    """`is_valid` for one sub-schema, remembering the verdict for scalar values: a round logs the
    same batch sizes and names hundreds of thousands of times, and jsonschema is slow per call."""
    validator = _value_validator(name, schema_json)
    verdicts: dict[tuple[type, Any], bool] = {}
    schema = json.loads(schema_json)
    reference = schema.get("$ref", "") if len(schema) == 1 else ""
    target = load(name).get("$defs", {}).get(reference.removeprefix("#/$defs/"), {}) if reference else schema
    # {"type": "number"} holds every int and float (NaN too), which are too many to remember one by one
    numbers_valid = target == {"type": "number"}

    def is_valid(value: Any) -> bool:
        if numbers_valid and (type(value) is float or type(value) is int):
            return True
        if not isinstance(value, _SCALARS):
            return bool(validator.is_valid(value))
        remembered = verdicts.get((type(value), value))  # the type keeps True apart from 1
        if remembered is None:
            remembered = bool(validator.is_valid(value))
            if len(verdicts) < _VERDICTS_KEPT:
                verdicts[(type(value), value)] = remembered
        return remembered

    return is_valid


def explain(schema: dict[str, Any]) -> str:
    reference = str(schema.get("$ref", ""))
    if "anyOf" in schema:
        return " or ".join(explain(option) for option in schema["anyOf"])
    return {
        "#/$defs/count": "a whole number >= 0",
        "#/$defs/positive": "a whole number >= 1",
        "#/$defs/number": "a number",
        "#/$defs/name": "a non-empty string",
        "#/$defs/bbox_segm": "an object of numbers with 'BBOX' and 'SEGM'",
    }.get(reference) or (f"one of {schema['enum']}" if "enum" in schema else f"of type {schema.get('type')}")
