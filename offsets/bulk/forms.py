from __future__ import annotations

from django import forms

from offsets.bulk.planning import ACTIONS

# Strategies one value fits for every group (from-file and from-group name one group's own offsets).
BULK_STRATEGIES = ("to-earliest", "to-latest", "to-current", "to-offset", "shift-by", "to-datetime", "by-duration")


class GroupBulkForm(forms.Form):
    action = forms.ChoiceField(choices=[(a, a) for a in ACTIONS])
    topic = forms.CharField(required=False, max_length=249, label="Topic (delete-offsets)")
    all_topics = forms.BooleanField(required=False, label="Reset every topic the group has offsets for")
    topics = forms.CharField(required=False, max_length=5000, label="or reset these topics",
                             help_text="as --topic takes them, space apart: orders or orders:0,2")
    strategy = forms.ChoiceField(required=False, choices=[(s, s) for s in BULK_STRATEGIES])
    value = forms.CharField(required=False, max_length=100, label="Strategy value",
                            help_text="the offset, shift, date (2026-11-26T10:00:00.000) or duration (PT1H)")


class GroupBulkExecuteForm(GroupBulkForm):
    confirm = forms.CharField(label="Type the phrase to confirm")
    reason = forms.CharField(max_length=1000)
    fingerprints = forms.JSONField(required=False)
