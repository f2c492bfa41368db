from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "alerts"
    verbose_name = "Alerts"

    def ready(self) -> None:
        from alerts.dashboard import alerts_panel
        from console.clusters.dashboard import register_dashboard_panel

        register_dashboard_panel(alerts_panel)
