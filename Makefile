# Two commands do all the set-up: `make run` and `make test` (see README.md).
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV := .venv
PY := $(VENV)/bin/python
KAFKA_JARS := .cache/kafka-4.3.1/.fetched
# Kafka 4.4.0, for the tests only: CIDR ranges in ACL hosts (KIP-1276) came with 4.4 (metadata.version 4.4-IV1), not
# with 4.3.1, whose authorizer compares a host as text; tests/access/test_acl_ranges_real.py runs a 4.4.0 broker.
KAFKA_NEXT_JARS := .cache/kafka-4.4.0/.fetched
SPARK_JARS := .cache/spark-kafka/.fetched
SPARK_S3A_JARS := .cache/spark-s3a/.fetched
SPARK_AVRO_JARS := .cache/spark-avro/.fetched
S3PROXY_JAR := .cache/s3proxy/.fetched
IDENTITY_JARS := .cache/mock-oauth2-server/.fetched
CONNECT_JARS := .cache/kafka-connect/.fetched
JMX_EXPORTER := .cache/jmx-exporter/.fetched
REGISTRY_APP := .cache/schema-registry/.built
# axe-core (npm), which the browser tests inject to check contrast; never served by the console.
AXE_CORE := .cache/axe-core/node_modules/axe-core/axe.min.js
# Each Maven run is a short-lived JVM: the client compiler alone and the serial collector halve its CPU (the
# registry's build: 34 s of CPU and 19 s against 14 s and 11 s), on a fresh machine's set-up and in CI. Options
# of the caller's MAVEN_OPTS come after these, so they win.
MAVEN_JVM := -XX:TieredStopAtLevel=1 -XX:+UseSerialGC
MVN := MAVEN_OPTS="$(MAVEN_JVM) $$MAVEN_OPTS" mvn -q -B -s devstack/maven-settings.xml

# `make run` is the console as a team runs it: gunicorn with DEBUG off and static files from WhiteNoise, over plain
# HTTP on 127.0.0.1 (so no secure-only cookies and no HSTS), mail to the log. `make dev` (or DJANGO_DEBUG=1 make run)
# is the development server with autoreload and tracebacks; the tests run with DEBUG on (their fault switches need
# it). Production sets its own environment (see docker-compose.yml).
run migrate: export DJANGO_DEBUG ?= 0
run migrate: export DJANGO_SECURE_COOKIES ?= 0
run migrate: export DJANGO_HSTS_SECONDS ?= 0
run migrate: export EMAIL_URL ?= consolemail://
test test-db: export DJANGO_DEBUG ?= 1
export DJANGO_SETTINGS_MODULE := console.settings
# Every process make starts (the console's, the tests' and the commands they run) keeps the project's compiled
# modules: with PYTHONDONTWRITEBYTECODE set, as some machines and CI images do, each process compiled them all again.
unexport PYTHONDONTWRITEBYTECODE

# With an external cluster, Redis, schema registry or Connect worker, `make run` starts no local one.
PROCS := web worker beat recorder $(if $(KAFKA_BOOTSTRAP_SERVERS),,kafka) $(if $(REDIS_URL),,redis) \
	$(if $(SCHEMA_REGISTRY_URL),,registry) $(if $(CONNECT_URL),,connect)
# The `local` cluster's registry, stored on it by `make migrate` (the shell then needs no variable), with the client
# certificate the local one asks for (devstack/registry_tls.py: no other user of the host reaches it). Not
# for the tests: they start a registry of their own and give it only to the clusters that use it.
ifndef SCHEMA_REGISTRY_URL
run migrate: export SCHEMA_REGISTRY_URL := https://127.0.0.1:8085/apis/ccompat/v7
run migrate: export SCHEMA_REGISTRY_CA := $(CURDIR)/.data/certs/registry/ca.pem
run migrate: export SCHEMA_REGISTRY_CLIENT_CERT := $(CURDIR)/.data/certs/registry/console.pem
run migrate: export SCHEMA_REGISTRY_CLIENT_KEY := $(CURDIR)/.data/certs/registry/console-key.pem
endif
# The `local` cluster's Connect worker (the `connect` process), registered on it by `make migrate` as `local`, with
# the name of the variable holding the password its REST API asks for (make writes it to .env, below). A worker
# given by CONNECT_URL is registered without: its admin registers its credentials.
ifeq ($(CONNECT_URL),)
run migrate: export CONNECT_LOCAL_PASSWORD_ENV ?= CONSOLE_SECRET_LOCAL_CONNECT_PASSWORD
endif
run migrate: export CONNECT_URL ?= http://127.0.0.1:8083

