from django.apps import AppConfig


class SparkjobsConfig(AppConfig):
    name = "sparkjobs"

    def ready(self) -> None:
        from console.metrics.registry import register_metrics
        from sparkjobs.metrics import replay_metrics

        register_metrics("replays", replay_metrics, order=30)

        from sparkjobs import queue, tasks

        queue.register_sender(lambda job_id: tasks.run_replay.apply_async((job_id,), retry=False))
