"""The message browser's query string: where the list starts, which of the topic's partitions, the filters. Every
filter lives in the URL, so a view can be bookmarked, shared, or saved under a name."""

from __future__ import annotations

from urllib.parse import urlencode

from django import forms

from console.times import TimeTextError, parse_time_ms
from records.browse import STARTS, BrowseQuery, iso_utc

TEXT = {"autocomplete": "off", "spellcheck": "false"}
TIME_PLACEHOLDER = "2026-11-29T02:41:00Z"
DEFAULT_LIMIT = 50
ISOLATIONS = [("read_committed", "read_committed"), ("read_uncommitted", "read_uncommitted (aborted marked)")]
MSG_NO_PARTITION = "Topic '{topic}' has no partition %(value)s; it has {which}."
MSG_OFFSET_NEEDED = "Give the offset to start from."
MSG_TIME_NEEDED = f"Give the time to start from, e.g. {TIME_PLACEHOLDER}."
# The parameters a browser view is made of, in the order its links write them: nothing else reaches a saved filter.
QUERY_FIELDS = ("start", "partition", "offset", "since", "key", "value", "isolation", "limit")


def partitions_text(partitions: list[int]) -> str:
    if not partitions:
        return "none"
    return f"0 to {partitions[-1]}" if partitions == list(range(len(partitions))) else ", ".join(map(str, partitions))


class BrowseForm(forms.Form):
    start = forms.ChoiceField(required=False, choices=list(STARTS.items()), label="Show")
    partition = forms.TypedChoiceField(required=False, coerce=int, empty_value=None, label="Partition")
    offset = forms.IntegerField(required=False, min_value=0, label="Offset",
                                widget=forms.NumberInput(attrs={"placeholder": "0"}))
    since = forms.CharField(required=False, label="Time (UTC)", max_length=40, widget=forms.TextInput(
        attrs={"placeholder": TIME_PLACEHOLDER, **TEXT}))
    key = forms.CharField(required=False, label="Key contains", max_length=1000, strip=False,
                          widget=forms.TextInput(attrs={"type": "search", "data-search": "", **TEXT}))
    value = forms.CharField(required=False, label="Value contains", max_length=1000, strip=False,
                            widget=forms.TextInput(attrs={"type": "search", **TEXT}))
    isolation = forms.ChoiceField(required=False, choices=ISOLATIONS, label="Read as")
    limit = forms.IntegerField(required=False, min_value=1, max_value=500, label="Per page",
                               widget=forms.NumberInput(attrs={"placeholder": str(DEFAULT_LIMIT)}))
    after = forms.CharField(required=False, widget=forms.HiddenInput, max_length=200_000)

    def __init__(self, data=None, *, topic: str, partitions: list[int]) -> None:
        super().__init__(data)
        field = self.fields["partition"]
        field.choices = [("", "All partitions"), *((str(p), f"Partition {p}") for p in partitions)]
        # The topic's name goes into a %-formatted message: a name holding "%" must not break it.
        field.error_messages["invalid_choice"] = MSG_NO_PARTITION.format(
            topic=topic.replace("%", "%%"), which=partitions_text(partitions))

    def clean(self) -> dict:
        data = super().clean()
        start = data.get("start") or ""
        if not start:  # older links: ?partition=0&offset=10, ?since=...
            start = "offset" if data.get("offset") is not None else "time" if data.get("since") else "newest"
        data["start"] = start
        data["time_ms"] = None
        if start == "offset" and data.get("offset") is None and "offset" not in self.errors:
            self.add_error("offset", MSG_OFFSET_NEEDED)
        if start == "time":
            since = (data.get("since") or "").strip()
            if not since:
                self.add_error("since", MSG_TIME_NEEDED)
            else:
                try:
                    data["time_ms"] = parse_time_ms(since)
                except TimeTextError as exc:
                    self.add_error("since", exc.message)
        return data

    def query(self) -> BrowseQuery:
        data = self.cleaned_data
        start = data["start"]
        return BrowseQuery(start=start, partition=data.get("partition"),
                           offset=data.get("offset") if start == "offset" else None,
                           time_ms=data.get("time_ms") if start == "time" else None, key=data.get("key") or "", value=data.get("value") or "",
                           isolation=data.get("isolation") or "read_committed",
                           limit=data.get("limit") or DEFAULT_LIMIT)


def query_params(query: BrowseQuery) -> dict[str, str]:
    """The query string of a view, defaults left out: what links, saved filters and shared URLs carry."""
    params = {"start": "" if query.start == "newest" else query.start,
              "partition": "" if query.partition is None else str(query.partition),
              "offset": str(query.offset or 0) if query.start == "offset" else "",
              "since": iso_utc(query.time_ms) if query.start == "time" else "",
              "key": query.key, "value": query.value,
              "isolation": "" if query.isolation == "read_committed" else query.isolation,
              "limit": "" if query.limit == DEFAULT_LIMIT else str(query.limit)}
    return {name: params[name] for name in QUERY_FIELDS if params[name]}


def query_string(query: BrowseQuery, **extra: str) -> str:
    return urlencode({**query_params(query), **extra})
