from __future__ import annotations

import json

from django import forms

from console.errors import ConsoleError
from console.forms import PartitionsText, PartitionTicks
from gateway.kafka.records_io.filters import check_filter
from gateway.kafka.errors import InvalidRequest
from gateway.kafka.types import ScanFilter
from records.import_parse import kind_of_file
from records.search import SearchSpec, parse_bound, parse_fields, parse_partitions, parse_time_ms

TEXT = {"autocomplete": "off", "spellcheck": "false"}
TIME_PLACEHOLDER = "2026-11-29T02:41:00Z"
TIME = {"placeholder": TIME_PLACEHOLDER, **TEXT}


class SearchForm(forms.Form):
    """The common filters (key, value, a time range) first; the rest shows under "More filters" on the page."""

    key = forms.CharField(required=False, label="Key contains", widget=forms.TextInput(
        {"type": "search", "data-search": "", **TEXT}))
    value = forms.CharField(required=False, label="Value contains", widget=forms.TextInput({"type": "search", **TEXT}))
    since = forms.CharField(required=False, label="Time from (UTC)", help_text="records before it are skipped",
                            widget=forms.TextInput(TIME))
    until = forms.CharField(required=False, label="Time to (UTC)", help_text="records after it are skipped",
                            widget=forms.TextInput(TIME))
    partitions = forms.CharField(required=False, help_text="none ticked: all", widget=PartitionsText(TEXT))
    start = forms.CharField(required=False, initial="earliest", label="From",
                            help_text="earliest, an offset, or a time (2026-11-21T03:00:00Z)")
    end = forms.CharField(required=False, initial="latest", label="To", help_text="latest, an offset, or a time")
    order = forms.ChoiceField(required=False, choices=[("oldest", "oldest first"), ("newest", "newest first")],
                              initial="oldest")
    isolation = forms.ChoiceField(required=False, initial="read_committed", label="Read as",
                                  choices=[("read_committed", "read_committed"), ("read_uncommitted", "read_uncommitted")])
    key_regex = forms.CharField(required=False, label="Key matches (regex)", widget=forms.TextInput(TEXT))
    value_regex = forms.CharField(required=False, label="Value matches (regex)", widget=forms.TextInput(TEXT))
    fields = forms.CharField(required=False, label="Field equals",
                             help_text="path=value a line, on the decoded value (customer.country=NO)",
                             widget=forms.Textarea(attrs={"rows": 2, **TEXT}))
    jsonpath = forms.CharField(required=False, label="JSONPath", widget=forms.TextInput(TEXT),
                               help_text="finds at least one node, e.g. $.items[?@.sku == 'A-1'] or $[?@.amount > 100]")
    header = forms.CharField(required=False, label="Header name", widget=forms.TextInput(TEXT))
    header_value = forms.CharField(required=False, label="Header contains", widget=forms.TextInput(TEXT))
    max_records = forms.IntegerField(required=False, min_value=1, initial=5_000_000, label="Budget: records")
    max_seconds = forms.IntegerField(required=False, min_value=1, max_value=3600, initial=60, label="Budget: seconds")
    max_matches = forms.IntegerField(required=False, min_value=1, max_value=10_000, initial=500, label="Show at most")

    # Shown under "More filters", which opens by itself when one of them is set (a shared link shows all it does).
    MORE = ("partitions", "start", "end", "order", "isolation", "key_regex", "value_regex", "fields", "jsonpath",
            "header", "header_value", "max_records", "max_seconds", "max_matches")

    def __init__(self, data=None, *, partitions: list[int] | None = None, **kwargs) -> None:
        super().__init__(data, **kwargs)
        if partitions is not None:
            field = self.fields["partitions"]
            field.widget = PartitionTicks(choices=[(str(p), str(p)) for p in partitions])
            field.label = "Partitions"

    @property
    def common_fields(self) -> list:
        return [self[name] for name in self.fields if name not in self.MORE]

    @property
    def more_fields(self) -> list:
        return [self[name] for name in self.MORE if name in self.fields]

    @property
    def more_in_use(self) -> bool:
        """Whether a "more" filter differs from its default (the page then opens them)."""
        if not self.is_bound:
            return False
        return any((self.data.get(name) or "") not in ("", str(self.fields[name].initial or ""))
                   for name in self.MORE if name in self.fields)

    def spec(self, topic: str) -> SearchSpec:
        """The search this form asks for; ConsoleError (the person's words, at the field) for what does not parse."""
        data = self.cleaned_data
        scan_filter = ScanFilter(
            key_contains=data["key"], key_regex=data["key_regex"], value_contains=data["value"],
            value_regex=data["value_regex"], value_fields=_at("fields", parse_fields, data["fields"].splitlines()),
            value_jsonpath=data["jsonpath"].strip(), header_name=data["header"], header_contains=data["header_value"],
            ts_from_ms=_time("since", data["since"]), ts_to_ms=_time("until", data["until"]))
        try:
            check_filter(scan_filter)  # a regex or JSONPath that does not compile is refused before any read
        except InvalidRequest as exc:
            raise ConsoleError(exc.message) from exc
        return SearchSpec(
            topic=topic, partitions=_at("partitions", parse_partitions, data["partitions"]),
            start=_at("start", parse_bound, data["start"], "earliest"),
            end=_at("end", parse_bound, data["end"], "latest"),
            filter=scan_filter, newest_first=data["order"] == "newest", isolation=data["isolation"] or "read_committed",
            max_records=data["max_records"] or 5_000_000, max_seconds=float(data["max_seconds"] or 60),
            max_matches=data["max_matches"] or 500)


