from django.apps import AppConfig


class TransactionsConfig(AppConfig):
    name = "transactions"
