from django.apps import AppConfig


class SparkjobsConfig(AppConfig):
    name = "sparkjobs"
