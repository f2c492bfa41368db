"""Status windows move from nested JSON to LagWindow's packed columns (offsets/lag/window.py): a sweep of 50,000
groups decoded and encoded 31 MB of JSON lists each time. Existing windows are carried over, not dropped, so
statuses do not go back to "collecting samples" after the upgrade."""

from django.db import migrations, models


def pack_windows(apps, schema_editor):
    from offsets.lag.window import LagWindow

    status = apps.get_model("offsets", "GroupLagStatus")
    batch = []
    for pk, window in status.objects.values_list("pk", "window_json").iterator(2000):
        batch.append(status(pk=pk, window=LagWindow.from_dict(window or {}).to_bytes()))
        if len(batch) >= 2000:
            status.objects.bulk_update(batch, ["window"])
            batch = []
    status.objects.bulk_update(batch, ["window"])


class Migration(migrations.Migration):

    dependencies = [
        ("offsets", "0007_lag_sweep_skipped"),
    ]

    operations = [
        migrations.RenameField(model_name="grouplagstatus", old_name="window", new_name="window_json"),
        migrations.AddField(model_name="grouplagstatus", name="window", field=models.BinaryField(default=b"")),
        migrations.RunPython(pack_windows, migrations.RunPython.noop),
        migrations.RemoveField(model_name="grouplagstatus", name="window_json"),
    ]
