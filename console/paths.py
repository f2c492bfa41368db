import os
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[1]
CACHE_DIR = PROJECT_DIR / ".cache"
DATA_DIR = PROJECT_DIR / ".data"
KAFKA_VERSION = "4.3.1"
KAFKA_LIBS = CACHE_DIR / f"kafka-{KAFKA_VERSION}" / "libs"
SPARK_KAFKA_JARS = Path(os.environ.get("SPARK_KAFKA_JARS_DIR") or CACHE_DIR / "spark-kafka" / "jars")
# Only on the classpath of replays that need them: s3a:// output, and typed Parquet from Avro.
SPARK_S3A_JARS = Path(os.environ.get("SPARK_S3A_JARS_DIR") or CACHE_DIR / "spark-s3a" / "jars")
SPARK_AVRO_JARS = Path(os.environ.get("SPARK_AVRO_JARS_DIR") or CACHE_DIR / "spark-avro" / "jars")
# The schema registry `make deps` builds (devstack/registry-pom.xml); another build's quarkus-run.jar may be
# named instead.
REGISTRY_APP = Path(os.environ.get("SCHEMA_REGISTRY_APP") or CACHE_DIR / "schema-registry" / "quarkus-app"
                    / "quarkus-run.jar")
