from __future__ import annotations

import re

from django import forms

from console.errors import ConsoleError
from console.forms import PartitionsText, PartitionTicks, joined_values
from sparkjobs import bounds
from sparkjobs.models import ReplayJob

SINK_GUARANTEES = ("Files: exactly once per job (a job writes its own new folder). Topic: exactly once for "
                   "read_committed readers (each Spark task writes in a transaction; a retried task fences the "
                   "attempt before it), at least once for read_uncommitted readers, who also see aborted attempts.")
TIME_PLACEHOLDER = "2026-11-29T02:41:00Z"
TEXT = {"autocomplete": "off", "spellcheck": "false"}
START_KINDS = [("earliest", "The log start"), ("offsets", "Offsets per partition (the table)"),
               ("timestamp", "A time"), ("group", "A group's committed offsets"),
               ("reset", "The records an audited reset skipped"), ("typed", "Typed, as in the shell")]
END_KINDS = [("latest", "The log end at submit"), ("offsets", "Offsets per partition (the table)"),
             ("timestamp", "A time"), ("typed", "Typed, as in the shell")]
MSG_OFFSETS_NEEDED = "Give the {which} offset of at least one partition in the table."
MSG_OFFSET_NOT_A_NUMBER = "Partition {partition}'s {which} offset is not a number."
MSG_TIME_NEEDED = f"Give the time, e.g. {TIME_PLACEHOLDER}."
MSG_GROUP_NEEDED = "Choose the group whose committed offsets the replay starts from."
MSG_RESET_NEEDED = "Choose the audited reset whose skipped records to replay."
_OFFSET_FIELD = re.compile(r"(start|end)_offset_(\d{1,9})", re.ASCII)


