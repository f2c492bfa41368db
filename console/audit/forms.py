from django import forms

from console.audit.models import AuditEvent
from console.audit.selectors import AuditFilters


class AuditFilterForm(forms.Form):
    actor = forms.CharField(required=False)
    action = forms.CharField(required=False)
    target = forms.CharField(required=False, help_text="e.g. topic:orders or group:billing")
    cluster = forms.CharField(required=False)
    # Matches the row that ended each action; "intent" finds the actions nothing ended (yet).
    outcome = forms.ChoiceField(required=False, label="Result", choices=[
        ("", "any"), (AuditEvent.Outcome.SUCCESS, "success"), (AuditEvent.Outcome.FAILURE, "failure"),
        (AuditEvent.Outcome.REFUSED, "refused"), (AuditEvent.Outcome.INTENT, "running or never ended")])
    since = forms.DateTimeField(required=False, widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))
    until = forms.DateTimeField(required=False, widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))

    def clean(self):
        data = super().clean()
        if data.get("since") and data.get("until") and data["since"] >= data["until"]:
            raise forms.ValidationError("'since' must be before 'until'.")
        return data

    def filters(self) -> AuditFilters:
        data = self.cleaned_data if self.is_valid() else {}
        return AuditFilters(**{name: data.get(name) or AuditFilters.__dataclass_fields__[name].default
                               for name in AuditFilters.__dataclass_fields__})
