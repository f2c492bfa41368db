from __future__ import annotations

from django import forms

from console.forms import clean_pairs
from console.parsing import parse_keys


class ReasonForm(forms.Form):
    reason = forms.CharField(max_length=1000, widget=forms.TextInput(attrs={"placeholder": "why (goes into the audit log)"}))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.order_fields([name for name in self.fields if name != "reason"] + ["reason"])


OVERRIDE_LABEL = "Override topic policies (the rules broken go into the audit log with the reason)"


def override_field() -> forms.BooleanField:
    return forms.BooleanField(required=False, label=OVERRIDE_LABEL)


class TopicCreateForm(ReasonForm):
    name = forms.CharField(max_length=249)
    partitions = forms.IntegerField(min_value=1, max_value=100_000, initial=3)
    replication_factor = forms.IntegerField(min_value=1, max_value=32767, initial=1)
    configs = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 4, "placeholder": "retention.ms=604800000\ncleanup.policy=delete"}))
    override_policy = override_field()

    def clean_configs(self) -> dict[str, str]:
        return clean_pairs(self.cleaned_data["configs"])


class ConfigChangeForm(ReasonForm):
    set_values = forms.CharField(required=False, label="Set",
                                 widget=forms.Textarea(attrs={"rows": 3, "placeholder": "retention.ms=86400000"}))
    delete = forms.CharField(required=False, label="Remove overrides",
                             widget=forms.TextInput(attrs={"placeholder": "segment.ms, retention.bytes"}))

    def clean_set_values(self) -> dict[str, str]:
        return clean_pairs(self.cleaned_data["set_values"])

    def clean_delete(self) -> list[str]:
        return parse_keys(self.cleaned_data["delete"])


class TopicConfigChangeForm(ConfigChangeForm):
    override_policy = override_field()


class PartitionsForm(ReasonForm):
    new_total = forms.IntegerField(min_value=1, label="New partition count")
    understood = forms.BooleanField(label="I understand keys will map to different partitions from now on")
    override_policy = override_field()


class DeleteForm(ReasonForm):
    confirm = forms.CharField(label="Type the topic name to confirm")


class PurgeForm(ReasonForm):
    partitions = forms.CharField(required=False, help_text="e.g. 0,2 (empty: all partitions)")
    before_offset = forms.IntegerField(required=False, min_value=0,
                                       help_text="delete records below this offset (empty: everything present now)")

    def clean_partitions(self) -> list[int]:
        try:
            return [int(p) for p in parse_keys(self.cleaned_data.get("partitions") or "")]
        except ValueError as exc:
            raise forms.ValidationError("Partitions are numbers separated by commas.") from exc
