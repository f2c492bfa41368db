from django.apps import AppConfig


class MaskingConfig(AppConfig):
    name = "masking"
    verbose_name = "Data masking: rules per cluster, applied before records leave the server"
