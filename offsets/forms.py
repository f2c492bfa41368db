from __future__ import annotations

from django import forms

from console.errors import ConsoleError
from offsets.resets.planning import ALL_TOPICS, TopicScope
from offsets.resets.strategy_input import STRATEGIES, strategy_from


class ResetForm(forms.Form):
    scope = forms.ChoiceField(choices=[("all", "all topics with commits"), ("topic", "one topic"),
                                       ("partitions", "chosen partitions of a topic")], initial="all")
    topic = forms.CharField(required=False)
    partitions = forms.CharField(required=False, help_text="e.g. 0,2,5")
    strategy = forms.ChoiceField(choices=[(s, s) for s in STRATEGIES], initial="to-earliest")
    value = forms.CharField(required=False, help_text="offset, shift, date (2026-01-31T08:00:00.000 or …+01:00), "
                                                      "duration (PT2H) or group id, per strategy")
    csv = forms.CharField(required=False, label="CSV plan (from-file)",
                          widget=forms.Textarea(attrs={"rows": 3, "placeholder": "topic,partition,offset"}))

    def clean(self):
        data = super().clean()
        if data.get("scope") in ("topic", "partitions") and not data.get("topic"):
            raise forms.ValidationError("Name the topic.")
        if data.get("scope") == "partitions" and not data.get("partitions"):
            raise forms.ValidationError("List the partitions.")
        return data

    def scope_value(self):
        data = self.cleaned_data
        if data["strategy"] == "from-file" or data["scope"] == "all":
            return ALL_TOPICS if data["strategy"] != "from-file" else []
        if data["scope"] == "topic":
            return [TopicScope(data["topic"].strip())]
        try:
            parts = tuple(int(p) for p in data["partitions"].replace(" ", "").split(",") if p)
        except ValueError as exc:
            raise ConsoleError("Partitions are numbers separated by commas.") from exc
        return [TopicScope(data["topic"].strip(), parts)]

    def strategy_value(self, cluster: str):
        data = self.cleaned_data
        value = data["csv"] if data["strategy"] == "from-file" else data.get("value")
        return strategy_from(cluster, data["strategy"], value)


class ExecuteForm(forms.Form):
    fingerprint = forms.CharField()
    reason = forms.CharField(max_length=1000)
    confirm = forms.CharField(label="Type the group name to confirm")
