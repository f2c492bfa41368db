from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models

from console.clusters.client_settings import (  # noqa: F401 (names other modules and tests import from here)
    MSG_SECRET_IN_CONFIG, MSG_UNSAFE_CONFIG, REGISTRY_PREFIX, SECRET_CONFIG_KEYS, SettingRefused, check_registration,
)

RESERVED_NAMES = frozenset({"new"})  # path segments of the clusters pages
MSG_REGISTRY_URL = "The schema registry's address must start with http:// or https://."
MSG_RESERVED_NAME = "'{name}' is reserved for the console's own pages."

name_validator = RegexValidator(r"^[a-z0-9][a-z0-9_-]{0,62}$", "Lower-case letters, digits, '-' and '_' only.")


class Cluster(models.Model):
    """A Kafka cluster the console manages. Secrets are never stored: only the names of environment variables."""

    name = models.CharField(max_length=63, unique=True, validators=[name_validator])
    bootstrap_servers = models.CharField(max_length=1000)
    # Non-secret librdkafka settings, e.g. {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
    # "sasl.username": "console"}.
    client_config = models.JSONField(default=dict, blank=True)
    # Secret setting -> environment variable holding its value, e.g.
    # {"sasl.password": "CONSOLE_SECRET_PROD_KAFKA_PASSWORD"}: only variables meant for cluster secrets.
    secret_env = models.JSONField(default=dict, blank=True)
    # A Confluent-compatible schema registry (Confluent, Karapace, Apicurio's /apis/ccompat/v7, Redpanda's) that
    # decodes and encodes this cluster's records. Its settings are client_config and secret_env keys starting
    # with "schema.registry.", e.g. {"schema.registry.basic.auth.user.info": "CONSOLE_SECRET_REGISTRY_AUTH"} in
    # secret_env.
    schema_registry_url = models.CharField(max_length=1000, blank=True)
    description = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if self.name in RESERVED_NAMES:
            raise ValidationError({"name": MSG_RESERVED_NAME.format(name=self.name)})
        try:
            check_registration(self.client_config, self.secret_env)
        except SettingRefused as exc:
            raise ValidationError({exc.field: exc.message}) from exc
        if self.schema_registry_url and not self.schema_registry_url.startswith(("http://", "https://")):
            raise ValidationError({"schema_registry_url": MSG_REGISTRY_URL})
