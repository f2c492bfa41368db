from __future__ import annotations

from django import forms

from brokers.log_dirs import entries

CORDON, UNCORDON = "cordon", "uncordon"


class CordonForm(forms.Form):
    """Cordon or uncordon log directories of one broker; `before` carries the config the preview showed."""

    action = forms.ChoiceField(choices=[(CORDON, "cordon"), (UNCORDON, "uncordon")])
    log_dirs = forms.CharField(max_length=4000, label="Log directories",
                               help_text="as in the broker's log.dirs, separated by commas, or * for all of them")
    reason = forms.CharField(required=False, max_length=1000)
    before = forms.CharField(required=False, max_length=4000, widget=forms.HiddenInput)

    def dirs(self) -> list[str]:
        return entries(self.cleaned_data["log_dirs"])
