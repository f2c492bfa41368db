from django import forms

from access.services import MAX_ITERATIONS, MIN_ITERATIONS
from gateway.kafka.types import ACL_OPERATIONS, ACL_PATTERN_TYPES, ACL_PERMISSIONS, ACL_RESOURCE_TYPES, SCRAM_MECHANISMS


def _choices(values, blank: str | None = None):
    found = [(v, v) for v in values]
    return [("", blank), *found] if blank is not None else found


class AclFilterForm(forms.Form):
    principal = forms.CharField(required=False, max_length=1000, help_text="e.g. User:alice")
    resource_type = forms.ChoiceField(required=False, choices=_choices(ACL_RESOURCE_TYPES, "any"))
    resource_name = forms.CharField(required=False, max_length=1000,
                                    help_text="finds the literal name, the wildcard and the prefixes covering it")
    operation = forms.ChoiceField(required=False, choices=_choices(ACL_OPERATIONS, "any"))
    permission = forms.ChoiceField(required=False, choices=_choices(ACL_PERMISSIONS, "any"))


class AclCreateForm(forms.Form):
    principal = forms.CharField(max_length=1000, help_text="Type:name, e.g. User:alice")
    resource_type = forms.ChoiceField(choices=_choices(ACL_RESOURCE_TYPES))
    resource_name = forms.CharField(required=False, max_length=1000,
                                    help_text="* for every resource of the type; kafka-cluster for CLUSTER")
    pattern_type = forms.ChoiceField(choices=_choices(ACL_PATTERN_TYPES))
    operations = forms.MultipleChoiceField(choices=_choices(ACL_OPERATIONS), widget=forms.CheckboxSelectMultiple)
    permission = forms.ChoiceField(choices=_choices(ACL_PERMISSIONS))
    host = forms.CharField(required=False, max_length=255, initial="*", help_text="*, one IP address, or a CIDR range (clusters at metadata.version 4.4-IV1 or later)")
    reason = forms.CharField(required=False, max_length=1000)


class AclDeleteForm(forms.Form):
    binding = forms.MultipleChoiceField(choices=(), required=True)  # tokens from access.bindings
    confirm = forms.CharField(required=False)
    reason = forms.CharField(required=False, max_length=1000)

    def __init__(self, data=None, **kwargs):
        super().__init__(data, **kwargs)
        # The values are checked by binding_from_token, not against a fixed list.
        self.fields["binding"].valid_value = lambda value: True


class CredentialForm(forms.Form):
    user = forms.CharField(max_length=1000)
    mechanism = forms.ChoiceField(choices=_choices(SCRAM_MECHANISMS), initial="SCRAM-SHA-512")
    iterations = forms.IntegerField(min_value=MIN_ITERATIONS, max_value=MAX_ITERATIONS, initial=MIN_ITERATIONS)
    password = forms.CharField(widget=forms.PasswordInput(render_value=False), strip=False, max_length=1000)
    reason = forms.CharField(required=False, max_length=1000)


class CredentialDeleteForm(forms.Form):
    user = forms.CharField(max_length=1000)
    mechanism = forms.ChoiceField(choices=_choices(SCRAM_MECHANISMS))
    confirm = forms.CharField(required=False)
    reason = forms.CharField(required=False, max_length=1000)
