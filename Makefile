# Talekeeper: `make run` to play on this machine, `make test` to check it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# One stamp per installed set, named by its files' checksum: a changed file installs again.
# The server's packages (requirements.txt) for `make run`; with the tests' and the bench's
# (requirements-dev.txt, which includes requirements.txt) for everything else.
STAMP := $(VENV)/.installed-$(shell cat requirements.txt | cksum | cut -d' ' -f1)
DEV_STAMP := $(VENV)/.installed-dev-$(shell cat requirements.txt requirements-dev.txt | cksum | cut -d' ' -f1)

# Python keeps each module's compiled bytecode (and pytest its rewritten test modules) in __pycache__.
# An environment saying PYTHONDONTWRITEBYTECODE makes every process compile every module again, and a
# `make test` starts hundreds (its workers, and the servers and commands its tests start): a third of a
# second each, and six seconds of each worker's collection.
unexport PYTHONDONTWRITEBYTECODE

# make test runs against the real servers; override for another machine.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/talekeeper
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15
# make run HOST=0.0.0.0 lets friends on your network in (README: "Playing with friends on your network").
HOST ?= 127.0.0.1
PORT ?= 8000
# The names `make run` answers to: this machine's LAN names and addresses when HOST is not loopback
# (campaign/lan.py: standard library only, so any python3 runs it).
# ALLOWED_HOSTS=... (in the environment or on the command line) replaces them; '*' allows any name.
RUN_ALLOWED_HOSTS = $(or $(ALLOWED_HOSTS),$(shell $(PYTHON) -m campaign.lan $(HOST)))

.PHONY: install install-dev run demo test test-postgres test-fast test-sqlite lint-imports openapi bench soak verifier clean

$(STAMP): requirements.txt
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

# Installs the server's packages too, so it stamps both sets.
$(DEV_STAMP): requirements.txt requirements-dev.txt
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	rm -f $(VENV)/.installed-*
	touch $(STAMP) $(DEV_STAMP)

install: $(STAMP)

install-dev: $(DEV_STAMP)

# One command on a laptop: SQLite, the in-memory channel layer, one daphne.
run: install
	DEBUG=1 $(PY) manage.py create_signing_key --exist-ok
	DEBUG=1 $(PY) manage.py migrate --noinput
	DEBUG=1 $(PY) manage.py demo
	@$(PYTHON) -m campaign.lan --urls $(HOST) $(PORT)
	DEBUG=1 ALLOWED_HOSTS='$(RUN_ALLOWED_HOSTS)' $(PY) -m daphne -b $(HOST) -p $(PORT) campaign.asgi:application

# Hypothesis budget (tests/conftest.py): `make test` searches as hard as CI does.
HYPOTHESIS_PROFILE ?= thorough

# The PostgreSQL part runs on this many pytest-xdist workers, each with its own test database and
# Redis database; a test file runs whole on one worker (tests/workers.py). Three on two cores: a
# third of the suite's time is spent waiting (on servers starting, sockets, pages), and a third
# worker fills it. The SQLite pass beside it takes one.
TEST_WORKERS ?= 3
SQLITE_WORKERS ?= 1
XDIST = -n $(TEST_WORKERS) --dist loadgroup

# The whole suite on PostgreSQL + Redis (the 20 slowest tests listed at the end) and, at the same
# time, the database suites again on SQLite (what `make run` uses): the SQLite pass shares nothing
# with the other (no Redis, its own database files) and fills the cores the PostgreSQL part leaves
# idle (docs/testing.md). Each part's output is printed whole when it ends.
test: install-dev
	$(MAKE) --no-print-directory -j2 --output-sync=target test-postgres test-sqlite

test-postgres: install-dev
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) HYPOTHESIS_PROFILE=$(HYPOTHESIS_PROFILE) $(PY) -m pytest -q --durations=20 $(XDIST)

# The quick Hypothesis budget: the searches already ran thoroughly on PostgreSQL; this pass checks
# that the same code works on the other database, not the rules again, so it leaves out the modules
# marked `one_database` (a verifier reading files, static files, declarations: nothing the engine changes).
test-sqlite: install-dev
	DATABASE_URL= REDIS_URL= HYPOTHESIS_PROFILE=quick $(PY) -m pytest -q -n $(SQLITE_WORKERS) --dist loadgroup -m "not postgres and not redis and not browser and not one_database" tests/campaign tests/sessions tests/contract

# Rules engines only (their tests, the shared rules contract, the import contracts): no database,
# no Django, the quick hypothesis budget, no `slow` simulations. Under a minute on a loaded 2-core machine.
# (-W: without the django plugin, pytest.ini's DJANGO_SETTINGS_MODULE is an unknown option.)
test-fast: install-dev
	HYPOTHESIS_PROFILE=quick $(PY) -m pytest -q -p no:django -W "ignore:Unknown config option" \
		-m "not slow" tests/rules tests/contract/test_rules.py

# The import contracts alone (also part of every test run).
lint-imports: install-dev
	$(VENV)/bin/lint-imports --no-cache

# The part of docs/openapi.json generated from the rules' declarations (docs/declaring-actions.md).
openapi: install
	$(PY) manage.py openapi

bench: install-dev
	$(PY) bench/run.py $(BENCH_ARGS)

# One daphne under a light load for two hours with its memory probed (bench/soak.py; SOAK_ARGS=--help).
soak: install-dev
	$(PY) bench/soak.py $(SOAK_ARGS)

# The members' standalone verifier, one file that runs with `python3 -I` and nothing installed:
# dist/talekeeper-verify.pyz (campaign/verifier.py; the same sources give the same bytes).
verifier:
	$(PYTHON) -m campaign.verifier

clean:
	rm -rf $(VENV) talekeeper.sqlite3* test_talekeeper.sqlite3* staticfiles dist
