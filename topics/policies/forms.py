from __future__ import annotations

from django import forms

from topics.policies.rules import ConfigRule, PolicyInputError, parse_config_rules

RULES_PLACEHOLDER = ("min.insync.replicas >= 2: writes must survive one broker\n"
                     "retention.ms <= 604800000: keep at most 7 days\n"
                     "cleanup.policy in delete | compact,delete\n"
                     "retention.ms required: say how long records are kept")


class TopicPolicyForm(forms.Form):
    name = forms.CharField(max_length=100)
    applies_to = forms.CharField(required=False, max_length=1000, label="Applies to topics matching",
                                 help_text="a regular expression searched in the name (RE2); empty: every topic")
    name_pattern = forms.CharField(required=False, max_length=1000, label="Names must match",
                                   help_text="a regular expression the whole name must match")
    name_message = forms.CharField(required=False, max_length=500, label="Message when the name does not match")
    min_partitions = forms.IntegerField(required=False, min_value=1, max_value=100_000)
    max_partitions = forms.IntegerField(required=False, min_value=1, max_value=100_000)
    partitions_message = forms.CharField(required=False, max_length=500, label="Message for partitions")
    min_replication_factor = forms.IntegerField(required=False, min_value=1, max_value=32767)
    max_replication_factor = forms.IntegerField(required=False, min_value=1, max_value=32767)
    replication_message = forms.CharField(required=False, max_length=500, label="Message for replication factor")
    config_rules = forms.CharField(required=False, max_length=20_000, label="Config rules, one a line",
                                   widget=forms.Textarea(attrs={"rows": 5, "placeholder": RULES_PLACEHOLDER}))
    reason = forms.CharField(required=False, max_length=1000,
                             widget=forms.TextInput(attrs={"placeholder": "why (goes into the audit log)"}))

    def clean_config_rules(self) -> list[ConfigRule]:
        try:
            return parse_config_rules(self.cleaned_data.get("config_rules") or "")
        except PolicyInputError as exc:
            raise forms.ValidationError(exc.message) from None

    @staticmethod
    def initial_for(row) -> dict:
        fields = {name: getattr(row, name) for name in TopicPolicyForm.base_fields if hasattr(row, name)}
        fields["config_rules"] = "\n".join(ConfigRule(**rule).text for rule in row.config_rules or [])
        return fields


class PolicyDeleteForm(forms.Form):
    reason = forms.CharField(required=False, max_length=1000)
