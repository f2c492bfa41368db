from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models

# librdkafka settings that carry secrets: they may only be given as environment variable names.
SECRET_CONFIG_KEYS = frozenset({
    "sasl.password", "sasl.oauthbearer.client.secret", "ssl.key.password", "ssl.keystore.password",
    "ssl.key.pem", "sasl.oauthbearer.config", "ssl.truststore.password",
    "schema.registry.basic.auth.user.info", "schema.registry.bearer.auth.token", "schema.registry.ssl.key.password",
})
REGISTRY_PREFIX = "schema.registry."  # these settings go to the schema registry client, never to librdkafka
# Settings with which librdkafka runs a command or loads code: whoever may register a cluster must not get a
# shell on every console process through them.
UNSAFE_CONFIG_KEYS = frozenset({
    "sasl.kerberos.kinit.cmd", "plugin.library.paths", "ssl.engine.location", "ssl_engine_callback_data",
    "interceptors", "opaque",
})
RESERVED_NAMES = frozenset({"new"})  # path segments of the clusters pages
MSG_SECRET_IN_CONFIG = "'{key}' is a secret: give the name of an environment variable in secret_env instead."
MSG_UNSAFE_CONFIG = "'{key}' would let the cluster's settings run commands or load code in the console; it is refused."
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
    # librdkafka setting -> environment variable holding its value, e.g. {"sasl.password": "KAFKA_PROD_PASSWORD"}.
    secret_env = models.JSONField(default=dict, blank=True)
    # A Confluent-compatible schema registry (Confluent, Karapace, Apicurio's /apis/ccompat/v7, Redpanda's) that
    # decodes and encodes this cluster's records. Its settings are client_config and secret_env keys starting
    # with "schema.registry.", e.g. {"schema.registry.basic.auth.user.info": "REGISTRY_AUTH"} in secret_env.
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
        for key in list(self.client_config) + list(self.secret_env):
            if key in UNSAFE_CONFIG_KEYS or key.endswith("_cb"):
                raise ValidationError({"client_config": MSG_UNSAFE_CONFIG.format(key=key)})
        for key in self.client_config:
            if key in SECRET_CONFIG_KEYS:
                raise ValidationError({"client_config": MSG_SECRET_IN_CONFIG.format(key=key)})
        if self.schema_registry_url and not self.schema_registry_url.startswith(("http://", "https://")):
            raise ValidationError({"schema_registry_url": MSG_REGISTRY_URL})
        for key, env_name in self.secret_env.items():
            if not isinstance(env_name, str) or not env_name.isidentifier():
                raise ValidationError({"secret_env": f"'{key}' must map to an environment variable name."})
