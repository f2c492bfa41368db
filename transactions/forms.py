from django import forms

from transactions.selectors import DEFAULT_MAX_TRANSACTION_TIMEOUT_MIN


class HangingSearchForm(forms.Form):
    topic = forms.CharField(required=False, max_length=249)
    partition = forms.IntegerField(required=False, min_value=0)
    broker = forms.IntegerField(required=False, min_value=0, label="Broker id")
    max_timeout = forms.IntegerField(min_value=0, initial=DEFAULT_MAX_TRANSACTION_TIMEOUT_MIN,
                                     label="Max transaction timeout (min)",
                                     help_text="only transactions whose last write is older than this are searched")


class AbortForm(forms.Form):
    topic = forms.CharField(max_length=249)
    partition = forms.IntegerField(min_value=0)
    start_offset = forms.IntegerField(min_value=0)
    max_timeout = forms.IntegerField(min_value=0, initial=DEFAULT_MAX_TRANSACTION_TIMEOUT_MIN)
    confirm = forms.CharField(required=False)
    reason = forms.CharField(required=False, max_length=1000)
