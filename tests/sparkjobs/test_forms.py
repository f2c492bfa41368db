"""The replay form, pure: start and end chosen as offsets in a table, a time, a group, an audited reset, or typed
as in the shell, each becoming the shell's syntax the service parses; a link's range shown as the choice it is."""

from __future__ import annotations

from django.http import QueryDict

from console.times import NOT_ISO_8601
from sparkjobs.forms import MSG_GROUP_NEEDED, MSG_OFFSETS_NEEDED, MSG_TIME_NEEDED, ReplayForm, initial_from_query

BASE = {"topic": "orders", "sink": "jsonl", "reason": "r", "isolation": "read_committed"}


def _data(**fields) -> QueryDict:
    data = QueryDict(mutable=True)
    data.update({**BASE, **fields})
    return data


def _clean(**fields) -> ReplayForm:
    form = ReplayForm(_data(**fields))
    form.is_valid()
    return form


def test_each_choice_becomes_the_shells_syntax():
    form = _clean(start_kind="offsets", start_offset_0="100", start_offset_1="250", start_offset_2="",
                  end_kind="timestamp", end_time="2026-11-29T02:41:00Z")
    assert form.is_valid(), form.errors
    assert (form.cleaned_data["start"], form.cleaned_data["end"]) == (
        "offsets:0=100,1=250", "timestamp:2026-11-29T02:41:00Z")
    assert _clean(start_kind="group", start_group=" billing ", end_kind="latest").cleaned_data["start"] == "group:billing"
    assert _clean(start_kind="reset", start_reset="42", end_kind="latest").cleaned_data["start"] == "reset:42"
    assert _clean(start_kind="earliest", end_kind="offsets", end_offset_3="9").cleaned_data["end"] == "offsets:3=9"


def test_the_typed_syntax_stays_accepted():
    form = _clean(start="offsets:0=100,1=250", end="latest")  # what the shell and older pages post
    assert form.is_valid() and form.cleaned_data["start"] == "offsets:0=100,1=250"
    typed = _clean(start_kind="typed", start="group:g", end_kind="typed", end="timestamp:2026-11-29T02:41:00+01:00")
    assert typed.is_valid() and typed.cleaned_data["end"] == "timestamp:2026-11-29T02:41:00+01:00"
    wrong = _clean(start_kind="typed", start="yesterday", end_kind="latest")
    assert "Cannot read start 'yesterday'" in wrong.errors["start"][0]


def test_what_a_choice_lacks_is_said_at_its_field():
    assert _clean(start_kind="offsets", end_kind="latest").errors["start_kind"] == [MSG_OFFSETS_NEEDED.format(which="start")]
    assert _clean(start_kind="timestamp", end_kind="latest").errors["start_time"] == [MSG_TIME_NEEDED]
    us = "11/29/2026 2:41 PM"
    assert _clean(start_kind="timestamp", start_time=us, end_kind="latest").errors["start_time"] == [
        NOT_ISO_8601.format(text=us)]
    assert _clean(start_kind="group", end_kind="latest").errors["start_group"] == [MSG_GROUP_NEEDED]
    assert "start_kind" in _clean(start_kind="offsets", start_offset_0="ten", end_kind="latest").errors


def test_ticked_partitions_read_like_typed_ones():
    data = _data(start_kind="earliest", end_kind="latest")
    data.setlist("partitions", ["0", "3"])
    form = ReplayForm(data)
    assert form.is_valid() and form.cleaned_data["partitions"] == [0, 3]


def test_a_links_range_shows_as_its_choice():
    initial, table = initial_from_query(QueryDict("topic=orders&partitions=1&start=offsets:1=12"))
    assert (initial["start_kind"], initial["end_kind"], table["start"]) == ("offsets", "latest", {1: "12"})
    assert initial["start"] == "offsets:1=12" and initial["partitions"] == "1"
    initial, _ = initial_from_query(QueryDict("start=timestamp:2026-11-29T02:41:00Z&end=group:x"))
    assert (initial["start_kind"], initial["start_time"], initial["end_kind"]) == (
        "timestamp", "2026-11-29T02:41:00Z", "typed")
    initial, _ = initial_from_query(QueryDict("start=reset:7"))
    assert (initial["start_kind"], initial["start_reset"]) == ("reset", "7")
    asked_again, table = initial_from_query(QueryDict("topic=b&start_kind=offsets&start_offset_2=5&end_kind=latest"))
    assert asked_again["start_kind"] == "offsets" and table["start"] == {2: "5"}
