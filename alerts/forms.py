from __future__ import annotations

from datetime import timedelta

from django import forms
from django.utils import timezone

from alerts.conditions import ALERTABLE_STATUSES, CONNECTOR_STATUSES
from alerts.channels import webhook_channels
from alerts.models import AlertRule
from console.clusters.models import Cluster


def _clusters() -> list[tuple[str, str]]:
    return [("", "every cluster")] + [(n, n) for n in Cluster.objects.order_by("name").values_list("name", flat=True)]


class AlertRuleForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="letters, digits, '.', '_' or '-'")
    kind = forms.ChoiceField(choices=AlertRule.Kind.choices)
    cluster = forms.ChoiceField(required=False)
    group_pattern = forms.CharField(required=False, initial="*", label="Groups, connectors or topics",
                                    help_text="a group id or a pattern such as orders-* (status, lag, rebalances); "
                                              "connector names for a connector rule; topics for a retention rule")
    statuses = forms.MultipleChoiceField(choices=[(s, s) for s in (*ALERTABLE_STATUSES, *CONNECTOR_STATUSES)],
                                         required=False, widget=forms.CheckboxSelectMultiple,
                                         help_text="for a status rule; FAILED or NOT_RUNNING for a connector rule")
    for_minutes = forms.IntegerField(min_value=0, initial=5, label="For at least (minutes)")
    threshold = forms.IntegerField(required=False, min_value=0,
                                   help_text="records of lag (lag rule), rebalances (rebalance rule), idle % (idle), "
                                             "ms (p99_latency), partitions (under_replicated, under_min_isr), % of "
                                             "retention.bytes (retention; 90 if left empty)")
    window_minutes = forms.IntegerField(required=False, min_value=1, label="Within (minutes)",
                                        help_text="for a rebalance rule")
    webhook = forms.ChoiceField(required=False, help_text="channels come from CONSOLE_ALERT_WEBHOOKS")
    emails = forms.CharField(required=False, help_text="addresses separated by commas")
    reason = forms.CharField(required=False, max_length=1000)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["cluster"].choices = _clusters()
        # Offered from the environment; a name no longer configured is refused by the service with the known names.
        self.fields["webhook"].choices = [("", "none")] + [(n, n) for n in sorted(webhook_channels())]

    def email_list(self) -> list[str]:
        return [e for e in self.cleaned_data["emails"].replace(";", ",").split(",") if e.strip()]


class SilenceForm(forms.Form):
    rule = forms.ChoiceField(required=False)
    cluster = forms.ChoiceField(required=False)
    group_pattern = forms.CharField(required=False, initial="*", label="Groups")
    hours = forms.DecimalField(min_value=0.01, max_value=24 * 30, initial=2, label="For (hours)")
    reason = forms.CharField(max_length=1000)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["rule"].choices = [("", "every rule")] + [
            (n, n) for n in AlertRule.objects.order_by("name").values_list("name", flat=True)]
        self.fields["cluster"].choices = _clusters()

    def ends_at(self):
        return timezone.now() + timedelta(hours=float(self.cleaned_data["hours"]))