class ReplayForm(forms.Form):
    """The start and end as choices (offsets per partition in a table, a time, a group's commits, an audited
    reset); the typed syntax of the shell (`offsets:0=100,1=250`, `timestamp:...`, `group:NAME`, `reset:ID`) is
    one of them, and what a post naming only `start` and `end` is read as. Either way the service gets the typed
    syntax, and parses it."""

    topic = forms.CharField(widget=forms.TextInput({"list": "replay-topics", **TEXT}))
    partitions = forms.CharField(required=False, help_text="none ticked: all", widget=PartitionsText(
        {"placeholder": "e.g. 0,3 (empty: all)", **TEXT}))
    start_kind = forms.ChoiceField(required=False, choices=START_KINDS, initial="earliest", label="Start",
                                   widget=forms.RadioSelect)
    start_time = forms.CharField(required=False, label="Start time (UTC)", max_length=40,
                                 widget=forms.TextInput({"placeholder": TIME_PLACEHOLDER, **TEXT}))
    start_group = forms.CharField(required=False, label="Group", widget=forms.TextInput(
        {"list": "replay-groups", **TEXT}))
    start_reset = forms.CharField(required=False, label="Audited reset")
    start = forms.CharField(required=False, initial="earliest", label="Start, typed",
                            help_text="earliest · offsets:0=100,1=250 · timestamp:2026-11-21T03:00:00Z · "
                                      "group:GROUP · reset:AUDIT_ID", widget=forms.TextInput(TEXT))
    end_kind = forms.ChoiceField(required=False, choices=END_KINDS, initial="latest", label="End",
                                 widget=forms.RadioSelect)
    end_time = forms.CharField(required=False, label="End time (UTC)", max_length=40,
                               widget=forms.TextInput({"placeholder": TIME_PLACEHOLDER, **TEXT}))
    end = forms.CharField(required=False, initial="latest", label="End, typed",
                          help_text="latest · offsets:0=200 · timestamp:2026-11-21T04:00:00Z",
                          widget=forms.TextInput(TEXT))
    filter_expr = forms.CharField(required=False, label="Filter (Spark SQL)",
                                  help_text="e.g. value LIKE '%refund%' AND partition = 0 (key and value as text)")
    isolation = forms.ChoiceField(
        choices=ReplayJob.Isolation.choices, initial=ReplayJob.Isolation.READ_COMMITTED,
        help_text="read_uncommitted also replays records of aborted transactions, which no correct consumer ever "
                  "saw: use it only to investigate, never into a topic others read.")
    sink = forms.ChoiceField(choices=ReplayJob.Sink.choices, help_text=SINK_GUARANTEES)
    output_uri = forms.CharField(required=False, label="Output location", max_length=400,
                                 help_text="Files: empty for this server's replay folder, or s3a://BUCKET/PREFIX "
                                           "(needed on a Spark cluster: each executor writes its own files)")
    sink_topic = forms.CharField(required=False, label="Sink topic", widget=forms.TextInput(
        {"list": "replay-topics", **TEXT}))
    sink_cluster = forms.CharField(required=False, label="Sink cluster", help_text="empty: the same cluster")
    keep_partitions = forms.BooleanField(required=False, label="Keep partition numbers")
    reason = forms.CharField(max_length=1000)

    def __init__(self, *args, partitions: list[int] | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if partitions:
            field = self.fields["partitions"]
            field.widget = PartitionTicks(choices=[(str(p), str(p)) for p in partitions])

    def clean_partitions(self) -> list[int] | None:
        raw = self.cleaned_data["partitions"].replace(" ", "")
        try:
            return [int(p) for p in raw.split(",") if p] or None
        except ValueError as exc:
            raise forms.ValidationError("Partitions are numbers separated by commas.") from exc

    def table_offsets(self, which: str) -> dict[int, str]:
        """The table's `which` ("start"/"end") offsets as typed, by partition (empty cells left out)."""
        found = {}
        for name in self.data:
            matched = _OFFSET_FIELD.fullmatch(name)
            if matched and matched.group(1) == which and str(self.data.get(name, "")).strip():
                found[int(matched.group(2))] = str(self.data[name]).strip()
        return found

    def clean(self) -> dict:
        data = super().clean()
        data["start"] = self._bound("start", data.get("start_kind") or "typed", data)
        data["end"] = self._bound("end", data.get("end_kind") or "typed", data)
        for which, parse in (("start", bounds.parse_start), ("end", bounds.parse_end)):
            if data[which] is None or which in self.errors:
                continue
            try:
                parse(data[which])  # the shell's grammar: refused here, at its field, before anything is read
            except ConsoleError as exc:
                self.add_error(which if data.get(f"{which}_kind") in ("", None, "typed") else f"{which}_kind",
                               exc.message)
        return data

    def _bound(self, which: str, kind: str, data: dict) -> str | None:
        """The typed syntax of what the choice says, or None after an error at the field that lacks something."""
        if kind in ("earliest", "latest"):
            return kind
        if kind == "offsets":
            pairs = []
            for partition, text in sorted(self.table_offsets(which).items()):
                if not text.lstrip("-").isdigit():
                    self.add_error(f"{which}_kind", MSG_OFFSET_NOT_A_NUMBER.format(partition=partition, which=which))
                    return None
                pairs.append(f"{partition}={int(text)}")
            if not pairs:
                self.add_error(f"{which}_kind", MSG_OFFSETS_NEEDED.format(which=which))
                return None
            return "offsets:" + ",".join(pairs)
        if kind == "timestamp":
            text = (data.get(f"{which}_time") or "").strip()
            if not text:
                self.add_error(f"{which}_time", MSG_TIME_NEEDED)
                return None
            try:
                bounds.parse_time(text)
            except ConsoleError as exc:
                self.add_error(f"{which}_time", exc.message)
                return None
            return f"timestamp:{text}"
        if kind == "group":
            group = (data.get("start_group") or "").strip()
            if not group:
                self.add_error("start_group", MSG_GROUP_NEEDED)
                return None
            return f"group:{group}"
        if kind == "reset":
            seq = (data.get("start_reset") or "").strip()
            if not seq.isdigit():
                self.add_error("start_reset", MSG_RESET_NEEDED)
                return None
            return f"reset:{seq}"
        text = (data.get(which) or "").strip()
        if not text:
            self.add_error(which, f"Give the {which}, e.g. {'earliest' if which == 'start' else 'latest'}.")
            return None
        return text


def initial_from_query(params) -> tuple[dict, dict[str, dict[int, str]]]:
    """The form's first values from a link (topic, partitions, start and end in the typed syntax, sink), each
    bound shown as the choice it is; or, when the form itself asks again (another topic chosen), its choices as
    they were. And the offsets the table starts with, by partition."""
    initial = {name: params.get(name, "") for name in ("topic", "partitions", "sink", "sink_topic", "sink_cluster",
                                                       "filter_expr", "isolation", "output_uri", "reason")}
    initial = {name: value for name, value in initial.items() if value}
    initial["topic"] = params.get("topic", "")
    initial["partitions"] = joined_values(params, "partitions")
    table: dict[str, dict[int, str]] = {"start": {}, "end": {}}
    if params.get("start_kind") or params.get("end_kind"):
        for name in ("start_kind", "start_time", "start_group", "start_reset", "start", "end_kind", "end_time",
                     "end"):
            if params.get(name):
                initial[name] = params.get(name)
        for name in params:
            matched = _OFFSET_FIELD.fullmatch(name)
            if matched and str(params.get(name, "")).strip():
                table[matched.group(1)][int(matched.group(2))] = str(params.get(name)).strip()
        return initial, table
    for which, default, parse in (("start", "earliest", bounds.parse_start), ("end", "latest", bounds.parse_end)):
        text = params.get(which, "") or default
        initial[which] = text
        try:
            bound = parse(text)
        except ConsoleError:
            initial[f"{which}_kind"] = "typed"
            continue
        if isinstance(bound, bounds.Offsets):
            initial[f"{which}_kind"] = "offsets"
            table[which] = {p: str(o) for p, o in bound.offsets.items()}
        elif isinstance(bound, bounds.AtTime):
            initial[f"{which}_kind"], initial[f"{which}_time"] = "timestamp", text.partition(":")[2]
        elif isinstance(bound, bounds.GroupCommitted):
            initial["start_kind"], initial["start_group"] = "group", bound.group
        elif isinstance(bound, bounds.SkippedByReset):
            initial["start_kind"], initial["start_reset"] = "reset", str(bound.seq)
        else:
            initial[f"{which}_kind"] = default
    return initial, table

