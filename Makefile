# Build the bilingual site. Run `make` to list the targets.
#
# The lessons execute once (`gallery`); every language build and the message
# extraction then read what that run generated in docs/lessons/.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:
MAKEFLAGS += --no-builtin-rules

# The site's languages. The first is the source language; each other code has
# its catalogs in locale/<code>/LC_MESSAGES/. A new language is one more code
# here, then `make update-po` (see docs/translating.md).
LANGUAGES := en zh_CN

PYTHON ?= python3
VENV ?= .venv
BUILDDIR ?= _build
PORT ?= 8000
LIVELANG ?= en
SPHINXOPTS ?=
# The address the site is published at, such as
# https://example.org/double-backward/ (docs/building.md, "Publishing"). Set,
# each page gets a canonical link and absolute hreflang links, and the build
# writes sitemaps; unset, links stay relative and no sitemap is written.
SITE_URL ?=
# The GitHub repository the site is built from, such as
# https://github.com/<owner>/double-backward (docs/building.md, "Publishing").
# Set, each page links to its source, to Colab and to a new issue, and says
# when git last changed it; unset, none of this shows.
REPO_URL ?=

SOURCE_LANGUAGE := $(firstword $(LANGUAGES))
TRANSLATIONS := $(filter-out $(SOURCE_LANGUAGE),$(LANGUAGES))
BIN := $(abspath $(VENV))/bin
comma := ,
empty :=
space := $(empty) $(empty)
SPHINXFLAGS = -W --keep-going -q -c . \
  -D site_languages=$(subst $(space),$(comma),$(LANGUAGES)) $(SPHINXOPTS)
# sphinx-build -j for a language building alone (SPHINXJOBS), and for each
# language while they build side by side (SIDE_BY_SIDE_JOBS); see
# README.md, "Speed", for the measurements behind them.
SPHINXJOBS ?= auto
SIDE_BY_SIDE_JOBS ?= 2
SPHINXBUILD = $(BIN)/sphinx-build -j $(SPHINXJOBS) $(SPHINXFLAGS)
GALLERY_FLAGS ?=

# Reproducible output: the time of the last commit stands for "now".
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 315532800)
export SOURCE_DATE_EPOCH
export PYTHONHASHSEED := 0

.PHONY: help
help: ## Show this list
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) \
	  | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

# -- Set-up ---------------------------------------------------------------

# The system packages, listed once, as pairs of a command and the Debian
# package that has it. tools/require installs the missing ones when run as
# root (CI, the GitHub workflow), and otherwise names the command to run.
# Building: Graphviz draws the lessons' graphs, gettext merges the catalogs.
BUILD_PACKAGES := dot graphviz msgmerge gettext msgcat gettext msgfmt gettext msgattrib gettext
# The Nu HTML Checker (vnu.jar from npm, pinned in package-lock.json) runs on Java.
VNU_PACKAGES := npm npm java default-jre-headless
# Testing adds Chromium, fontconfig for its fonts, and the checker.
TEST_PACKAGES := chromium chromium fc-list fontconfig $(VNU_PACKAGES)

# The stamp is named after the requirements' hash: a fresh clone with the same
# pins reuses an existing environment (whatever the file times), and a changed
# pin reinstalls.
REQUIREMENTS_HASH := $(shell sha256sum requirements.txt | cut -c1-16)
INSTALLED := $(VENV)/.installed-$(REQUIREMENTS_HASH)

$(INSTALLED):
	$(PYTHON) -m venv $(VENV) || { echo "error: '$(PYTHON) -m venv' failed; install Python's venv module (Debian: sudo apt-get install python3-venv)" >&2; exit 1; }
	$(BIN)/python -m pip install --quiet -r requirements.txt
	rm -f $(VENV)/.installed-*
	touch $@

.PHONY: system
system:
	@tools/require $(BUILD_PACKAGES)

# The Nu HTML Checker that the tests run on every built page (npm, pinned in
# package-lock.json; it runs on Java).
VNU := node_modules/vnu-jar/build/dist/vnu.jar

$(VNU): package.json package-lock.json
	@tools/require $(VNU_PACKAGES)
	npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
	touch $@

.PHONY: setup
setup: $(INSTALLED) system

# The language codes, SITE_URL and REPO_URL, checked before anything is built.
.PHONY: languages
languages: setup
	@$(BIN)/python -m tools.site check $(if $(SITE_URL),--site-url "$$SITE_URL") \
	  $(if $(REPO_URL),--repo-url "$$REPO_URL") $(LANGUAGES)

# -- Building ----------------------------------------------------------------

