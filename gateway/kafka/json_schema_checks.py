"""JSON Schema validation whose regular expressions run in RE2. A schema comes from the registry, so whoever
may write to it chooses its `pattern`s; jsonschema runs them with Python's backtracking `re`, where one pattern
such as `^(a+)+$` can hold a process for minutes on a short value. Here the keywords that match patterns
(`pattern`, `patternProperties`, `additionalProperties` beside patternProperties) match with RE2 instead, whose
time grows with the text only; a pattern RE2 cannot run is a validation error naming it. A schema that would
still reach Python's engine (`unevaluatedProperties` with `patternProperties` in the same schema) is refused.

Used when encoding (a produce or an import through a JSON Schema subject); decoding does not validate at all."""

from __future__ import annotations

import functools
import json

from jsonschema import ValidationError, validators

from gateway.user_regex import RegexRefused, compile_user_regex

MSG_PATTERN_REFUSED = "the schema's pattern {pattern!r} cannot be checked: {reason}"
MSG_UNSAFE_SCHEMA = ("the schema combines unevaluatedProperties with patternProperties, which the console does not "
                     "check (its patterns would run in a backtracking engine)")


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str):
    return compile_user_regex(pattern)


def _search(pattern: str, text: str) -> bool:
    try:
        return _compiled(pattern).search(text) is not None
    except RegexRefused as exc:
        raise ValidationError(MSG_PATTERN_REFUSED.format(pattern=pattern, reason=exc)) from None


def _pattern(validator, pattern, instance, schema):
    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator, pattern_properties, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in pattern_properties.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator, additional, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    properties, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
    extras = [key for key in instance
              if key not in properties and not any(_search(pattern, key) for pattern in patterns)]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        yield ValidationError(f"Additional properties are not allowed ({', '.join(map(repr, sorted(extras)))})")


def _mixes_unevaluated_and_patterns(node: object) -> bool:
    if isinstance(node, dict):
        if "unevaluatedProperties" in node and "patternProperties" in json.dumps(node):
            return True
        return any(_mixes_unevaluated_and_patterns(value) for value in node.values())
    if isinstance(node, list):
        return any(_mixes_unevaluated_and_patterns(value) for value in node)
    return False


def re2_validator(schema: dict, registry):
    """A validator for `schema` (its references resolved through `registry`) whose pattern keywords run in RE2;
    raises ValidationError for a schema whose patterns it could not keep out of Python's engine."""
    if _mixes_unevaluated_and_patterns(schema):
        raise ValidationError(MSG_UNSAFE_SCHEMA)
    base = validators.validator_for(schema)
    checked = validators.extend(base, {"pattern": _pattern, "patternProperties": _pattern_properties,
                                       "additionalProperties": _additional_properties})
    return checked(schema, registry=registry)