.PHONY: help deps test-deps run test test-db migrate clean-data bench bench-smoke
help:
	@echo "make run    start Kafka, Kafka Connect, Redis, Celery worker and beat, and the console (gunicorn) on http://127.0.0.1:8000"
	@echo "make dev    the same with Django's development server (DEBUG on, autoreload)"
	@echo "make docs   build the documentation site (docs/, MkDocs) into .data/site"
	@echo "           (KAFKA_BROKERS=3 make run: a three-broker Kafka cluster instead of one broker)"
	@echo "make clean-data  remove what make run stored (brokers, Redis, registry, database), not .env"
	@echo "make test   install what the tests need and run the whole suite against a real broker"
	@echo "make bench  run every bench at its documented size and rewrite its figures in bench/RESULTS.md (about an hour)"
	@echo "make bench-smoke  run every bench at a tiny size, checking it still works (what the suite runs)"

# The dependencies are installed with uv (from PyPI, into the venv): the same versions pip resolves (compared with
# `pip freeze`), in about half pip's time on a fresh machine, since it unpacks packages side by side.
UV := $(VENV)/bin/uv pip install -q --python $(PY)

$(VENV)/.created:
	@py=$$(bash devstack/find_python.sh) && echo "Creating $(VENV) with $$py" && $$py -m venv $(VENV)
	@touch $@

# Its own target, so a venv made before uv was used gets it too.
$(VENV)/bin/uv: $(VENV)/.created
	@$(PY) -m pip install -q --disable-pip-version-check uv

# uv's cache is tried first, offline: PyPI answers every revalidation of pyspark's source archive as modified, so
# an online install downloaded that archive and built its wheel again each time (30 s of a fresh clone's set-up
# against 1 s from the cache). What the cache cannot give (a fresh machine, a new requirement) comes from PyPI.
$(VENV)/.deps-run: pyproject.toml $(VENV)/bin/uv
	$(UV) --offline -e . 2>/dev/null || $(UV) -e .
	@touch $@

$(VENV)/.deps-test: pyproject.toml $(VENV)/.deps-run
	$(UV) --offline -e '.[test]' 2>/dev/null || $(UV) -e '.[test]'
	@touch $@

$(KAFKA_JARS): devstack/kafka-pom.xml .data/.system-run
	@echo "Fetching Apache Kafka 4.3.1 jars with Maven into $(@D)/libs"
	@rm -rf $(@D)/libs && $(MVN) -f $< dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/$(@D)/libs
	@touch $@

$(KAFKA_NEXT_JARS): devstack/kafka-next-pom.xml .data/.system-run
	@echo "Fetching Apache Kafka 4.4.0 jars with Maven into $(@D)/libs (tests of CIDR ACL hosts)"
	@rm -rf $(@D)/libs && $(MVN) -f $< dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/$(@D)/libs
	@touch $@

$(SPARK_JARS): devstack/spark-kafka-pom.xml .data/.system-run
	@echo "Fetching Spark's Kafka connector jars with Maven into $(@D)/jars"
	@rm -rf $(@D)/jars && $(MVN) -f $< dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/$(@D)/jars
	@touch $@

$(SPARK_S3A_JARS): devstack/spark-s3a-pom.xml .data/.system-run
	@echo "Fetching hadoop-aws and the AWS SDK's S3 modules with Maven into $(@D)/jars"
	@rm -rf $(@D)/jars && $(MVN) -f $< dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/$(@D)/jars
	@touch $@

$(SPARK_AVRO_JARS): devstack/spark-avro-pom.xml .data/.system-run
	@echo "Fetching Spark's Avro data source with Maven into $(@D)/jars"
	@rm -rf $(@D)/jars && $(MVN) -f $< dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/$(@D)/jars
	@touch $@

$(S3PROXY_JAR): devstack/s3proxy-pom.xml .data/.system-run
	@echo "Fetching S3Proxy (an S3-compatible test server) with Maven into $(@D)/libs"
	@rm -rf $(@D)/libs && $(MVN) -f $< dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/$(@D)/libs
	@touch $@

