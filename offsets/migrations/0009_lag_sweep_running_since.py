"""LagSweep.running_since: a cluster's sweeps no longer overlap when one outlasts its interval."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("offsets", "0008_packed_lag_windows")]

    operations = [
        migrations.AddField(model_name="lagsweep", name="running_since", field=models.DateTimeField(null=True)),
    ]
