from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('offsets', '0005_longer_group_ids'),
    ]

    operations = [
        migrations.AddField(
            model_name='recorderstatus',
            name='behind_records',
            field=models.BigIntegerField(null=True),
        ),
    ]
