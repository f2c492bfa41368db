from django import forms

from masking.models import MaskRule

ROLE_CHOICES = [("viewer", "viewer"), ("operator", "operator"), ("admin", "admin")]


class MaskRuleForm(forms.Form):
    topic_pattern = forms.CharField(max_length=1000, initial=".*", help_text="RE2 over the whole topic name")
    selector = forms.ChoiceField(choices=MaskRule.Selector.choices)
    target = forms.CharField(required=False, max_length=1000, label="Path, header or pattern",
                             help_text="$.customer.email · a header's name · a regex (empty for the key)")
    action = forms.ChoiceField(choices=MaskRule.Action.choices)
    replacement = forms.CharField(required=False, max_length=200, help_text="for replace")
    keep_last = forms.IntegerField(min_value=0, max_value=1000, initial=4, help_text="for keep the last N")
    roles = forms.MultipleChoiceField(choices=ROLE_CHOICES, initial=["viewer", "operator"],
                                      widget=forms.CheckboxSelectMultiple, help_text="the roles it masks for")
    reason = forms.CharField(max_length=1000, required=False)