.PHONY: gallery
gallery: languages ## Execute the lessons whose source changed
	@$(BIN)/python -m tools.gallery $(GALLERY_FLAGS)

# The lessons execute once (gallery); then the languages build side by side,
# each a plain sphinx-build, and a translation's catalogs are checked while
# the lessons run.
.PHONY: html
html: ## Build the site in every language
	@$(MAKE) --no-print-directory --output-sync=target -j$(words $(LANGUAGES)) \
	  SPHINXJOBS=$(SIDE_BY_SIDE_JOBS) $(addprefix html-,$(LANGUAGES)) landing

.PHONY: html-en html-zh
html-en: ## Build the English pages into _build/html/en
html-zh: html-zh_CN ## Build the Chinese pages into _build/html/zh_CN

define language_rules
.PHONY: html-$(1) catalogs-$(1)
html-$(1): gallery $(if $(filter $(1),$(SOURCE_LANGUAGE)),,catalogs-$(1))
	@$$(SPHINXBUILD) -b html -D language=$(1) $$(call baseurl,$(1)) -d $$(BUILDDIR)/doctrees/$(1) docs $$(BUILDDIR)/html/$(1)
	@echo "built $$(BUILDDIR)/html/$(1)/index.html"

catalogs-$(1): languages
	@$$(BIN)/python -m tools.catalogs validate $(1)
endef
$(foreach lang,$(LANGUAGES),$(eval $(call language_rules,$(lang))))

.PHONY: landing
landing: languages
	@$(BIN)/python -m tools.site root --out $(BUILDDIR)/html $(if $(SITE_URL),--site-url "$$SITE_URL") $(LANGUAGES)

# SITE_URL and REPO_URL reach the commands (and conf.py) through the
# environment, never through the command line that make writes, so that no
# character of them is run as shell.
# A language's pages live in its folder: its html_baseurl is SITE_URL/<code>/.
baseurl = $(if $(SITE_URL),-D "html_baseurl=$${SITE_URL%/}/$(1)/" \
  -D sitemap_locales=$(subst $(space),$(comma),$(LANGUAGES)))

# The lessons' notebooks as Colab opens them from the repository,
# <language>/<lesson>.ipynb: .github/workflows/site.yml publishes this folder
# on the branch that conf.py names (notebooks_branch).
.PHONY: notebooks
notebooks: ## Gather the built notebooks into _build/notebooks/<language>/ (after make html)
	@test -f $(BUILDDIR)/html/index.html || { echo "error: nothing built yet; run make html first" >&2; exit 1; }
	@rm -rf $(BUILDDIR)/notebooks
	@$(foreach lang,$(LANGUAGES),mkdir -p $(BUILDDIR)/notebooks/$(lang) && \
	  cp $(BUILDDIR)/html/$(lang)/_downloads/*/[0-9][0-9]_*.ipynb $(BUILDDIR)/notebooks/$(lang)/;)
	@echo "gathered $$(ls $(BUILDDIR)/notebooks/*/*.ipynb | wc -l) notebooks into $(BUILDDIR)/notebooks"

.PHONY: html-noplot
html-noplot: ## Build every language without executing any lesson
	@$(MAKE) --no-print-directory html GALLERY_FLAGS=--no-plot

# -- Translation -------------------------------------------------------------

.PHONY: gettext
gettext: gallery ## Extract the English messages into _build/gettext
	@rm -rf $(BUILDDIR)/gettext
	$(SPHINXBUILD) -b gettext -d $(BUILDDIR)/doctrees/gettext docs $(BUILDDIR)/gettext

.PHONY: update-po
update-po: gettext ## Refresh locale/ from the sources, keeping every translation
	@$(BIN)/python -m tools.translators update-po $(TRANSLATIONS)

.PHONY: prune-po
prune-po: $(addprefix catalogs-,$(TRANSLATIONS)) ## Drop old translations (#~) from the fully translated catalogs
	@$(BIN)/python -m tools.translators prune-po $(TRANSLATIONS)

.PHONY: stat
stat: languages $(addprefix catalogs-,$(TRANSLATIONS)) ## Show translation progress per catalog
	@# sphinx-intl exits 1 while work remains: that is the news, not an error
	@# (a broken catalog has already stopped at catalogs-<code>, naming its line).
	@# Its parser (babel 2.18) cannot read the "#|" lines (the previous English)
	@# of a fuzzy entry, which msgmerge writes for translators, and warns about
	@# each: those two warnings are dropped, any other message is shown.
	@{ $(BIN)/sphinx-intl stat -d locale $(addprefix -l ,$(TRANSLATIONS)) || true; } \
	  | grep -Ev "^WARNING: (Problem on line [0-9]+: '\\| |Unknown or misformatted keyword$$)" \
	  | sort | awk \
	  '{ print; t += $$2; f += $$4; u += $$6 } END { n = t + f + u; \
	  printf "in all: %.1f %% translated, %d fuzzy, %d untranslated\n", n ? 100 * t / n : 100, f, u }'

