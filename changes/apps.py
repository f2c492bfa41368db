from django.apps import AppConfig


class ChangesConfig(AppConfig):
    name = "changes"
    verbose_name = "Four-eyes changes: protected clusters and change requests"