$(IDENTITY_JARS): devstack/identity-pom.xml .data/.system-run
	@echo "Fetching the test identity provider (mock-oauth2-server) with Maven into $(@D)/libs"
	@rm -rf $(@D)/libs && $(MVN) -f $< dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/$(@D)/libs
	@touch $@

$(CONNECT_JARS): devstack/connect-pom.xml .data/.system-run
	@echo "Fetching Kafka Connect 4.3.1 with the FileStream and MirrorMaker 2 connectors with Maven into $(@D)/libs"
	@rm -rf $(@D)/libs && $(MVN) -f $< dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/$(@D)/libs
	@touch $@

$(JMX_EXPORTER): devstack/jmx-exporter-pom.xml .data/.system-run
	@echo "Fetching Prometheus's JMX exporter agent with Maven into $(@D)/libs"
	@rm -rf $(@D)/libs && $(MVN) -f $< dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=$(CURDIR)/$(@D)/libs
	@touch $@

$(REGISTRY_APP): devstack/registry-pom.xml .data/.system-run
	@echo "Building the schema registry (Apicurio Registry) with Maven into $(@D)/quarkus-app"
	@rm -rf $(@D) && $(MVN) -f $< package
	@touch $@

.data/.system-run:
	@command -v redis-server >/dev/null || bash devstack/apt_install.sh redis-server
	@command -v java >/dev/null || bash devstack/apt_install.sh default-jre-headless
	@command -v mvn >/dev/null || bash devstack/apt_install.sh maven
	@umask 077; mkdir -p .data/redis && touch $@

.data/.system-test: .data/.system-run Makefile
	@command -v chromium >/dev/null || bash devstack/apt_install.sh chromium fonts-dejavu-core
	@command -v prometheus >/dev/null || bash devstack/apt_install.sh prometheus
	@command -v javac >/dev/null || bash devstack/apt_install.sh default-jdk-headless  # a test's own client-side assignor
	@touch $@

# Written once, never overwritten, git-ignored: development mode and a generated SECRET_KEY, which settings read,
# so `.venv/bin/python manage.py ...` works in a new terminal. Production sets real secrets in its environment.
# A database made before this file existed keeps the audit key its chain was written with.
.env:
	@umask 077; key=$$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n'); \
	 { echo "# Written by make for this machine's make run; production sets its own environment."; \
	   echo "SECRET_KEY=local-$$key"; \
	   if [ -f .data/console.sqlite3 ]; then echo "AUDIT_HASH_KEY=dev-only-insecure-key"; echo "AUDIT_HASH_KEY_OF_DEVELOPMENT=1"; fi; } > $@
	@echo "Wrote .env (a generated SECRET_KEY)"