MSG_NOT_A_TIME = "'{text}' is not a time: write it as ISO 8601, e.g. " + TIME_PLACEHOLDER + " (no zone means UTC)."


def _at(field: str, parse, *args):
    """parse(*args), its ConsoleError placed at `field`."""
    try:
        return parse(*args)
    except ConsoleError as exc:
        raise ConsoleError(exc.message, field=field) from exc


def _time(field: str, text: str) -> int | None:
    return _at(field, parse_time_ms, text, MSG_NOT_A_TIME.format(text=text)) if text.strip() else None


class RowsInput(forms.Widget):
    """Inputs repeated once a row (headers): the field's value is the list of what each row holds."""

    def value_from_datadict(self, data, files, name) -> list[str]:
        return data.getlist(name) if hasattr(data, "getlist") else list(data.get(name) or [])


MSG_NOT_JSON = ("Not valid JSON: {error} (line {line}, column {column}). Choose Text to send it as it is.")
MSG_HEADER_NAME = "Header {number} has a value but no name."


class ProduceForm(forms.Form):
    """One record: a key, a value in an editor sized for JSON (checked as typed in the page, and here when it is
    JSON), headers as rows, the partition from the topic's list, the schema subjects from the registry's."""

    key = forms.CharField(required=False, strip=False, widget=forms.TextInput({"placeholder": "order-42", **TEXT}))
    key_null = forms.BooleanField(required=False, label="Null key")
    key_subject = forms.CharField(required=False, label="Encode the key with",
                                  help_text="a registry subject (the key as JSON); none: as text")
    partition = forms.TypedChoiceField(required=False, coerce=int, empty_value=None, label="Partition")
    value_format = forms.ChoiceField(required=False, label="Value is", initial="json",
                                     choices=[("json", "JSON"), ("text", "Text")])
    value = forms.CharField(required=False, strip=False, widget=forms.Textarea(
        {"rows": 14, "class": "json-editor", "data-json-check": "", **TEXT}))
    value_null = forms.BooleanField(required=False, label="Null value (tombstone)")
    value_subject = forms.CharField(required=False, label="Encode the value with",
                                    help_text="a registry subject (the value as JSON); none: as it is")
    value_version = forms.IntegerField(required=False, min_value=1, label="Subject version",
                                       help_text="empty: the latest")
    header_name = forms.Field(required=False, widget=RowsInput, label="Header")
    header_value = forms.Field(required=False, widget=RowsInput, label="Value")
    # name=value a line: what the page sent before headers were rows, still read for scripts that post it.
    headers = forms.CharField(required=False, widget=forms.HiddenInput)
    reason = forms.CharField(max_length=1000, widget=forms.TextInput(attrs={"placeholder": "why (goes into the audit log)"}))

    def __init__(self, data=None, *, partitions: list[int] | None = None, **kwargs) -> None:
        super().__init__(data, **kwargs)
        known = partitions if partitions is not None else []
        self.fields["partition"].choices = [("", "by the key's hash"), *((str(p), str(p)) for p in known)]
        if partitions is None:  # the topic was not described: any number, the service checks it
            self.fields["partition"] = forms.IntegerField(required=False, min_value=0, label="Partition")

    @property
    def header_rows(self) -> list[tuple[str, str]]:
        """The rows to show: what was posted, or one empty row."""
        if self.is_bound:
            names, values = self.data.getlist("header_name"), self.data.getlist("header_value")
            rows = [(n, v) for n, v in zip(names, values, strict=False) if n or v]
            if rows:
                return rows
        return [("", "")]

    def clean_headers(self) -> list[tuple[str, str]]:
        pairs = []
        for line in self.cleaned_data["headers"].splitlines():
            if not line.strip():
                continue
            name, sep, value = line.partition("=")
            if not sep or not name.strip():
                raise forms.ValidationError(f"'{line}' is not a header: write name=value.")
            pairs.append((name.strip(), value))
        return pairs

    def clean(self) -> dict:
        data = super().clean()
        names, values = data.get("header_name") or [], data.get("header_value") or []
        rows = []
        for number, (name, value) in enumerate(zip(names, values, strict=False), start=1):
            if not name.strip() and not value:
                continue
            if not name.strip():
                self.add_error("header_name", MSG_HEADER_NAME.format(number=number))
                continue
            rows.append((name.strip(), value))
        data["headers"] = rows + (data.get("headers") or [])
        value = data.get("value") or ""
        # Checked here too when the value is meant as JSON: a subject encodes JSON, and "JSON" was chosen.
        if not data.get("value_null") and (data.get("value_format") == "json" or data.get("value_subject")):
            try:
                json.loads(value)
            except ValueError as exc:
                line, column = getattr(exc, "lineno", 1), getattr(exc, "colno", 1)
                self.add_error("value", MSG_NOT_JSON.format(error=getattr(exc, "msg", str(exc)), line=line,
                                                            column=column))
        return data


