# The documented commands. `make test` works on a fresh machine: it builds the venv,
# installs everything pinned in constraints.txt, starts what is missing and runs every suite.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
PACKAGES := libs/sdk libs/common libs/testing $(sort $(wildcard services/*)) clients/python examples/acme_jobs
STAMP := $(VENV)/.installed
WORKERS ?= 2
SCHEDULERS ?= 1
HANDLERS ?=
# Test processes per suite (pytest-xdist); each has its own MongoDB stand-in and session fixtures.
PYTEST_WORKERS ?= 4
UI := frontend
UI_STAMP := $(UI)/node_modules/.installed

.PHONY: help install infra lint format typecheck test test-unit test-integration test-e2e test-compose \
        ui ui-install test-ui dev demo bench bench-projects bench-compare bench-overload bench-retention bench-store-upkeep migrate openapi topology-definitions clean

help:
	@echo "make dev      the whole stack as supervised local processes (WORKERS=2 SCHEDULERS=1 HANDLERS=)"
	@echo "make ui       build the web UI (frontend/dist), served by the gateway at /"
	@echo "make test     install, start dependencies, lint and run unit, integration, e2e"
	@echo "make demo     seed demo jobs into a running stack"
	@echo "make migrate  apply the PostgreSQL migrations"
	@echo "make bench    pipeline throughput and latency figures (N=2000 WORKERS=2)"
	@echo "make bench-projects ten projects sharing the workers, half of their queues limited"
	@echo "make bench-compare  the same beside Celery and Dramatiq, with the ratios"
	@echo "make bench-overload twice capacity for DURATION=120 s, then the drain and memory"
	@echo "make chaos    one fault per round under load, invariants checked (ROUNDS=10 SEED=)"

$(STAMP): constraints.txt $(foreach p,$(PACKAGES),$(p)/pyproject.toml)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt $(foreach p,$(PACKAGES),-e $(p)[test])
	touch $(STAMP)

install: $(STAMP)

# The web UI: npm packages from the committed lock file, then the build the gateway serves.
$(UI_STAMP): $(UI)/package.json $(UI)/package-lock.json
	cd $(UI) && npm ci --no-audit --no-fund
	touch $(UI_STAMP)

ui-install: $(UI_STAMP)

ui: ui-install
	cd $(UI) && npm run build

infra:
	bash scripts/ensure-infra.sh

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy -p jobs_sdk -p jobs_common -p jobs_testing $(foreach s,$(sort $(notdir $(wildcard services/*))),-p jobs_$(s)) -p jobs_client -p acme_jobs

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test-unit: install
	$(BIN)/pytest -m unit -q libs/sdk/tests libs/common/tests services clients/python/tests examples/acme_jobs/tests tests/deploy tests/compose tests/docs tests/chaos tests/architecture

# docker-compose.yml as Compose resolves it with .env.example (no Docker engine needed;
# `make infra` installs Debian's docker-compose). tests/deploy runs the same check.
.PHONY: compose-config
compose-config:
	docker-compose --env-file .env.example config

# In PYTEST_WORKERS processes (every test has a database and vhost of its own; worksteal: a
# process that runs out takes tests queued for a busy one, so the long ones do not end the run
# on one process); the few marked serial, bound to the machine's pace, run alone afterwards.
test-integration: install infra
	$(BIN)/pytest -m "integration and not serial" -q -n $(PYTEST_WORKERS) --dist worksteal --durations=15 libs/common/tests services
	$(BIN)/pytest -m "integration and serial" -q libs/common/tests services

# Lint, API types against the gateway's contract, component tests, then the build the
# browser tests of test-e2e drive (`npm run build` type-checks first: tsc -b).
test-ui: ui-install
	cd $(UI) && npm run lint && npm run check:api && npm test
	cd $(UI) && npm run build

# The end-to-end files go whole to each of two processes (one stack per process), with the
# short chaos pass beside them (one small round per fault kind on infrastructure of its own,
# docs/reliability.md; scripts/beside_chaos.sh prints its output last).
# schemathesis through the gateway: 12 examples per operation and mode (FUZZ_MAX_EXAMPLES).
E2E := FUZZ_MAX_EXAMPLES=$${FUZZ_MAX_EXAMPLES:-12} $(BIN)/pytest -m e2e -q -n 2 --dist loadfile --durations=25 tests/e2e

test-e2e: install infra
	bash scripts/beside_chaos.sh "$(E2E)"

# The UI suite (npm ci, then its tests and the build the browser tests drive) beside the
# Python install followed by lint and the unit tests side by side (scripts/together.sh prints
# their output in turn), then the integration tests, then the end-to-end files with the chaos
# pass beside them.
test: infra
	bash scripts/together.sh "$(MAKE) --no-print-directory install && bash scripts/together.sh '$(MAKE) --no-print-directory lint' '$(MAKE) --no-print-directory test-unit'" "$(MAKE) --no-print-directory test-ui"
	$(MAKE) --no-print-directory test-integration
	bash scripts/beside_chaos.sh "$(E2E)"

# docker-compose.yml built and run for real under podman (no Docker engine, no registry):
# Debian's podman, podman-compose and debootstrap, local base and infrastructure images (cached
# after the first run), then tests/compose: start order through the health checks, a smoke run
# through the gateway, --scale worker=3 scheduler=2, a killed worker, down -v. docs/operations.md,
# "The compose stack under podman".
test-compose: install infra
	bash scripts/podman/ensure-podman.sh
	bash scripts/podman/build-base-images.sh
	$(BIN)/pytest -m compose -q -s tests/compose

migrate: install
	$(PY) -m jobs_scheduler.migrate
	$(PY) -m jobs_gateway.migrate

# The public API contract the gateway serves (services/gateway/.../openapi/public.json),
# assembled from the backends' schemas; a gateway test fails when it is stale.
openapi: install
	$(PY) scripts/public_openapi.py

topology-definitions: install
	$(PY) -m jobs_common.topology_definitions > infra/rabbitmq/definitions.json

dev: install infra ui
	WORKERS=$(WORKERS) SCHEDULERS=$(SCHEDULERS) HANDLERS=$(HANDLERS) $(PY) scripts/dev.py

demo: install
	$(PY) scripts/demo.py

# Figures, not timed assertions: N jobs (default 2000) through a fresh stack with WORKERS workers,
# every phase on the empty stores, then again with HISTORY_JOBS (1,000,000) finished jobs in
# PostgreSQL and HISTORY_SUBMISSIONS (200,000) submissions in MongoDB loaded (HISTORY=0: the
# empty stores only); services at their default log level as `make dev` runs them (LOG_LEVEL=
# WARNING to change). Exits non-zero when a noop job did not succeed on its first attempt.
bench: install infra
	N=$${N:-2000} WORKERS=$(WORKERS) $(PY) scripts/bench_pipeline.py
	N=$${N:-2000} WORKERS=$(WORKERS) $(PY) scripts/bench_projects.py

# Ten projects with a queue each, half limited to 2 jobs in flight, a batch each at once:
# throughput, each project's span, rate and share, and the most of its jobs at once (docs/
# flow-control.md). Exits non-zero when a limit was exceeded or a job needed a second attempt.
bench-projects: install infra
	N=$${N:-2000} WORKERS=$(WORKERS) $(PY) scripts/bench_projects.py

# Celery and Dramatiq are benchmark-only dependencies (scripts/requirements-bench.txt);
# ours as `make bench` runs it (empty stores, then with history: both blocks' ratios against
# the same Celery and Dramatiq runs); REPEAT=k runs ours, Celery and Dramatiq k times
# interleaved (a history load per round of ours) and prints the median ratios.
bench-compare: install infra
	$(PY) -m pip install --quiet --disable-pip-version-check -r scripts/requirements-bench.txt
	N=$${N:-2000} REPEAT=$${REPEAT:-1} WORKERS=$(WORKERS) $(PY) scripts/bench_compare.py

# Capacity measured first (or CAPACITY=jobs/s), then FACTOR (2.0) x capacity offered for
# DURATION (120) s as an open loop, at most MAX_IN_FLIGHT (512) requests in flight; exits
# non-zero when an accepted job did not succeed exactly once, a handler ran more often than
# its job's attempts, or the backlog did not drain.
bench-overload: install infra
	WORKERS=$(WORKERS) $(PY) scripts/bench_overload.py

# Retention under load (scripts/bench_retention.py): a scratch database with JOBS (1,000,000)
# finished jobs over DAYS (30), pruned while a writer runs; prints jobs/s pruned, the writer's
# latency, lock waits and dead tuples.
bench-retention: install infra
	$(PY) scripts/bench_retention.py

# Console reads after a big prune, before and after the scheduler's VACUUM (docs/operations.md,
# "After a prune"; JOBS=1000000 DAYS=30).
bench-store-upkeep: install infra
	$(PY) scripts/bench_store_upkeep.py

# Reads with history (scripts/bench_history.py): the console's reads through the gateway as a
# member of one project, a member of ten and the admin (median of 3, p95 of 20 calls), on a
# fresh stack's empty stores, then with HISTORY_JOBS (1,000,000) jobs over HISTORY_PROJECTS
# (100) projects and HISTORY_SUBMISSIONS (200,000) submissions loaded; exits non-zero when a
# read does not answer 200 or a listing shows another project's rows.
.PHONY: bench-history
bench-history: install infra
	$(PY) scripts/bench_history.py

# Reads at scale (scripts/bench_read_scale.py, docs/scaling.md): JOBS (10,000,000) jobs loaded
# into a scratch database (about 15 minutes here; DATABASE=name keeps it for the next run), then
# each console read through the dashboard's reader, median and p95 of CALLS (20).
.PHONY: bench-reads
bench-reads: install infra
	$(PY) scripts/bench_read_scale.py

# The jobs list's search at JOBS (1,000,000) jobs (scripts/bench_search.py, docs/performance.md,
# "Searching jobs"): an id prefix and payload fields through the dashboard's reader, median and
# p95 of CALLS (20), the payload index's build time and size, and its cost on the write path.
.PHONY: bench-search
bench-search: install infra
	$(PY) scripts/bench_search.py

# Capacity (scripts/bench_capacity.py, docs/scaling.md): the pipeline bench at four points,
# WORKERS x SCHEDULERS = 1x1, 2x1, 2x2, 1x2 (N jobs per phase, 2000); prints jobs/s and
# CPU-seconds per 1,000 jobs per service at each, then replicas per service for 1k, 10k and
# 50k jobs/s and the model checked against the points.
.PHONY: bench-capacity
bench-capacity: install infra
	N=$${N:-2000} $(PY) scripts/bench_capacity.py

# The chaos suite (scripts/chaos.py, docs/reliability.md): its own RabbitMQ node, PostgreSQL
# cluster and MongoDB stand-in, the stack with 2 schedulers and 3 workers under a mixed load,
# one fault per round (FAULTS=kind,...), the invariants after each; exits non-zero when one
# broke. ROUNDS (10), SEED (printed per round: `make chaos ROUNDS=1 SEED=<s> FAULTS=<kind>`).
.PHONY: chaos
chaos: install infra
	$(PY) scripts/chaos.py

clean:
	rm -rf $(VENV) var
