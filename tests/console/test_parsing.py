import pytest

from console.parsing import parse_keys, parse_pairs


def test_pairs_from_commas_lines_and_repeated_options():
    assert parse_pairs(["retention.ms=1000,segment.ms=60000", "cleanup.policy=delete"]) == {
        "retention.ms": "1000", "segment.ms": "60000", "cleanup.policy": "delete"}
    assert parse_pairs("a=1\nb=2") == {"a": "1", "b": "2"}


def test_list_values_keep_their_commas():
    assert parse_pairs("cleanup.policy=compact,delete,retention.ms=5") == {
        "cleanup.policy": "compact,delete", "retention.ms": "5"}
    assert parse_pairs("cleanup.policy=[compact,delete]") == {"cleanup.policy": "compact,delete"}


@pytest.mark.parametrize("text", ["novalue", "=x", "a=1\nstray"])
def test_items_without_a_key_are_refused(text):
    with pytest.raises(ValueError, match="is not key=value"):
        parse_pairs(text)


def test_keys_from_commas_and_repeats():
    assert parse_keys(["a,b", " c "]) == ["a", "b", "c"]
