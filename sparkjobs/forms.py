from django import forms

from sparkjobs.models import ReplayJob


class ReplayForm(forms.Form):
    topic = forms.CharField()
    partitions = forms.CharField(required=False, help_text="e.g. 0,3 (empty: all)")
    start = forms.CharField(initial="earliest",
                            help_text="earliest · offsets:0=100,1=250 · timestamp:2026-11-21T03:00:00Z · group:GROUP · reset:AUDIT_ID")
    end = forms.CharField(initial="latest", help_text="latest · offsets:0=200 · timestamp:2026-11-21T04:00:00Z")
    filter_expr = forms.CharField(required=False, label="Filter (Spark SQL)",
                                  help_text="e.g. value LIKE '%refund%' AND partition = 0 (key and value as text)")
    sink = forms.ChoiceField(choices=ReplayJob.Sink.choices)
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
