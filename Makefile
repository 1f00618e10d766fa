# citegraph — the two commands are `make demo` and `make test`; the rest are their parts.
PYTHON       ?= python3
VENV         ?= .venv
BIN          := $(VENV)/bin
export CITEGRAPH_DATA ?= ../shared/data
export CITEGRAPH_DB   ?= var/citegraph.db
# FULL=1 builds every step at full scale; the default scope is documented in README.md.
FULL         ?=
# Test processes (pytest-xdist): the suite's files are spread over them, each file whole in one process (its
# module fixtures built once). 2 matches the CI machine's cores; TEST_WORKERS=0 runs in this process.
TEST_WORKERS ?= 2

.PHONY: demo test install lint-tools api-assets browser-tools schema build serve lint clean

demo: install build serve

test: install lint-tools browser-tools
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

install: $(VENV)/.installed api-assets

# The torch pin goes in as a constraint: only torch==2.13.0 resolves to the local CPU wheel.
# The spark extra (pyspark) is for the Spark co-citation tests; they skip with the reason where Java 17 is missing.
$(VENV)/.installed: pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,spark]'
	touch $@

# Neo4j's own Cypher linter, used by the tests on cypher/neo4j (pinned in cypher/lint/package-lock.json).
lint-tools: cypher/lint/node_modules/.installed

cypher/lint/node_modules/.installed: cypher/lint/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix cypher/lint --no-audit --no-fund --loglevel=error && touch $@; \
	else \
		echo "npm not found: the Neo4j Cypher lint tests will be skipped"; \
	fi

# Browser assets the API serves itself (GraphiQL, React, sigma.js, graphology), so its pages work offline;
# pinned in api/static/package-lock.json, installed into api/static/node_modules (never committed).
api-assets: api/static/node_modules/.installed

api/static/node_modules/.installed: api/static/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix api/static --no-audit --no-fund --loglevel=error && touch $@; \
	else \
		echo "npm not found: GraphiQL and the dashboard will not find their scripts (/assets)"; \
	fi

# Headless Chromium and its chromedriver (one Debian source package, so their versions match) for the browser
# tests (tests/api/test_browser.py, tests/api/test_dashboard.py skip with the reason when absent).
browser-tools:
	@(command -v chromium && command -v chromedriver) >/dev/null 2>&1 \
		|| (apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 \
		|| (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium chromium-driver >/dev/null 2>&1)) \
		|| echo "chromium/chromedriver could not be installed: the browser tests will be skipped"

# api/schema.graphql: the GraphQL schema as SDL, for clients and review (tests/api/test_schema_file.py keeps it current).
schema: install
	$(BIN)/strawberry export-schema api.schema:schema --output api/schema.graphql

# Some records of the real corpora are broken (an <S sid=""> element, a link to an empty sentence):
# the build skips them and reports every one under var/rejects/ rather than stopping.
# `citegraph build` runs the steps (ingest all, compute all, compute index, train reranker, linkage train;
# FULL=1 adds compute linkage) with one line per step and a table of their times at the end. A build that
# fails resumes at the failed step; a second build over the same data and code skips every step (each
# step's fingerprint is kept in var/citegraph.db.build.json). What the default build leaves out and why:
# README.md, "Quick start".
build: install
	$(BIN)/citegraph build $(if $(FULL),--full) --times-json var/build-times.json

# CITEGRAPH_WARM=1: the models load at start-up (in the background), so the first recommendation is not slow.
# --complete: while it serves, the server computes what the default build left for later (the papers beyond
# the most cited, h_θ) and moves recommendation to the new index; /readyz says how far it is.
serve: install
	CITEGRAPH_WARM=$${CITEGRAPH_WARM:-1} $(BIN)/citegraph serve --complete

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy

clean:
	rm -rf var/citegraph.db var/citegraph.db.* var/rejects
