from django import forms

from console.accounts.roles import Role

NO_ROLE = "none"
ROLE_CHOICES = [(r.group_name, r.group_name) for r in Role] + [(NO_ROLE, "no role")]


class RoleSetForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=ROLE_CHOICES)
    reason = forms.CharField(max_length=500, help_text="why: recorded in the audit log")

    def clean_role(self) -> Role | None:
        value = self.cleaned_data["role"]
        return None if value == NO_ROLE else Role[value.upper()]
