from __future__ import annotations

from django import forms

from alerts.channels import webhook_channels


def _lines(text: str) -> list[str]:
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


class ProtectionForm(forms.Form):
    whole_cluster = forms.BooleanField(required=False, initial=True, label="Protect the whole cluster",
                                       help_text="every topic and group; untick to protect only the names below")
    topic_patterns = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}),
                                     label="Topics", help_text="one pattern a line: a glob (orders-*) or re: and a "
                                                               "regular expression matching the whole name")
    group_patterns = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}),
                                     label="Groups", help_text="the same, for consumer, share and streams groups")
    approvals = forms.IntegerField(required=False, min_value=1, max_value=5,
                                   help_text="approvals a request needs (empty: CHANGE_APPROVALS, default 1)")
    webhook = forms.ChoiceField(required=False, help_text="told of every request and every break-glass; channels "
                                                          "come from CONSOLE_ALERT_WEBHOOKS")
    reason = forms.CharField(max_length=1000)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["webhook"].choices = [("", "none")] + [(n, n) for n in sorted(webhook_channels())]

    def patterns(self, name: str) -> list[str]:
        return _lines(self.cleaned_data[name])


class DecisionForm(forms.Form):
    reason = forms.CharField(required=False, max_length=2000)


class ReasonForm(forms.Form):
    reason = forms.CharField(max_length=2000)
