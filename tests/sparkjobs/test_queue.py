"""A submitted replay reaches the Celery task through the sender the app registers (sparkjobs/queue.py), so the
service that queues it does not import the task that runs it; a queue that does not answer fails the replay."""

import uuid

import pytest

from sparkjobs import services, tasks
from sparkjobs.models import ReplayJob


def test_a_submitted_replay_is_sent_to_the_replay_task(monkeypatch):
    sent = []
    monkeypatch.setattr(tasks.run_replay, "apply_async", lambda args, **options: sent.append((args, options)))
    services._enqueue(41)
    assert sent == [((41,), {"retry": False})]


@pytest.mark.django_db
def test_a_queue_that_does_not_answer_fails_the_replay_with_its_message(monkeypatch, make_user, tmp_path):
    job = ReplayJob.objects.create(cluster="local", topic="t", start_spec="earliest", end_spec="latest",
                                   ranges={"0": [0, 1]}, planned_records=1, sink="jsonl", correlation_id=uuid.uuid4(),
                                   output_dir=str(tmp_path / "out"), created_by=make_user("queue-down", "operator"))

    def redis_down(*_args, **_options):
        raise ConnectionRefusedError("redis")

    monkeypatch.setattr(tasks.run_replay, "apply_async", redis_down)
    services._enqueue(job.pk)
    job.refresh_from_db()
    assert job.state == "failed"
    assert job.error == services.MSG_QUEUE_DOWN.format(job=job.pk, error="ConnectionRefusedError")
