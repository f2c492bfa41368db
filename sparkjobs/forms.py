from django import forms

from sparkjobs.models import ReplayJob


SINK_GUARANTEES = ("Files: exactly once per job (a job writes its own new folder). Topic: exactly once for "
                   "read_committed readers (each Spark task writes in a transaction; a retried task fences the "
                   "attempt before it), at least once for read_uncommitted readers, who also see aborted attempts.")


class ReplayForm(forms.Form):
    topic = forms.CharField()
    partitions = forms.CharField(required=False, help_text="e.g. 0,3 (empty: all)")
    start = forms.CharField(initial="earliest",
                            help_text="earliest · offsets:0=100,1=250 · timestamp:2026-11-21T03:00:00Z · group:GROUP · reset:AUDIT_ID")
    end = forms.CharField(initial="latest", help_text="latest · offsets:0=200 · timestamp:2026-11-21T04:00:00Z")
    filter_expr = forms.CharField(required=False, label="Filter (Spark SQL)",
                                  help_text="e.g. value LIKE '%refund%' AND partition = 0 (key and value as text)")
    isolation = forms.ChoiceField(
        choices=ReplayJob.Isolation.choices, initial=ReplayJob.Isolation.READ_COMMITTED,
        help_text="read_uncommitted also replays records of aborted transactions, which no correct consumer ever "
                  "saw: use it only to investigate, never into a topic others read.")
    sink = forms.ChoiceField(choices=ReplayJob.Sink.choices, help_text=SINK_GUARANTEES)
    output_uri = forms.CharField(required=False, label="Output location", max_length=400,
                                 help_text="Files: empty for this server's replay folder, or s3a://BUCKET/PREFIX "
                                           "(needed on a Spark cluster: each executor writes its own files)")
    sink_topic = forms.CharField(required=False, label="Sink topic")
    sink_cluster = forms.CharField(required=False, label="Sink cluster", help_text="empty: the same cluster")
    keep_partitions = forms.BooleanField(required=False, label="Keep partition numbers")
    reason = forms.CharField(max_length=1000)

    def clean_partitions(self) -> list[int] | None:
        raw = self.cleaned_data["partitions"].replace(" ", "")
        try:
            return [int(p) for p in raw.split(",") if p] or None
        except ValueError as exc:
            raise forms.ValidationError("Partitions are numbers separated by commas.") from exc
