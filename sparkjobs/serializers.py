"""The JSON of a replay: what `manage.py replay --wait` prints at the end and the API answers for a job, and the
preview of a replay's range."""

from __future__ import annotations

from sparkjobs.models import ReplayJob
from sparkjobs.selectors import ResolvedRange


def replay_json(job: ReplayJob) -> dict:
    """A job's spec, its state and progress, and (once ended) its counts and output."""
    return {
        "job": job.pk, "cluster": job.cluster, "topic": job.topic, "state": job.state,
        "records": job.records_written, "isolation": job.isolation, "aborted": job.records_aborted,
        "transaction_markers": job.transaction_markers, "summary": job.offsets_summary,
        "output": job.output_dir or f"topic:{job.sink_topic}" + (f"@{job.sink_cluster}" if job.sink_cluster else ""),
        "start": job.start_spec, "end": job.end_spec,
        "ranges": {str(p): list(r) for p, r in sorted(job.ranges.items(), key=lambda item: int(item[0]))},
        "planned_records": job.planned_records, "progress_percent": job.progress_percent, "filter": job.filter_expr,
        "sink": job.sink, "error": job.error or None,
        "created_by": job.created_by.get_username() if job.created_by else None,
        "created_at": job.created_at.isoformat() if job.created_at else None,
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
    }


def replay_range_json(topic: str, resolved: ResolvedRange) -> dict:
    """A replay's range resolved to offsets now (the preview; a submit resolves it again)."""
    return {"topic": topic, "ranges": {str(p): list(r) for p, r in sorted(resolved.ranges.items())},
            "planned_records": resolved.planned}
