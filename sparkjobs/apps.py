from django.apps import AppConfig


class SparkjobsConfig(AppConfig):
    name = "sparkjobs"

    def ready(self) -> None:
        from console.metrics.sources import register_metrics
        from sparkjobs.metrics import replay_metrics

        register_metrics("replays", replay_metrics, order=30)

        from sparkjobs import queue

        queue.register_sender(_send_replay)


def _send_replay(job_id: int) -> None:
    # Imported on first use: the task module brings pyspark and the filter parser, most of a second of every
    # process's start (each `manage.py` command, each web worker) that never sends a replay.
    from sparkjobs import tasks

    tasks.run_replay.apply_async((job_id,), retry=False)
