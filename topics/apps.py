from django.apps import AppConfig


class TopicsConfig(AppConfig):
    name = "topics"

    def ready(self) -> None:
        from console.clusters.dashboard import register_dashboard_panel
        from topics.dashboard import topics_panel

        register_dashboard_panel(topics_panel)
