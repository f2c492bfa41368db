from django.apps import AppConfig


class ConfigAsCodeConfig(AppConfig):
    name = "config_as_code"
    verbose_name = "Config as code"
