"""The reset wizard's form on its own (no broker): inputs per strategy, scope, what execute carries, old links."""

from datetime import UTC, datetime

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import QueryDict

from offsets.forms import CSV_UPLOAD_MAX, MSG_CSV_TOO_BIG, ResetForm, initial_from_link, strategies_for
from offsets.kinds import CONSUMER, SHARE, STREAMS
from offsets.resets.form_input import MSG_ALL_AND_CHOSEN, MSG_NEEDS_TIME, MSG_NOTHING_CHOSEN, MSG_TIME_OR_AGO
from offsets.resets.planning import ALL_TOPICS, ByDuration, FromFile, ShiftBy, ToDatetime, ToOffset, TopicScope

NOW = datetime(2026, 1, 31, 3, 0, tzinfo=UTC)


def _form(data, files=None, kind=CONSUMER):
    return ResetForm(_query(data), files, kind=kind, now=NOW)


def _query(data: dict) -> QueryDict:
    query = QueryDict(mutable=True)
    for key, value in data.items():
        query.setlist(key, value if isinstance(value, list) else [value])
    return query


def test_each_kind_is_offered_only_its_tools_strategies():
    assert strategies_for(SHARE) == ["to-earliest", "to-latest", "to-datetime"]
    assert "from-group" not in strategies_for(STREAMS) and len(strategies_for(STREAMS)) == 8
    assert len(strategies_for(CONSUMER)) == 9
    refused = _form({"scope": "all", "strategy": "to-offset", "offset": "3"}, kind=SHARE)
    assert not refused.is_valid() and "strategy" in refused.errors


@pytest.mark.parametrize(("fields", "strategy"), [
    ({"strategy": "to-datetime", "at": "2026-01-31T08:00", "zone": "Europe/Oslo"},
     ToDatetime("2026-01-31T08:00:00.000+01:00")),
    ({"strategy": "to-datetime", "minutes_ago": "30", "zone": "Asia/Tokyo"}, ToDatetime("2026-01-31T02:30:00.000Z")),
    ({"strategy": "by-duration", "duration": "2", "duration_unit": "hours"}, ByDuration("PT2H")),
    ({"strategy": "to-offset", "offset": "42"}, ToOffset(42)),
    ({"strategy": "shift-by", "shift": "-4"}, ShiftBy(-4)),
    ({"strategy": "from-file", "csv": "t,0,5\n"}, FromFile("t,0,5\n")),
    ({"strategy": "to-offset", "value": "7"}, ToOffset(7)),  # what the execute form carries
    ({"strategy": "to-offset", "offset": "8", "value": "7"}, ToOffset(8)),  # the input wins over a carried value
])
def test_strategy_inputs_become_the_shells_values(fields, strategy):
    form = _form({"scope": "all", **fields})
    assert form.is_valid(), form.errors
    assert form.strategy_value("local") == strategy
    assert form.scope_value() == ([] if isinstance(strategy, FromFile) else ALL_TOPICS)  # a file names its own


def test_an_uploaded_plan_wins_and_is_carried_as_text():
    upload = SimpleUploadedFile("plan.csv", b"\xef\xbb\xbft,1,9\n", content_type="text/csv")
    form = _form({"scope": "chosen", "strategy": "from-file", "csv": "ignored,0,0"}, {"csv_file": upload})
    assert form.is_valid(), form.errors
    assert form.strategy_value("local") == FromFile("t,1,9\n") and form.scope_value() == []
    assert ("value", "t,1,9\n") in form.carried()


def test_an_oversized_upload_is_refused():
    upload = SimpleUploadedFile("plan.csv", b"t,0,1\n" * (CSV_UPLOAD_MAX // 6 + 1))
    form = _form({"scope": "all", "strategy": "from-file"}, {"csv_file": upload})
    assert not form.is_valid() and form.errors["csv_file"] == [MSG_CSV_TOO_BIG]


@pytest.mark.parametrize(("fields", "field", "message"), [
    ({"strategy": "to-datetime"}, "at", MSG_NEEDS_TIME),
    ({"strategy": "to-datetime", "at": "2026-01-31T08:00", "minutes_ago": "5"}, "at", MSG_TIME_OR_AGO),
    ({"strategy": "to-earliest", "scope": "chosen"}, "scope", MSG_NOTHING_CHOSEN),
    ({"strategy": "to-earliest", "scope": "all", "partition": ["t:0"]}, "scope", MSG_ALL_AND_CHOSEN),
    ({"strategy": "to-earliest", "scope": "chosen", "topic": ["bad topic"]}, "topic",
     "'bad topic' is not a topic name."),
])
def test_bad_input_is_named_beside_its_field(fields, field, message):
    form = _form({"scope": "all", **fields})
    assert not form.is_valid() and message in form.errors[field]


def test_minutes_ago_is_carried_as_the_previewed_time_with_the_scope():
    form = _form({"scope": "chosen", "topic": ["orders"], "partition": ["pay:2", "pay:0"], "other_topics": "x:1",
                  "strategy": "to-datetime", "minutes_ago": "60"})
    assert form.is_valid(), form.errors
    assert form.scope_value() == [TopicScope("orders"), TopicScope("pay", (0, 2)), TopicScope("x", (1,))]
    carried = form.carried()
    assert carried == [("scope", "chosen"), ("topic", "orders"), ("partition", "pay:2"), ("partition", "pay:0"),
                       ("other_topics", "x:1"), ("strategy", "to-datetime"), ("value", "2026-01-31T02:00:00.000Z")]
    later = ResetForm(_query({k: [v for n, v in carried if n == k] for k, _ in carried}), kind=CONSUMER,
                      now=datetime(2026, 2, 1, tzinfo=UTC))
    assert later.is_valid() and later.strategy_value("local") == ToDatetime("2026-01-31T02:00:00.000Z")


def test_links_prefill_the_wizard_and_old_links_still_land_on_the_same_reset():
    lag_chart = QueryDict("scope=chosen&topic=orders&strategy=to-datetime&at=2026-01-31T02:00:00&zone=UTC")
    assert initial_from_link(lag_chart) == {"scope": "chosen", "topic": ["orders"], "partition": [],
                                            "strategy": "to-datetime", "at": "2026-01-31T02:00:00", "zone": "UTC"}
    old = QueryDict("scope=partitions&topic=pay&partitions=1,3&strategy=to-offset&value=4")
    assert initial_from_link(old) == {"scope": "chosen", "topic": [], "partition": ["pay:1", "pay:3"],
                                      "strategy": "to-offset", "offset": "4"}
    whole = QueryDict("scope=topic&topic=pay&strategy=shift-by&value=-2")
    assert initial_from_link(whole) == {"scope": "chosen", "topic": ["pay"], "partition": [], "strategy": "shift-by",
                                        "shift": "-2"}
