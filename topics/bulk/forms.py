from __future__ import annotations

from django import forms

from console.forms import clean_pairs
from console.parsing import parse_keys
from topics.bulk.planning import ACTIONS


class TopicBulkForm(forms.Form):
    action = forms.ChoiceField(choices=[(a, a) for a in ACTIONS])
    set_values = forms.CharField(required=False, label="Set configs",
                                 widget=forms.Textarea(attrs={"rows": 2, "placeholder": "retention.ms=86400000"}))
    delete = forms.CharField(required=False, label="Remove config overrides",
                             widget=forms.TextInput(attrs={"placeholder": "segment.ms, retention.bytes"}))
    new_total = forms.IntegerField(required=False, min_value=1, max_value=100_000, label="New partition count")
    override_policy = forms.BooleanField(required=False,
                                         label="Override topic policies (admins; the reason is audited)")

    def clean_set_values(self) -> dict[str, str]:
        return clean_pairs(self.cleaned_data["set_values"])

    def clean_delete(self) -> list[str]:
        return parse_keys(self.cleaned_data["delete"])


class TopicBulkExecuteForm(TopicBulkForm):
    confirm = forms.CharField(label="Type the phrase to confirm")
    reason = forms.CharField(max_length=1000)
