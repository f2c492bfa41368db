from django.apps import AppConfig


class TokensConfig(AppConfig):
    name = "console.tokens"
    label = "tokens"
    verbose_name = "API tokens"
