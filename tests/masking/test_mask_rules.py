"""The masking core, pure: whatever a record holds, a masked field's value is not in what comes out; each action
does what it says; paths outside the grammar are refused; a value that cannot be read is hidden whole."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from gateway.user_regex import compile_user_regex
from masking.mask_rules import HIDDEN_VALUE, Masker, Rule, RuleRefused, check_rule, parse_path

SECRET = "S3CR3T-VALUE-9f1c"
leaf = st.one_of(st.integers(), st.text(max_size=10), st.booleans(), st.none())
json_values = st.recursive(leaf, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                           max_leaves=12)


def masker(*rules: Rule, key: bytes | None = b"k") -> Masker:
    return Masker(list(rules), hash_key=key, compile_regex=compile_user_regex)


@settings(max_examples=150, deadline=None)
@given(json_values, st.sampled_from(["hide", "replace", "keep_last", "hash"]), st.booleans())
def test_a_masked_field_never_shows_its_value(other, action, in_list):
    value = {"other": other, "card": {"number": SECRET}} if not in_list else \
        {"other": other, "cards": [{"number": SECRET}, {"number": SECRET + "2"}]}
    path = "$.cards[*].number" if in_list else "$.card.number"
    m = masker(Rule("jsonpath", path, action, replacement="[card]", keep_last=3))
    shown = json.dumps(m.value(value, parsed=True))
    assert "S3CR3T" not in shown and json.dumps(other) in shown


def test_each_action():
    value = {"card": "4111222233334444", "n": 7}
    assert masker(Rule("jsonpath", "card", "hide")).json(value) == {"n": 7}
    assert masker(Rule("jsonpath", "card", "replace", replacement="x")).json(value)["card"] == "x"
    assert masker(Rule("jsonpath", "$.card", "keep_last", keep_last=4)).json(value)["card"] == "*" * 12 + "4444"
    hashed = masker(Rule("jsonpath", "card", "hash")).json(value)["card"]
    assert hashed.startswith("hmac:") and hashed == masker(Rule("jsonpath", "card", "hash")).json(value)["card"]
    assert hashed != masker(Rule("jsonpath", "card", "hash"), key=b"other").json(value)["card"]
    # Without the console's key, hashing hides: it fails closed.
    assert masker(Rule("jsonpath", "card", "hash"), key=None).json(value) == {"n": 7}
    m = masker(Rule("regex", r"\d{4}-\d{4}", "replace", replacement="####"), Rule("header", "ssn", "hide"),
               Rule("key", "", "keep_last", keep_last=2))
    row = m.record({"key": "customer-42", "value": "call 5551-2345 now", "headers": [["ssn", "1"], ["t", "5551-2345"]]})
    assert row == {"key": "*********42", "value": "call #### now", "headers": [["t", "####"]]}


def test_a_value_that_cannot_be_read_is_hidden_whole():
    m = masker(Rule("jsonpath", "card", "hide"))
    assert m.value('{"card": "' + SECRET + '", "cut sho', parsed=False) == HIDDEN_VALUE
    assert m.value("plain text " + SECRET, parsed=False) == "plain text " + SECRET  # no field to select


@pytest.mark.parametrize("path", ["", "$..card", "$.a[?@.b]", "a b", "$.a[-1]", "$." + ".x" * 40])
def test_paths_outside_the_grammar_are_refused(path):
    with pytest.raises(RuleRefused):
        parse_path(path)


def test_rules_are_checked():
    assert parse_path("$['odd name'].items[2]") == (("name", "odd name"), ("name", "items"), ("index", 2))
    with pytest.raises(RuleRefused, match="does not compile|backtracking"):
        check_rule(Rule("regex", "(a)\\1", "hide"), compile_user_regex)
    with pytest.raises(RuleRefused, match="header name"):
        check_rule(Rule("header", " ", "hide"), compile_user_regex)
    with pytest.raises(RuleRefused, match="not an action"):
        check_rule(Rule("key", "", "encrypt"), compile_user_regex)


def test_a_search_path_is_compared_as_the_scanner_reads_it():
    from console.errors import ConsoleError
    from gateway.kafka.types import ScanFilter
    from masking.apply import check_search

    rules = masker(Rule("jsonpath", "$.items[0].card", "hide"), Rule("jsonpath", "$['odd name'].pin", "hide"))
    for path in ("items.0.card", "items.00.card", "items.000.card.last4", "items", "items.0", "odd name.pin",
                 "odd name"):
        with pytest.raises(ConsoleError, match="masking rules"):
            check_search(rules, ScanFilter(value_fields=((path, "4111"),)))
    for path in ("items.1.card", "items.0.name", "other", "items.².card", "odd name.other"):
        check_search(rules, ScanFilter(value_fields=((path, "x"),)))


@given(st.integers(0, 5), st.integers(0, 3))
def test_any_spelling_of_a_masked_index_is_refused(index, zeros):
    from console.errors import ConsoleError
    from gateway.kafka.types import ScanFilter
    from masking.apply import check_search

    rules = masker(Rule("jsonpath", f"$.items[{index}].card", "hide"))
    with pytest.raises(ConsoleError):
        check_search(rules, ScanFilter(value_fields=((f"items.{'0' * zeros}{index}.card", "x"),)))


def test_a_json_value_behind_a_byte_order_mark_is_still_json_to_the_rules():
    from topics.decoding import decode_bytes

    value = "\ufeff" + json.dumps({"card": SECRET, "n": 1})
    assert decode_bytes(value.encode()).kind == "json"  # so JSON-path rules reach its fields
    rules = masker(Rule("jsonpath", "$.card", "hide"))
    assert rules.value(value, parsed=False) == HIDDEN_VALUE  # and a text that only looks like JSON is hidden
