"""The browser's query string, pure: its defaults, older links, refusals at their fields, and the round trip from a
view to its URL and back (what a shared link or a saved filter relies on)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from console.times import NOT_ISO_8601
from records.browse import BrowseQuery, iso_utc
from records.browse_forms import MSG_OFFSET_NEEDED, MSG_TIME_NEEDED, BrowseForm, query_params

PARTITIONS = [0, 1, 2]


def _form(data: dict, topic: str = "orders", partitions=PARTITIONS) -> BrowseForm:
    return BrowseForm(data, topic=topic, partitions=partitions)


def test_nothing_asked_is_newest_first_across_all_partitions():
    form = _form({})
    assert form.is_valid() and form.query() == BrowseQuery()


def test_older_links_still_read_what_they_meant():
    assert _form({"partition": "0", "offset": "10", "limit": "5"}).is_valid()
    old = _form({"partition": "0", "offset": "10"})
    assert old.is_valid() and old.query() == BrowseQuery(start="offset", partition=0, offset=10)
    timed = _form({"since": "2026-11-29T02:41:00Z"})
    assert timed.is_valid() and timed.query().time_ms == 1_795_920_060_000


def test_refusals_are_at_their_fields():
    missing = _form({"partition": "9"}, topic="50% off")
    assert not missing.is_valid()
    assert missing.errors["partition"] == ["Topic '50% off' has no partition 9; it has 0 to 2."]
    assert _form({"partition": "9"}, partitions=[0, 4]).errors["partition"] == [
        "Topic 'orders' has no partition 9; it has 0, 4."]
    assert _form({"start": "offset"}).errors["offset"] == [MSG_OFFSET_NEEDED]
    assert _form({"start": "time"}).errors["since"] == [MSG_TIME_NEEDED]
    us = "11/29/2026 2:41 PM"
    assert _form({"start": "time", "since": us}).errors["since"] == [NOT_ISO_8601.format(text=us)]
    assert "limit" in _form({"limit": "100000"}).errors and "start" in _form({"start": "sideways"}).errors


def test_iso_utc():
    assert iso_utc(1_795_920_060_000) == "2026-11-29T02:41:00Z"
    assert iso_utc(1_795_920_060_123) == "2026-11-29T02:41:00.123Z"


queries = st.builds(
    BrowseQuery, start=st.sampled_from(["newest", "oldest", "offset", "time"]),
    partition=st.one_of(st.none(), st.sampled_from(PARTITIONS)), offset=st.integers(0, 10**12),
    time_ms=st.integers(0, 4_000_000_000_000), key=st.text(max_size=20).filter(lambda t: "\x00" not in t),
    value=st.text(max_size=20).filter(lambda t: "\x00" not in t),
    isolation=st.sampled_from(["read_committed", "read_uncommitted"]), limit=st.integers(1, 500))


@given(queries)
def test_a_view_survives_its_own_url(query):
    form = _form(query_params(query))
    assert form.is_valid(), form.errors
    back = form.query()
    expected = query.__class__(**{**query.__dict__,
                                  "offset": query.offset if query.start == "offset" else None,
                                  "time_ms": query.time_ms if query.start == "time" else None})
    assert back == expected
