# syntax=docker/dockerfile:1

# Maven only resolves Spark's Kafka connector jars, so replay jobs need no network at run time;
# Maven itself stays out of the final image.
FROM debian:bookworm-slim AS spark-kafka-jars
# slim images strip man pages, and the JRE's postinst fails when this directory is missing.
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates maven \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /build
COPY devstack/spark-kafka-pom.xml devstack/kafka-pom.xml devstack/maven-settings.xml devstack/
# Kafka's own tools: the console runs kafka-consumer-groups --delete-offsets, which confluent-kafka lacks.
RUN mvn -q -B -s devstack/maven-settings.xml -f devstack/kafka-pom.xml dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory=/opt/kafka-libs
RUN mvn -q -B -s devstack/maven-settings.xml -f devstack/spark-kafka-pom.xml dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory=/opt/spark-kafka-jars


FROM python:3.12-slim-bookworm

# Java for PySpark's spark-submit, procps because Spark's launch scripts call ps,
# tini so signals reach gunicorn/celery and zombies are reaped.
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless procps tini \
 && rm -rf /var/lib/apt/lists/*

ENV PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=console.settings \
    SPARK_KAFKA_JARS_DIR=/opt/spark-kafka-jars \
    KAFKA_TOOLS_LIBS=/opt/kafka-libs

# Dependencies from pyproject.toml alone, so this large layer (PySpark) survives source edits.
# The project itself ships no packages; it runs from /app.
COPY pyproject.toml /tmp/deps/pyproject.toml
RUN pip install --no-cache-dir /tmp/deps && rm -rf /tmp/deps

COPY --from=spark-kafka-jars /opt/spark-kafka-jars /opt/spark-kafka-jars
COPY --from=spark-kafka-jars /opt/kafka-libs /opt/kafka-libs

# The replay and import directories are created here, owned by app and 0700, so a fresh named volume mounted on
# them inherits that ownership and mode (the console's processes write with umask 077: console/private_files.py).
RUN groupadd --system app \
 && useradd --system --gid app --create-home --home-dir /home/app app \
 && install -d -m 0700 -o app -g app /var/lib/console/replays /var/lib/console/imports \
 && chown app:app /var/lib/console && chmod 0700 /var/lib/console

WORKDIR /app
COPY . .
# Settings refuse to load without keys; these exist only for this command. It runs with the console's umask 077:
# the static files are public, so they are made readable for the app user (whitenoise serves them).
RUN SECRET_KEY=build-only AUDIT_HASH_KEY=build-only-audit python manage.py collectstatic --noinput \
 && chmod -R a+rX /app/.data

# Source and static files stay root-owned: the app cannot rewrite its own code.
USER app
EXPOSE 8000
ENTRYPOINT ["tini", "--"]
CMD ["gunicorn", "console.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--timeout", "30"]
