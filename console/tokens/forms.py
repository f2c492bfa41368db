from __future__ import annotations

from django import forms
from django.conf import settings

from console.accounts.roles import Role
from console.tokens.models import ApiToken

EXPIRY_DAYS = (7, 30, 90, 365)


class TokenCreateForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="what uses it: 'ci-orders-repo', 'laptop scripts'")
    kind = forms.ChoiceField(choices=ApiToken.Kind.choices, initial=ApiToken.Kind.PERSONAL)
    role = forms.TypedChoiceField(coerce=int, help_text="no higher than yours; the token acts as you with this role")
    expires_days = forms.TypedChoiceField(coerce=int, label="Expires after", initial=90)
    clusters = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple,
                                         help_text="none ticked: every cluster")
    read_only = forms.BooleanField(required=False, label="Read-only", help_text="refused any change (403)")
    mcp_execute = forms.BooleanField(required=False, label="Assistants may execute",
                                     help_text="lets an MCP assistant execute a reset or replay it previewed")
    reason = forms.CharField(required=False, max_length=500, help_text="for the audit log")

    def __init__(self, *args, role: Role, clusters: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["role"].choices = [(int(r), r.group_name) for r in Role if r <= role]
        self.fields["role"].initial = int(Role.VIEWER)
        self.fields["clusters"].choices = [(name, name) for name in clusters]
        self.fields["expires_days"].choices = [(d, f"{d} days") for d in EXPIRY_DAYS
                                               if d <= settings.API_TOKEN_MAX_DAYS] or [
            (settings.API_TOKEN_MAX_DAYS, f"{settings.API_TOKEN_MAX_DAYS} days")]