.PHONY: inventory
inventory: setup ## Write docs/_inventories/pytorch.inv from the list pytorch.txt
	$(BIN)/sphobjinv convert zlib --quiet --overwrite docs/_inventories/pytorch.txt docs/_inventories/pytorch.inv

.PHONY: wrap
wrap: setup ## Re-wrap the catalogs with powrap
	@find locale -name '*.po' -print0 | xargs -0 -r $(BIN)/python -m powrap --quiet

# -- Reading and writing -----------------------------------------------------

.PHONY: serve
serve: ## Serve _build/html on http://127.0.0.1:PORT (PORT=8000)
	@test -f $(BUILDDIR)/html/index.html || { echo "error: nothing built yet; run make html first" >&2; exit 1; }
	$(BIN)/python -m http.server --bind 127.0.0.1 --directory $(BUILDDIR)/html $(PORT)

.PHONY: livehtml
livehtml: gallery ## Rebuild one language on every save (LIVELANG=en)
	$(BIN)/sphinx-autobuild -c . -D language=$(LIVELANG) -d $(BUILDDIR)/doctrees/live-$(LIVELANG) \
	  --host 127.0.0.1 --port $(PORT) \
	  --watch gallery --watch locale --watch ext --watch conf.py \
	  --ignore '*/docs/lessons/*' --ignore '*.mo' \
	  --pre-build '$(BIN)/python -m tools.gallery' \
	  $(if $(filter $(LIVELANG),$(SOURCE_LANGUAGE)),,--pre-build '$(BIN)/python -m tools.catalogs validate $(LIVELANG)') \
	  docs $(BUILDDIR)/live/$(LIVELANG)

# -- Quality -------------------------------------------------------------------

.PHONY: check
check: languages check-deploy ## Fast static checks: lint, catalogs (syntax, markup, wrapping), hosting files
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@$(BIN)/python -m tools.catalogs check $(TRANSLATIONS)
	@find locale -name '*.po' -print0 | xargs -0 -r $(BIN)/python -m powrap --check --quiet \
	  || { echo "error: run \`make wrap\` to wrap the catalogs above as powrap does" >&2; exit 1; }

# The files that put the site online, checked with no network: the GitHub
# workflow with actionlint and zizmor (actions pinned by commit, permissions,
# injection), and both files against their published schemas, which
# check-jsonschema ships.
WORKFLOWS := $(wildcard .github/workflows/*.yml)

.PHONY: check-deploy
check-deploy: setup ## Check the GitHub workflow and .readthedocs.yaml offline
	$(BIN)/actionlint $(WORKFLOWS)
	$(BIN)/zizmor --offline --quiet $(WORKFLOWS)
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows $(WORKFLOWS)
	$(BIN)/check-jsonschema --builtin-schema vendor.readthedocs .readthedocs.yaml

.PHONY: test
test: setup test-tools ## Run every test (builds the site in a temporary folder)
	$(BIN)/python -m pytest

# The tests' own tools: Chromium, and the Nu HTML Checker (npm, Java). As root
# or in CI they are installed; otherwise the tests that need a missing one are
# skipped, naming the command that installs it (tests/conftest.py, require).
TEST_TOOLS_OPTIONAL := $(if $(CI),,$(filter-out 0,$(shell id -u)))

.PHONY: test-tools
test-tools:
	@$(if $(TEST_TOOLS_OPTIONAL),,tools/require $(TEST_PACKAGES))
	@if command -v npm >/dev/null && command -v java >/dev/null; then $(MAKE) --no-print-directory $(VNU); fi

.PHONY: validate
validate: $(VNU) ## Check the built pages with the Nu HTML Checker (after make html)
	@test -f $(BUILDDIR)/html/index.html || { echo "error: nothing built yet; run make html first" >&2; exit 1; }
	java -jar $(VNU) --errors-only --skip-non-html $(BUILDDIR)/html

.PHONY: bench
bench: setup ## Measure build speed and page weight into _build/bench (QUICK=1: one run)
	$(BIN)/python -m tools.bench $(if $(QUICK),--quick)

.PHONY: clean
clean: ## Remove every build output (keeps .venv and node_modules)
	rm -rf $(BUILDDIR) docs/lessons
