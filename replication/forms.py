from django import forms


class ElectForm(forms.Form):
    topic = forms.CharField(required=False, max_length=2000, help_text="blank: every topic; or TOPIC, or TOPIC:0,2")
    reason = forms.CharField(required=False, max_length=1000)


class ReassignForm(forms.Form):
    topic = forms.CharField(max_length=249)
    assignment = forms.CharField(required=False, max_length=20000, widget=forms.Textarea(attrs={"rows": 3}),
                                 help_text="PARTITION=BROKER,BROKER;... (the first broker leads)")
    replication_factor = forms.IntegerField(required=False, min_value=1, help_text="or a new replication factor")
    throttle = forms.IntegerField(required=False, min_value=1, label="Throttle (bytes/s per broker)")
    reason = forms.CharField(required=False, max_length=1000)

    def clean(self):
        data = super().clean()
        if bool(data.get("assignment", "").strip()) == (data.get("replication_factor") is not None):
            raise forms.ValidationError("Give either an assignment or a replication factor.")
        return data


class TopicActionForm(forms.Form):
    topic = forms.CharField(max_length=249)
    reason = forms.CharField(required=False, max_length=1000)