class PositionForm(forms.Form):
    partition = forms.IntegerField(min_value=0)
    offset = forms.IntegerField(min_value=0)


class CopyForm(forms.Form):
    partition = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    offset = forms.IntegerField(min_value=0, widget=forms.HiddenInput)
    target_topic = forms.CharField(label="To topic")
    target_cluster = forms.CharField(required=False, label="On cluster", help_text="empty: this cluster")
    target_partition = forms.IntegerField(required=False, min_value=0, label="Partition",
                                          help_text="empty: by the key's hash")
    reason = forms.CharField(max_length=1000, widget=forms.TextInput(attrs={"placeholder": "why (goes into the audit log)"}))


class ExportForm(SearchForm):
    """The search's own fields (so an export link carries the search's query string) and the file's format;
    the match limit becomes the export's record limit."""

    max_matches = forms.IntegerField(required=False, min_value=1, initial=100_000, label="Records at most")
    format = forms.ChoiceField(required=False, initial="jsonl",
                               choices=[("jsonl", "JSON lines"), ("csv", "CSV"), ("avro", "Avro container file")])


class ImportForm(forms.Form):
    file = forms.FileField(help_text="JSON lines (an object a line), CSV with a header row, or Avro: value, and any "
                                     "of key, headers, partition, timestamp; an export's file as it is")
    format = forms.ChoiceField(required=False, choices=[("", "by the file's name"), ("jsonl", "JSON lines"),
                                                        ("csv", "CSV"), ("avro", "Avro")])
    key_subject = forms.CharField(required=False, label="Key subject", help_text="encode keys (JSON) with it")
    value_subject = forms.CharField(required=False, label="Value subject", help_text="encode values (JSON) with it")
    rate = forms.IntegerField(min_value=1, initial=1000, label="Records per second at most")
    skip_bad = forms.BooleanField(required=False, label="Skip bad lines",
                                  help_text="write the good lines after a bad one (all bad lines are reported)")
    repartition = forms.BooleanField(required=False, label="Partition by key",
                                     help_text="leave the file's partitions aside: the key's hash chooses")
    new_timestamps = forms.BooleanField(required=False, label="New timestamps",
                                        help_text="leave the file's timestamps aside: the time of writing")
    reason = forms.CharField(max_length=1000, required=False,
                             widget=forms.TextInput(attrs={"placeholder": "why (goes into the audit log)"}))

    def kind(self) -> str:
        chosen = self.cleaned_data.get("format")
        if chosen:
            return chosen
        return kind_of_file(self.cleaned_data["file"].name)
