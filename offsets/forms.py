from __future__ import annotations

import re
from datetime import UTC, datetime

from django import forms

from offsets.kinds import CONSUMER, GroupKind
from offsets.resets import form_input
from offsets.resets.form_input import InputError
from offsets.resets.planning import ALL_TOPICS
from offsets.resets.strategy_input import STRATEGIES, strategy_from

STRATEGY_LABELS = {
    "to-earliest": "to-earliest: the oldest record still in the log",
    "to-latest": "to-latest: the log end (skip what is not read yet)",
    "to-current": "to-current: keep the committed offsets (the log end where there is none)",
    "to-offset": "to-offset: one offset on every chosen partition",
    "shift-by": "shift-by: move the committed offsets by a number of records",
    "to-datetime": "to-datetime: the first record at or after a date-time",
    "by-duration": "by-duration: the first record at or after a time this long before the reset",
    "from-file": "from-file: the offsets of a CSV plan",
    "from-group": "from-group: another group's committed offsets",
}
CHOSEN_SCOPE = "chosen"
ALL_SCOPE = "all"
CSV_UPLOAD_MAX = 1024 * 1024
MSG_CSV_TOO_BIG = "The uploaded plan is over 1 MiB; split it, or reset from the shell with --from-file."
# Which inputs each strategy reads: a problem with them is shown beside the first.
STRATEGY_FIELDS = {"to-offset": ("offset",), "shift-by": ("shift",), "to-datetime": ("at", "zone", "minutes_ago"),
                   "by-duration": ("duration", "duration_unit"), "from-file": ("csv_file", "csv"),
                   "from-group": ("source_group",)}
# A link's fields that are not the form's own: the reset page's older query (scope topic/partitions, one value).
LEGACY_VALUE_FIELD = {"to-offset": "offset", "shift-by": "shift", "from-group": "source_group", "from-file": "csv"}


def strategies_for(kind: GroupKind) -> list[str]:
    """The strategies the kind's tool offers, in the shell's order (the preview refuses the others)."""
    return [name for name in STRATEGIES if name in kind.strategies]


class PatternMultipleField(forms.MultipleChoiceField):
    """Checkbox values checked against a pattern rather than a list: the planner refuses topics and partitions
    that do not exist, with Kafka's words."""

    def __init__(self, pattern: re.Pattern, *, what: str, **kwargs) -> None:
        super().__init__(required=False, **kwargs)
        self.pattern = pattern
        self.error_messages["invalid_choice"] = f"'%(value)s' is not {what}."

    def valid_value(self, value) -> bool:
        return bool(self.pattern.fullmatch(str(value)))


