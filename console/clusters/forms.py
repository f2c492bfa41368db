from __future__ import annotations

from django import forms

from console.forms import clean_pairs


class ClusterForm(forms.Form):
    name = forms.CharField(max_length=63, help_text="lower-case letters, digits, '-' and '_'")
    bootstrap_servers = forms.CharField(max_length=1000, widget=forms.TextInput(attrs={"placeholder": "k1:9093,k2:9093"}))
    client_config = forms.CharField(
        required=False, label="Client settings",
        help_text="librdkafka settings, one key=value a line; secrets are refused here",
        widget=forms.Textarea(attrs={"rows": 4, "placeholder": "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512"
                                                              "\nsasl.username=console"}))
    secret_env = forms.CharField(
        required=False, label="Secrets from the environment",
        help_text="setting=ENVIRONMENT_VARIABLE, one a line; only variables meant for cluster secrets (by default "
                  "named CONSOLE_SECRET_…), read from each process's environment",
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "sasl.password=CONSOLE_SECRET_PROD_KAFKA_PASSWORD"}))
    schema_registry_url = forms.CharField(
        max_length=1000, required=False, label="Schema registry",
        help_text="a Confluent-compatible registry's address; its settings go above with the prefix "
                  "schema.registry. (e.g. schema.registry.basic.auth.user.info=CONSOLE_SECRET_REGISTRY_AUTH under "
                  "secrets)",
        widget=forms.TextInput(attrs={"placeholder": "https://registry.example:8081"}))
    description = forms.CharField(max_length=300, required=False)
    reason = forms.CharField(max_length=1000, widget=forms.TextInput(attrs={"placeholder": "why (goes into the audit log)"}))

    def clean_client_config(self) -> dict[str, str]:
        return clean_pairs(self.cleaned_data["client_config"])

    def clean_secret_env(self) -> dict[str, str]:
        return clean_pairs(self.cleaned_data["secret_env"])


class ClusterRemoveForm(forms.Form):
    confirm = forms.CharField(label="Type the cluster's name")
    reason = forms.CharField(max_length=1000, widget=forms.TextInput(attrs={"placeholder": "why (goes into the audit log)"}))