# The audit chain's key, apart from SECRET_KEY as production needs it (make run runs with DEBUG off). An .env from
# before, whose database's chain was written with the development default (SECRET_KEY), names that key and says so.
.data/.audit-key: .env
	@chmod 600 .env; grep -q '^AUDIT_HASH_KEY=' .env || { \
	  if [ -f .data/console.sqlite3 ]; then \
	    echo "AUDIT_HASH_KEY=$$(sed -n 's/^SECRET_KEY=//p' .env | tail -n 1)" >> .env; echo "AUDIT_HASH_KEY_OF_DEVELOPMENT=1" >> .env; \
	  else echo "AUDIT_HASH_KEY=audit-$$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >> .env; fi; }
	@umask 077; mkdir -p .data && touch $@

# The local Redis asks for a password (devstack/redis.py); an .env from before that gets one added.
.data/.redis-password: .env
	@chmod 600 .env; grep -q '^REDIS_PASSWORD=' .env || \
	  echo "REDIS_PASSWORD=$$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')" >> .env
	@umask 077; mkdir -p .data && touch $@

# So does the local Kafka Connect worker's REST API (basic authentication, devstack/connect.py).
.data/.connect-password: .env
	@chmod 600 .env; grep -q '^CONSOLE_SECRET_LOCAL_CONNECT_PASSWORD=' .env || \
	  echo "CONSOLE_SECRET_LOCAL_CONNECT_PASSWORD=$$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')" >> .env
	@umask 077; mkdir -p .data && touch $@

# With a Spark cluster (SPARK_MASTER=spark://...), its master and workers and the console's driver share this secret
# (devstack/spark_cluster.py reads it from .env too); local replays need none.
.data/.spark-secret: .env
	@chmod 600 .env; grep -q '^SPARK_AUTHENTICATE_SECRET=' .env || \
	  echo "SPARK_AUTHENTICATE_SECRET=$$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >> .env
	@umask 077; mkdir -p .data && touch $@

# The local brokers' JMX asks for the user `monitor` and this password (devstack/kafka_jmx.py), which the
# `local` cluster's metrics source reads from the same variable; an .env from before that gets one added.
.data/.jmx-password: .env
	@chmod 600 .env; grep -q '^CONSOLE_SECRET_LOCAL_JMX_PASSWORD=' .env || \
	  echo "CONSOLE_SECRET_LOCAL_JMX_PASSWORD=$$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')" >> .env
	@umask 077; mkdir -p .data && touch $@

deps: .env .data/.audit-key .data/.redis-password .data/.connect-password .data/.jmx-password .data/.spark-secret $(VENV)/.deps-run \
	$(KAFKA_JARS) $(SPARK_JARS) $(SPARK_S3A_JARS) $(SPARK_AVRO_JARS) $(REGISTRY_APP) \
	$(CONNECT_JARS) .data/.system-run

test-deps: deps $(VENV)/.deps-test .data/.system-test $(KAFKA_NEXT_JARS) $(IDENTITY_JARS) $(S3PROXY_JAR) $(JMX_EXPORTER) $(AXE_CORE) burrow

# LinkedIn's Burrow, the oracle of the lag status rules (tests/offsets/lag/test_burrow_parity.py); the Go module proxy
# refuses it, so it is built from a checkout of its source when there is one (devstack/burrow.sh), and the test is
# skipped, saying why, when it cannot be built. Quick once built.
.PHONY: burrow
burrow:
	@umask 077; mkdir -p .data; bash devstack/burrow.sh >/dev/null 2>.data/burrow-build.log || \
	  echo "Burrow not built (.data/burrow-build.log): tests/offsets/lag/test_burrow_parity.py will be skipped"

$(AXE_CORE):
	@echo "Fetching axe-core (npm) for the browser tests' contrast checks into .cache/axe-core"
	@command -v npm >/dev/null || bash devstack/apt_install.sh npm
	@mkdir -p .cache/axe-core && npm install --silent --no-audit --no-fund --prefix .cache/axe-core axe-core@4.14.1

# What is missing is set up in two lanes side by side (`make -j`): Python's packages in one, Maven's fetches in the
# other, one Maven at a time (Maven 3.8 does not lock its local repository against another Maven writing it), so a
# fresh machine waits for the longer lane instead of both. Each target's output is printed whole as it ends.
$(SPARK_JARS): | $(KAFKA_JARS)
$(SPARK_S3A_JARS): | $(SPARK_JARS)
$(SPARK_AVRO_JARS): | $(SPARK_S3A_JARS)
$(REGISTRY_APP): | $(SPARK_AVRO_JARS)
$(CONNECT_JARS): | $(REGISTRY_APP)
$(IDENTITY_JARS): | $(CONNECT_JARS)
$(S3PROXY_JAR): | $(IDENTITY_JARS)
$(JMX_EXPORTER): | $(S3PROXY_JAR)

SETUP := $(MAKE) --no-print-directory -j3 --output-sync=target

# umask 077 in every recipe that starts or stores something: the console's processes set it themselves
# (console/private_files.py), and so does what runs before them here. A .data left with wider modes by an older
# checkout is tightened first, with a line saying so (devstack/private_data.py).
migrate:
	@$(SETUP) deps
	@umask 077; $(PY) -m devstack.private_data
	umask 077; $(PY) manage.py migrate --noinput
	umask 077; $(PY) manage.py ensure_admin
	@# Static files for WhiteNoise (gunicorn serves them; the development server needs none).
	@umask 077; $(PY) manage.py collectstatic --noinput -v 0

.PHONY: dev docs
docs: $(VENV)/.deps-test
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

dev:
	@DJANGO_DEBUG=1 $(MAKE) --no-print-directory run

run: migrate
	@umask 077; mkdir -p .data/redis  # not only in the stamp's recipe: `make clean-data` removes the folder and keeps the stamp
	@echo "Starting: $(PROCS). Ctrl-C stops them all."
	@# The Kafka client processes are detached, shared by web and worker: stopped here too, not left idling 10 min.
	umask 077; trap '$(PY) manage.py clusters stop-clients || true' EXIT; $(VENV)/bin/honcho start -f Procfile $(PROCS)

# Most of the suite's time is spent waiting on servers (a broker's election, a Spark job, a page in chromium), not
# computing: TEST_WORKERS sessions side by side (pytest-xdist, whole files to each, see tests/conftest.py) share two cores well. Each
# session starts the servers its tests need once (a broker, Redis, ...), on ports, folders and a test database of
# its own. TEST_WORKERS=0 runs one session.
TEST_WORKERS ?= 2
test:
	@$(SETUP) test-deps
	@umask 077; $(PY) -m devstack.private_data
	umask 077; bash devstack/pytest.sh $(PY) -m pytest $(if $(filter-out 0,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadgroup) $(PYTEST_ARGS)

# The tests that touch the database, against whatever DATABASE_URL names (CI: a local PostgreSQL). The slow
# drills (broker restarts, process supervision), the Spark replays (minutes of Spark around a few
# job-row updates), the browser walks (the same views the view tests cover) and the comparisons with Kafka's
# tools (a JVM per command around the same audit rows) touch the database only in passing and ran in `make test`;
# so do the other broker tests, but for those whose point is what they store (marked postgres in tests/conftest.py),
# and the tests whose database use is any Django app's (engine_neutral there).
test-db:
	@$(SETUP) test-deps
	@umask 077; $(PY) -m devstack.private_data
	umask 077; bash devstack/pytest.sh $(PY) -m pytest $(if $(filter-out 0,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadgroup) \
	  -m "database and not slow and not spark and not browser and not parity and not engine_neutral and (not kafka or postgres)" $(PYTEST_ARGS)

# Every bench script at its documented size, one after the other in this order (bench/RESULTS.md's top says why and
# how long each takes), each rewriting its section of bench/RESULTS.md. Each runs under the lock the test suites of
# this machine share, so that neither slows the other; a suite waits for one bench, not for the whole set. A bench
# starts its own broker unless KAFKA_BOOTSTRAP_SERVERS is set: a cluster the shell names is not what the figures
# describe, so it is unset here. tests/bench/test_scripts.py checks that BENCHES names every script in bench/.
BENCH_LOCK ?= /tmp/console-suite.lock
BENCHES := metrics after_sweep_reads lag_storing tool_jvm transactions client_processes clusters groups topics \
	search export_import replay recorder recorder_memory broker_sampling group_types offset_lookup groups_list lag_scale lanes \
	clusters_memory scale
bench:
	@$(SETUP) test-deps
	@umask 077; for name in $(BENCHES); do echo "== bench/$$name.py ($$(date -u +%H:%M:%S) UTC)"; \
	  env -u KAFKA_BOOTSTRAP_SERVERS flock $(BENCH_LOCK) $(PY) bench/$$name.py || exit 1; done

# The same scripts at a tiny size (`--smoke`), as the suite runs them (tests/bench/test_smoke.py).
bench-smoke:
	@$(SETUP) test-deps
	umask 077; flock $(BENCH_LOCK) bash devstack/pytest.sh $(PY) -m pytest tests/bench -q $(PYTEST_ARGS)

# Everything `make run` keeps between runs, not what it was set up with: .env (SECRET_KEY, REDIS_PASSWORD and Connect's
# password) stays, and so do the .data/.redis-password and .connect-password stamps, which only say .env holds them.
# The SQLite journal goes with its database (a stale one would be rolled back into the new file), and the
# keep_running status files with the processes they describe. Refused while `make run` is up: its processes
# would go on writing into the folders being removed.
clean-data:
	@if [ -x $(PY) ] && ! $(PY) -m console.process_status running; then \
	  echo "make run is still running (above): stop it first"; exit 1; fi
	rm -rf .data/kafka .data/kafka-[0-9]* .data/connect .data/redis .data/registry .data/console.sqlite3 .data/console.sqlite3-* \
	  .data/celerybeat-schedule* .data/processes