class ResetForm(forms.Form):
    """The reset wizard: a scope picked from the group's topics and partitions, and a strategy with inputs that fit
    it. `value` is the strategy's argument as the shell takes it: the preview's execute form and old links carry
    it; a strategy's own inputs win over it."""

    scope = forms.ChoiceField(label="Reset", initial=ALL_SCOPE)
    topic = PatternMultipleField(form_input.TOPIC_NAME, what="a topic name")
    partition = PatternMultipleField(re.compile(form_input.TOPIC_NAME.pattern + r":\d{1,10}"),
                                     what="a topic:partition choice")
    other_topics = forms.CharField(required=False, label="Other topics",
                                   help_text="as --topic takes them, space apart: orders or orders:0,2",
                                   widget=forms.TextInput(attrs={"spellcheck": "false", "autocomplete": "off"}))
    strategy = forms.ChoiceField(label="Strategy")
    at = forms.CharField(required=False, label="Date and time",
                         widget=forms.TextInput(attrs={"type": "datetime-local", "step": "1"}))
    zone = forms.CharField(required=False, initial="UTC", label="Time zone", help_text="IANA name, e.g. Europe/Oslo",
                           widget=forms.TextInput(attrs={"list": "time-zones", "autocomplete": "off",
                                                         "spellcheck": "false"}))
    minutes_ago = forms.IntegerField(required=False, min_value=0, label="or minutes ago",
                                     help_text="fixed to a UTC time when previewed")
    duration = forms.IntegerField(required=False, min_value=0, label="How long ago")
    duration_unit = forms.ChoiceField(required=False, label="Unit", initial="hours",
                                      choices=[(u, u) for u in form_input.DURATION_UNITS])
    offset = forms.IntegerField(required=False, label="Offset")
    shift = forms.IntegerField(required=False, label="Shift by", help_text="negative re-reads, positive skips")
    source_group = forms.CharField(required=False, label="Copy from group", strip=False,
                                   widget=forms.TextInput(attrs={"list": "source-groups", "autocomplete": "off",
                                                                 "spellcheck": "false"}))
    csv_file = forms.FileField(required=False, label="CSV file", help_text="topic,partition,offset lines, "
                                                                            "as an export or --export writes them")
    csv = forms.CharField(required=False, label="or paste the CSV", strip=False,
                          widget=forms.Textarea(attrs={"rows": 3, "placeholder": "topic,partition,offset",
                                                       "spellcheck": "false"}))
    value = forms.CharField(required=False, strip=False, widget=forms.HiddenInput)

    def __init__(self, *args, kind: GroupKind = CONSUMER, now: datetime | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.now = now or datetime.now(UTC)
        # Every topic the group has offsets for by default, as --all-topics: nothing to tick for the usual reset.
        self.fields["scope"].choices = [(ALL_SCOPE, f"{kind.all_topics_label} (--all-topics)"),
                                        (CHOSEN_SCOPE, "the topics and partitions ticked below")]
        self.fields["strategy"].choices = [(name, STRATEGY_LABELS[name]) for name in strategies_for(kind)]
        self.fields["strategy"].initial = "to-datetime" if "to-datetime" in strategies_for(kind) else None

    def clean(self):
        data = super().clean()
        strategy = data.get("strategy")
        if not strategy:
            return data
        try:
            data["value_text"] = self._value_text(strategy, data)
        except InputError as exc:
            self.add_error(STRATEGY_FIELDS.get(strategy, ("strategy",))[0], exc.message)
        if strategy == "from-file" or not data.get("scope"):
            return data  # Kafka takes from-file's partitions from the file and ignores the scope
        ticked = data.get("topic") or data.get("partition") or (data.get("other_topics") or "").strip()
        if data["scope"] == ALL_SCOPE:
            if ticked:
                self.add_error("scope", form_input.MSG_ALL_AND_CHOSEN)
            return data
        try:
            data["scope_list"] = form_input.scope_from_choices(data.get("topic") or (), data.get("partition") or (),
                                                               data.get("other_topics") or "")
        except InputError as exc:
            self.add_error("scope", exc.message)
        return data

    def _value_text(self, strategy: str, data: dict) -> str | None:
        carried = data.get("value") or None
        match strategy:
            case "to-offset" | "shift-by":
                field = "offset" if strategy == "to-offset" else "shift"
                if data.get(field) is not None:
                    return str(data[field])
                if carried is None:
                    raise InputError(form_input.MSG_NEEDS_OFFSET if field == "offset" else form_input.MSG_NEEDS_SHIFT)
                return carried
            case "to-datetime":
                at, ago = (data.get("at") or "").strip(), data.get("minutes_ago")
                if at and ago is not None:
                    raise InputError(form_input.MSG_TIME_OR_AGO)
                if at:
                    return form_input.datetime_value(at, data.get("zone") or "UTC")
                if ago is not None:
                    return form_input.minutes_ago_value(ago, self.now)
                return self._carried_or(carried, form_input.MSG_NEEDS_TIME)
            case "by-duration":
                if data.get("duration") is not None:
                    return form_input.duration_value(data["duration"], data.get("duration_unit") or "hours")
                return self._carried_or(carried, form_input.MSG_NEEDS_DURATION)
            case "from-file":
                upload = data.get("csv_file")
                if upload and upload.size > CSV_UPLOAD_MAX:
                    raise InputError(MSG_CSV_TOO_BIG)
                if upload:
                    return form_input.csv_from_upload(upload.read())
                if (data.get("csv") or "").strip():
                    return data["csv"]
                return self._carried_or(carried, form_input.MSG_NEEDS_CSV)
            case "from-group":
                if (data.get("source_group") or "").strip():
                    return data["source_group"]
                return self._carried_or(carried, form_input.MSG_NEEDS_GROUP)
        return None

    @staticmethod
    def _carried_or(carried: str | None, message: str) -> str:
        if carried is None:
            raise InputError(message)
        return carried

    def scope_value(self):
        data = self.cleaned_data
        if data["strategy"] == "from-file":
            return []
        return ALL_TOPICS if data["scope"] == ALL_SCOPE else data["scope_list"]

    def strategy_value(self, cluster: str):
        return strategy_from(cluster, self.cleaned_data["strategy"], self.cleaned_data.get("value_text"))

    def carried(self) -> list[tuple[str, str]]:
        """The previewed reset as (name, value) pairs, with "minutes ago" and an uploaded file already resolved:
        what the execute form and the export link send, so they act on exactly what was previewed."""
        data = self.cleaned_data
        pairs = [("scope", data["scope"])]
        pairs += [("topic", t) for t in data.get("topic") or ()]
        pairs += [("partition", p) for p in data.get("partition") or ()]
        if data.get("other_topics"):
            pairs.append(("other_topics", data["other_topics"]))
        pairs.append(("strategy", data["strategy"]))
        if data.get("value_text") is not None:
            pairs.append(("value", data["value_text"]))
        return pairs


def initial_from_link(query) -> dict:
    """A reset link's query (lag chart, message browser) as the form's initial values. Links made before the
    wizard (scope=topic or scope=partitions with topic, partitions and one value) still land on the same reset."""
    initial = {name: query[name] for name in ResetForm.base_fields
               if name in query and name not in ("topic", "partition", "csv_file", "value")}
    initial["topic"], initial["partition"] = query.getlist("topic"), query.getlist("partition")
    if query.get("scope") in ("topic", "partitions"):
        topic = query.get("topic", "")
        if query["scope"] == "partitions":
            numbers = [p for p in query.get("partitions", "").replace(" ", "").split(",") if p]
            initial["topic"], initial["partition"] = [], [f"{topic}:{p}" for p in numbers]
        initial["scope"] = CHOSEN_SCOPE
    if "scope" not in initial and (initial["topic"] or initial["partition"] or initial.get("other_topics")):
        initial["scope"] = CHOSEN_SCOPE  # a link that names topics means them, not the default of all topics
    field = LEGACY_VALUE_FIELD.get(query.get("strategy", ""))
    if field and "value" in query and field not in query:
        initial[field] = query["value"]
    return initial


class ExecuteForm(forms.Form):
    fingerprint = forms.CharField()
    reason = forms.CharField(max_length=1000)
    confirm = forms.CharField(label="Type the group name to confirm")
