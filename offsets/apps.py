from django.apps import AppConfig


class OffsetsConfig(AppConfig):
    name = "offsets"
