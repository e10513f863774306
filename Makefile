# The Redis operator, chapter by chapter. `make help` lists the targets.

# ---- pinned versions --------------------------------------------------------
# Kubernetes for the local cluster and the offline kind node image (built
# from Go sources, see scripts/build-kubernetes.sh) and the etcd it pins.
KUBERNETES_VERSION ?= v1.37.1
ETCD_VERSION ?= v3.7.0
CONTROLLER_TOOLS_VERSION ?= v0.23.0
GOLANGCI_LINT_VERSION ?= v2.15.0
# The Ginkgo CLI and kind's base files always match the versions in go.mod.
GINKGO_VERSION := $(shell go list -m -f '{{.Version}}' github.com/onsi/ginkgo/v2 2>/dev/null)
KIND_VERSION := $(shell go list -m -f '{{.Version}}' sigs.k8s.io/kind 2>/dev/null)
# The offline kind node image (make kind-node-image): the node runtime at
# the versions kind's base image uses, on Debian packages.
CONTAINERD_VERSION ?= v2.3.4
RUNC_VERSION ?= v1.4.3
CNI_PLUGINS_VERSION ?= v1.9.1
DEBIAN_SUITE ?= bookworm
DEBIAN_MIRROR ?= http://deb.debian.org/debian
KIND_OFFLINE_NODE_IMAGE ?= redis-operator/kind-node:$(KUBERNETES_VERSION)
# The image the operator's pods run by default; the offline node image
# provides it (from Debian's redis-server).
REDIS_IMAGE := $(shell sed -n 's/^[[:space:]]*DefaultImage = "\(.*\)"/\1/p' api/v1/redis_types.go)

# ---- paths ------------------------------------------------------------------
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
BIN := $(CURDIR)/bin
CONTROLLER_GEN := $(BIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
GINKGO := $(BIN)/ginkgo-$(GINKGO_VERSION)
GOLANGCI_LINT := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
# Built Kubernetes binaries are cached by version outside the checkout, so
# every clone on the machine shares them. ($(value X) reads the
# environment's X, if set, without make --warn-undefined-variables's
# warning.)
CACHE_DIR ?= $(or $(value XDG_CACHE_HOME),$(HOME)/.cache)/redis-operator
KUBERNETES_BIN := $(CACHE_DIR)/kubernetes/$(KUBERNETES_VERSION)/bin
# Everything the targets make but bin/: the clusters' state, logs, built
# manifests. Another OUTPUT_DIR is another test cluster (make prove-chapters
# runs its lanes so); the suites read it from the environment.
OUTPUT_DIR ?= $(CURDIR)/_output
LOCAL_CLUSTER_DIR := $(OUTPUT_DIR)/local-cluster
ENVTEST_CLUSTER_DIR := $(OUTPUT_DIR)/envtest-cluster
KIND_CLUSTER_DIR := $(OUTPUT_DIR)/kind-cluster
# kind, local, existing, or auto: kind when a Docker daemon answers, else local.
CLUSTER ?= auto
# `make cluster-up` writes the chosen backend and its KUBECONFIG here.
CLUSTER_ENV := $(OUTPUT_DIR)/cluster.env
# The ClusterRole generated from each chapter's RBAC markers
# (chapters/NN-slug/role.yaml; config/rbac/role.yaml is the shipped chapter's).
ROLE_NAME := redis-operator
# The operator's main package (scripts/deploy.mk builds it too; a chapter
# branch's is ./cmd).
OPERATOR_MAIN := ./operator
# The table of chapters (chapters/chapters.go), as Make variables:
# CHAPTER_NAMES (NN-slug), SHIPPED_CHAPTER (the chapter that the operator
# runs unless told otherwise, that make run, make deploy and make
# diff-chapter take without N, and whose role and webhook configuration
# are config/'s), REWRITES (no lesson spec: their proof is their suite
# passing and their mutants killed), IN_CLUSTER_CHAPTERS,
# WEBHOOK_CHAPTERS, FAULTS_CHAPTERS and PROVED_BY_MUTANTS. make manifests
# generates it from the table.
include scripts/chapters.mk
CHAPTERS := $(CHAPTER_NAMES)
LATEST_CHAPTER := $(words $(CHAPTERS))
shipped_dir = $(call chapter_name,$(SHIPPED_CHAPTER))

export OUTPUT_DIR KUBERNETES_VERSION CLUSTER LOCAL_CLUSTER_DIR ENVTEST_CLUSTER_DIR KIND_CLUSTER_DIR KIND_OFFLINE_NODE_IMAGE OPERATOR_CHAPTER
# The suites and `make run` use the kubectl built at the cluster's version.
export KUBECTL ?= $(KUBERNETES_BIN)/kubectl

# ---- what runs, and how -----------------------------------------------------
# Every variable a rule's prerequisites name is defined above the rules:
# Make expands a rule's prerequisites when it reads the rule, so one
# defined below would be empty there (tests/makefile checks it).
# The CRD that chapter CRD_CHAPTER installs: config/crd (generated from
# api/v1), or the chapter's crd/, which adds to it (chapter 11 on); make
# install builds it in CRD_BUILD_DIR, beside a copy of config/crd/bases.
# A variant (VARIANT=dir) installs its own crd/ if it has one.
CRD_CHAPTER = $(or $(OPERATOR_CHAPTER),$(CHAPTER))
crd_kustomization = $(firstword $(if $(VARIANT),$(wildcard $(VARIANT)/crd)) $(wildcard $(addprefix chapters/,$(addsuffix /crd,$(call chapter_name,$(CRD_CHAPTER))))) config/crd)
CRD_BUILD_DIR := $(OUTPUT_DIR)/crd
NO_COLOR ?= $(if $(CI),true,false)
# A run that takes longer than this is stuck; Ginkgo then reports where.
# One ginkgo command runs every suite of make test-chapters, and the timeout
# bounds them together: about 22 minutes on kind with chapters 12 to 14.
GINKGO_FLAGS ?= -v --timeout=60m --no-color=$(NO_COLOR)
# How many processes run a suite's specs (Ginkgo's --procs): the specs
# that are not Serial run side by side, each in its own namespace, against
# one operator; most of their time is waiting for the cluster. 1 runs
# every spec in turn.
E2E_PROCS ?= 4
# A variant of chapter CHAPTER (VARIANT=dir, a directory of this repository
# holding that chapter's package with changes: a mutant, or your own
# version): make build-variant builds the operator with it in place of the
# chapter's package (scripts/variant) into bin/operator-variant, and the
# role its markers ask for into VARIANT_OUT. test-chapter and run use it;
# prove-chapter proves the lesson against it in place of chapter N-1.
VARIANT ?=
VARIANT_OUT ?= $(OUTPUT_DIR)/variant
VARIANT_BIN ?= $(BIN)/operator-variant
# A variant of a chapter whose suite runs the test build that injects
# faults (FAULTS_CHAPTERS; make build-faults) is built that way too, into
# $(VARIANT_BIN)-faults; so is any variant with FAULTS set.
FAULTS ?=
# A variant is built without the symbol table and debug information: a
# quarter less linking, for each of the mutants that make mutants builds.
VARIANT_GOFLAGS ?= -ldflags='-s -w'
# RACE=1 builds the operator under test (bin/operator, its test build that
# injects faults, a variant, a mutant) with Go's race detector (go build
# -race, which needs cgo and gcc): a data race the suites provoke is
# written in the operator's log, and the spec running then fails on it
# (tests/framework/death.go). CI proves every chapter that way.
RACE ?=
operator_build = $(if $(RACE),CGO_ENABLED=1 go build -race,go build)
build_under_test = $(if $(VARIANT),build-variant,build)
operator_under_test = $(if $(VARIANT),$(VARIANT_BIN),$(BIN)/operator)
# What a suite run against a variant needs: its role, its test build that
# injects faults (for the suites that run one), and VARIANT for make
# install (its crd/) and make docker-build (its overlay).
variant_env = $(if $(VARIANT),VARIANT='$(VARIANT)' OPERATOR_ROLE=$(VARIANT_OUT)/role.yaml OPERATOR_FAULTS_BIN=$(VARIANT_BIN)-faults)

# bin/prove against the cluster; the targets add --chapter. A variant is
# built (make build-variant) into bin/operator-variant, with its role in
# VARIANT_OUT; each mutant into a directory of its own under the mutants'
# (prove builds them ahead of their runs).
prove = $(with_kubeconfig) OPERATOR_BIN=$(BIN)/operator $(BIN)/prove --ginkgo $(GINKGO) --procs $(E2E_PROCS) $(if $(PROVE_TIMEOUT),--eventually-timeout $(PROVE_TIMEOUT)) \
  --output-dir $(output_dir)/prove --mutants-dir $(output_dir)/mutants --variant-bin $(VARIANT_BIN) --variant-role $(VARIANT_OUT)/role.yaml

# `make test-chapter 5`, `make prove-chapter 5`, `make diff-chapter 5`,
# `make run 5`, `make try-it 5`, `make install 5`, `make deploy 11` and
# `make exercise 5`: the word after the target is the chapter number
# (CHAPTER=5 works too).
CHAPTER_ARG :=
MUTANT_ARG :=
ifneq ($(filter test-chapter prove-chapter diff-chapter run try-it build-variant mutants mutant install deploy exercise check hint solution exercise-spec check-spec hint-spec,$(firstword $(MAKECMDGOALS))),)
  CHAPTER_ARG := $(word 2,$(MAKECMDGOALS))
  ifneq ($(CHAPTER_ARG),)
    $(eval $(CHAPTER_ARG):;@:)
  endif
endif
# `make mutant 5 NAME`: the third word names the mutant.
ifeq ($(firstword $(MAKECMDGOALS)),mutant)
  MUTANT_ARG := $(word 3,$(MAKECMDGOALS))
  ifneq ($(MUTANT_ARG),)
    $(eval $(MUTANT_ARG):;@:)
  endif
endif
MUTANT ?= $(MUTANT_ARG)
CHAPTER ?= $(or $(CHAPTER_ARG),$(SHIPPED_CHAPTER))
NN = $(call two_digits,$(CHAPTER))

# The chapters whose suites `make test-chapters` runs and whose "Try it"
# `make try-it` runs (with no chapter named): every one unless told, as in
# TEST_CHAPTERS="10 11 12" (CI splits them between the two backends).
TEST_CHAPTERS ?= $(shell seq 1 $(LATEST_CHAPTER))
test_chapters_nn = $(shell printf '%02d ' $(TEST_CHAPTERS))
# As a regular expression for `go test -run`: (10|11|12).
test_chapters_re = ($(subst $(space),|,$(strip $(test_chapters_nn))))
space := $(subst ,, )
.PHONY: check-test-chapters
check-test-chapters:
	@for n in $(TEST_CHAPTERS); do \
	  if ! [[ $$n =~ ^[0-9]+$$ ]] || (( 10#$$n < 1 || 10#$$n > $(LATEST_CHAPTER) )); then \
	    echo "error: TEST_CHAPTERS must list chapter numbers from 1 to $(LATEST_CHAPTER), got '$(TEST_CHAPTERS)'" >&2; exit 2; fi; done; \
	[[ -n '$(strip $(TEST_CHAPTERS))' ]] || { echo "error: TEST_CHAPTERS is empty" >&2; exit 2; }

# check-chapter-MIN fails unless CHAPTER is a chapter number >= MIN.
# (Not .PHONY: make skips pattern rules for phony targets.)
check-chapter-%:
	@if ! [[ '$(CHAPTER)' =~ ^[0-9]+$$ ]] || (( 10#$(CHAPTER) < $* || 10#$(CHAPTER) > $(LATEST_CHAPTER) )); then \
	  echo "error: a chapter is a number from $* to $(LATEST_CHAPTER), got \"$(CHAPTER)\" (chapters: $(CHAPTERS))" >&2; exit 2; fi

.DEFAULT_GOAL := help

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target> [VAR=value]\n"} \
	  /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-24s\033[0m %s\n", $$1, $$2 } \
	  /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)
	@echo
	@echo "Chapters: $(CHAPTERS)"

.PHONY: demo
demo: build cluster-up install ## Show the shipped chapter rebuilding a pod deleted with kubectl.
	@$(with_kubeconfig) scripts/demo.sh

##@ Development

.PHONY: build
build: ## Build bin/operator.
	$(operator_build) -o $(BIN)/operator $(OPERATOR_MAIN)

.PHONY: build-faults
build-faults: ## Build bin/operator-faults: the test build, which injects the faults REDIS_OPERATOR_FAULT_* ask for (operator/faults); never shipped.
	$(operator_build) -tags faults -o $(BIN)/operator-faults $(OPERATOR_MAIN)

.PHONY: build-variant
build-variant: check-chapter-1 check-variant $(CONTROLLER_GEN) ## Build bin/operator-variant: the operator with chapter N's package replaced by VARIANT's Go files, and the role from their markers: make build-variant 5 VARIANT=dir
	@go run ./scripts/variant --chapter $(CHAPTER) --dir '$(VARIANT)' --out $(VARIANT_OUT) --controller-gen $(CONTROLLER_GEN)
	$(operator_build) $(VARIANT_GOFLAGS) -overlay $(VARIANT_OUT)/overlay.json -o $(VARIANT_BIN) $(OPERATOR_MAIN)
	@if [[ -n '$(FAULTS)' ]] || [[ " $(FAULTS_CHAPTERS) " == *" $$((10#$(CHAPTER))) "* ]]; then \
	  echo "$(operator_build) $(VARIANT_GOFLAGS) -tags faults -overlay $(VARIANT_OUT)/overlay.json -o $(VARIANT_BIN)-faults $(OPERATOR_MAIN)"; \
	  $(operator_build) $(VARIANT_GOFLAGS) -tags faults -overlay $(VARIANT_OUT)/overlay.json -o $(VARIANT_BIN)-faults $(OPERATOR_MAIN); fi

.PHONY: check-variant
check-variant:
	@if [[ -z '$(VARIANT)' ]]; then echo "error: VARIANT names no directory: make build-variant 5 VARIANT=dir" >&2; exit 2; fi

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Regenerate from the table of chapters (chapters/chapters.go) scripts/chapters.mk and the operator's map of chapters, and the CRD, each chapter's RBAC role and webhook configuration, and deepcopy code from the Go markers.
	go run ./scripts/chapters-gen
	@# Again, so that Make reads the table just written.
	@$(MAKE) --no-print-directory manifests-from-markers

.PHONY: manifests-from-markers
manifests-from-markers: $(CONTROLLER_GEN)
	$(CONTROLLER_GEN) object paths=./api/...
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	@for c in $(CHAPTERS); do \
	  echo "$(CONTROLLER_GEN) rbac:roleName=$(ROLE_NAME) webhook paths=./chapters/$$c/... output:rbac:dir=chapters/$$c output:webhook:dir=chapters/$$c"; \
	  $(CONTROLLER_GEN) rbac:roleName=$(ROLE_NAME) webhook paths=./chapters/$$c/... output:rbac:dir=chapters/$$c output:webhook:dir=chapters/$$c; done
	cp chapters/$(shipped_dir)/role.yaml config/rbac/role.yaml
	cp chapters/$(shipped_dir)/manifests.yaml config/webhook/manifests.yaml

.PHONY: verify-manifests
verify-manifests: $(CONTROLLER_GEN) ## Fail if what the table of chapters generates, the generated CRD, RBAC or deepcopy code is stale.
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(CONTROLLER_GEN) object paths=./api/... output:object:dir=$$tmp/api; \
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:dir=$$tmp/crd; \
	stale=0; \
	go run ./scripts/chapters-gen --check || stale=1; \
	for c in $(CHAPTERS); do \
	  $(CONTROLLER_GEN) rbac:roleName=$(ROLE_NAME) webhook paths=./chapters/$$c/... output:rbac:dir=$$tmp/rbac/$$c output:webhook:dir=$$tmp/webhook/$$c; \
	  diff -u chapters/$$c/role.yaml $$tmp/rbac/$$c/role.yaml || stale=1; \
	  if [[ -f chapters/$$c/manifests.yaml || -f $$tmp/webhook/$$c/manifests.yaml ]]; then \
	    diff -u chapters/$$c/manifests.yaml $$tmp/webhook/$$c/manifests.yaml || stale=1; fi; done; \
	diff -u api/v1/zz_generated.deepcopy.go $$tmp/api/zz_generated.deepcopy.go || stale=1; \
	diff -u config/crd/bases $$tmp/crd || stale=1; \
	diff -u config/rbac/role.yaml $$tmp/rbac/$(shipped_dir)/role.yaml || stale=1; \
	diff -u config/webhook/manifests.yaml $$tmp/webhook/$(shipped_dir)/manifests.yaml || stale=1; \
	if [[ $$stale == 1 ]]; then echo "error: generated files are stale; run 'make manifests' and commit the result" >&2; exit 1; fi; \
	echo "Generated files are up to date"

.PHONY: tools
tools: $(GOLANGCI_LINT) test-tools ## Install the pinned tools into bin/: golangci-lint, controller-gen, the Ginkgo CLI.

.PHONY: test-tools
test-tools: $(CONTROLLER_GEN) $(GINKGO) ## Install the tools the suites and make prove-chapter use into bin/: controller-gen, the Ginkgo CLI.

# bin/prove; go build is a no-op when nothing changed.
.PHONY: prove-tool
prove-tool:
	@go build -o $(BIN)/prove ./scripts/prove

.PHONY: vet
# Two go vets: vet's cache keys its results on the -tags it was given, and
# the chapter branches' make vet gives e2e,faults; with diagrams in the
# same run, a cold CI vetted every dependency twice (4.6 CPU-minutes).
vet: ## Run go vet, and check formatting and go.mod tidiness.
	@go mod tidy -diff || { echo "error: go.mod/go.sum are not tidy; run 'go mod tidy'" >&2; exit 1; }
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [[ -n "$$unformatted" ]]; then echo "error: not gofmt-ed: $$unformatted" >&2; exit 1; fi
	go vet -tags e2e,faults ./...
	go vet -tags e2e,faults,diagrams ./tests/docs/
	go vet -tags book ./tests/book/

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint with the checked-in .golangci.yml.
	$(GOLANGCI_LINT) run

.PHONY: unit
# go test's own vet is off everywhere: make vet vets every package, its
# tests and its tags included, and a second vet of the same code, with
# other settings, is CPU spent twice (a cold CI ran 14 CPU-minutes of vet).
GO_TEST = go test -vet=off

unit: ## Run the unit tests (no cluster needed; the suites that need one are built with the e2e tag; make vet vets them).
	$(GO_TEST) ./...

# make check-diagrams renders the READMEs' Mermaid diagrams with the
# Mermaid CLI from npm, pinned by scripts/diagrams/package-lock.json and
# installed under CACHE_DIR by its hash, in Debian's chromium (no browser
# download).
MERMAID_DIR = $(CACHE_DIR)/mermaid-cli/$(shell sha256sum scripts/diagrams/package-lock.json | cut -c1-12)
CHROMIUM ?= /usr/bin/chromium

$(MERMAID_DIR)/node_modules/.bin/mmdc: scripts/diagrams/package.json scripts/diagrams/package-lock.json
	@command -v npm >/dev/null || { echo "error: make check-diagrams needs Node.js and npm (apt-get install nodejs npm)" >&2; exit 2; }
	@echo "Installing the Mermaid CLI into $(MERMAID_DIR) (pinned by scripts/diagrams/package-lock.json; about 450 MB, minutes the first time)"
	@rm -rf $(MERMAID_DIR) $(MERMAID_DIR).part && mkdir -p $(MERMAID_DIR).part && cp scripts/diagrams/package.json scripts/diagrams/package-lock.json $(MERMAID_DIR).part/
	@cd $(MERMAID_DIR).part && PUPPETEER_SKIP_DOWNLOAD=true npm ci --no-audit --no-fund --loglevel=error
	@mv $(MERMAID_DIR).part $(MERMAID_DIR)

# The Mermaid CLI alone (CI installs it while other things build).
.PHONY: diagrams-tool
diagrams-tool: $(MERMAID_DIR)/node_modules/.bin/mmdc

.PHONY: check-diagrams
check-diagrams: $(MERMAID_DIR)/node_modules/.bin/mmdc ## Render every Mermaid diagram of the READMEs, both languages, with the pinned Mermaid CLI in Debian's chromium (apt-get install chromium): each must render (SVGs in _output/diagrams; one rendered before from the same source, by the same CLI and browser, comes from CACHE_DIR).
	@[[ -x '$(CHROMIUM)' ]] || { echo "error: make check-diagrams renders in Debian's chromium, and $(CHROMIUM) is missing: apt-get install chromium (or CHROMIUM=path)" >&2; exit 2; }
	MMDC=$(MERMAID_DIR)/node_modules/.bin/mmdc CHROMIUM=$(CHROMIUM) DIAGRAMS_DIR=$(OUTPUT_DIR)/diagrams DIAGRAMS_CACHE=$(CACHE_DIR)/diagrams $(GO_TEST) -tags diagrams -count=1 -v -run '^TestDiagramsRender$$' ./tests/docs/

.PHONY: bench-unit
bench-unit: ## Run the Go micro-benchmarks of the chapter packages (no cluster needed).
	$(GO_TEST) -run '^$$' -bench . -benchmem ./chapters/...

.PHONY: diff-chapter
diff-chapter: check-chapter-2 ## Show the code diff that chapter N adds to chapter N-1 (a chapter in REWRITES: to the chapter it rewrites), with the files outside the chapters it adds (chapter 10's manifests, ...): make diff-chapter 5
	@go build -o $(BIN)/chapter-branches ./scripts/chapter-branches
	@scripts/diff-chapter.sh $$($(BIN)/chapter-branches --dirs $(CHAPTER)) $$($(BIN)/chapter-branches --arrivals $(CHAPTER))

# The commit that the chapter branches are made from; never the work tree.
FROM ?= HEAD

.PHONY: chapter-branches
chapter-branches: ## Create or update the local branches chapter/NN-slug, one commit per chapter (of FROM, default HEAD).
	@go build -o $(BIN)/chapter-branches ./scripts/chapter-branches
	@$(BIN)/chapter-branches --from '$(FROM)'

.PHONY: verify-chapter-branches
verify-chapter-branches: $(CONTROLLER_GEN) ## Check the chapter branches of FROM, in turn in one directory under CACHE_DIR (kept, so go's caches serve unchanged branches next time): each builds and passes its make test; git diff is make diff-chapter (no cluster).
	@go build -o $(BIN)/chapter-branches ./scripts/chapter-branches
	@$(BIN)/chapter-branches --verify --from '$(FROM)' --bin $(BIN) --work $(CACHE_DIR)/chapter-branches/branch

# The cluster targets (kubernetes, kind-node-image, cluster-up, ...) and
# the pinned tools are in scripts/common.mk, which a chapter branch's
# Makefile includes too.
include scripts/common.mk

##@ Against the cluster

.PHONY: install
install: ## Install chapter N's CRD (make install 11, or OPERATOR_CHAPTER or CHAPTER; default the shipped one) into the test cluster (after cluster-up; else the current KUBECONFIG's).
	@rm -rf $(CRD_BUILD_DIR) && mkdir -p $(CRD_BUILD_DIR) && cp -R config/crd/. $(CRD_BUILD_DIR)/ && cp -R $(crd_kustomization)/. $(CRD_BUILD_DIR)/
	@$(with_kubeconfig) $(KUBECTL_CMD) apply --server-side --force-conflicts -k $(CRD_BUILD_DIR)
	@$(with_kubeconfig) $(KUBECTL_CMD) wait --for condition=Established --timeout=60s crd/redis.myapp.example.com

.PHONY: run
run: check-chapter-1 $(build_under_test) $(if $(and $(FAULTS),$(if $(VARIANT),,x)),build-faults) install ## Run chapter N's operator against the cluster: make run 5 (or CHAPTER=5; VARIANT=dir: your version of it; FAULTS=true: its test build, which injects faults; RUN_ARGS: more flags, e.g. --trace-pods)
	@$(with_kubeconfig) OPERATOR_CHAPTER=$(CHAPTER) ENABLE_WEBHOOKS=false $(operator_under_test)$(if $(FAULTS),-faults) --metrics-bind-address :8080 $(RUN_ARGS)

##@ Tests

.PHONY: test-chapter
test-chapter: check-chapter-1 $(GINKGO) $(build_under_test) cluster-up ## Run chapter N's end-to-end suite: make test-chapter 5 (VARIANT=dir: against your version of chapter 5)
	@$(with_kubeconfig) $(variant_env) OPERATOR_BIN=$(operator_under_test) $(ginkgo_e2e) tests/chapter$(NN)

.PHONY: test-chapters
test-chapters: check-test-chapters $(GINKGO) build cluster-up ## Run every chapter's end-to-end suite (TEST_CHAPTERS="10 11": those chapters').
	@$(with_kubeconfig) OPERATOR_BIN=$(BIN)/operator $(ginkgo_e2e) $(addprefix tests/chapter,$(test_chapters_nn))

.PHONY: test-faults
test-faults: $(GINKGO) build build-faults cluster-up ## The crash sweep alone (the first fault chapter's lesson): the operator crashed after each of its writes in turn; every run must end as the run without a crash does.
	@$(with_kubeconfig) OPERATOR_BIN=$(BIN)/operator OPERATOR_FAULTS_BIN=$(BIN)/operator-faults $(ginkgo_e2e) --fail-on-empty --label-filter=crash-sweep tests/chapter$(call two_digits,$(firstword $(FAULTS_CHAPTERS)))

# make test-envtest, and make check's runs on an API server alone, write
# in a directory of their own under OUTPUT_DIR, beside whatever cluster
# is up; the API server is the one make cluster-up CLUSTER=envtest starts
# (ENVTEST_CLUSTER_DIR), which make cluster-down stops.
ENVTEST_OUTPUT_DIR = $(OUTPUT_DIR)/envtest

.PHONY: test-envtest
test-envtest: ## The middle rung of the testing ladder, no Docker or network needed: on an API server alone (envtest), the lesson specs of the chapters that need no more fail against the chapter before and pass, a spec that needs more fails there for what the rung lacks (chapter 3's garbage collection), and a bug the fake client's unit tests let through is caught there (chapter 1's CRD validation).
	@$(MAKE) --no-print-directory envtest-proofs CLUSTER=envtest OUTPUT_DIR=$(ENVTEST_OUTPUT_DIR) ENVTEST_CLUSTER_DIR=$(ENVTEST_CLUSTER_DIR)

# What test-envtest runs, on the API server it starts and stops.
.PHONY: envtest-proofs
envtest-proofs: $(GINKGO) build prove-tool $(CONTROLLER_GEN) cluster-up
	@trap '$(MAKE) --no-print-directory cluster-down CLUSTER=envtest' EXIT; status=0; \
	for n in $(API_SERVER_RUNG_CHAPTERS); do $(prove) --chapter $$n --lessons-only || status=1; done; \
	for n in $(TOO_LOW_CHAPTERS); do $(prove) --chapter $$n --too-low || status=1; done; \
	for n in $(FAKE_CLIENT_MISSES_CHAPTERS); do $(prove) --chapter $$n --fake-client-misses || status=1; done; \
	exit $$status

.PHONY: bench
bench: build cluster-up install ## Benchmark chapters 5, 7 and 9 against a StatefulSet and a ReplicaSet (BENCH_SAMPLES, BENCH_N, BENCH_UNRELATED_PODS, BENCH_FLAGS); table on stdout, samples in _output/bench/.
	@go build -o $(BIN)/bench ./scripts/bench
	@$(with_kubeconfig) $(BIN)/bench --operator $(BIN)/operator --out $(OUTPUT_DIR)/bench $(BENCH_FLAGS)

# A few rounds and a few objects, every phase: CI runs it so that the
# benchmark cannot stop working unseen. Its numbers mean nothing.
BENCH_SMOKE_FLAGS := --samples 3 --warmup 1 --objects 6 --api-objects 6 --unrelated-pods 200 --steady 15s --out $(OUTPUT_DIR)/bench-smoke

.PHONY: bench-smoke
bench-smoke: ## Run every phase of make bench once, small (minutes): it must end with chapter 9's verdicts.
	@mkdir -p $(OUTPUT_DIR) && $(MAKE) --no-print-directory bench BENCH_FLAGS='$(BENCH_SMOKE_FLAGS)' | tee $(OUTPUT_DIR)/bench-smoke.log
	@grep -q "^chapter [0-9]*'s targets:" $(OUTPUT_DIR)/bench-smoke.log || { echo "error: make bench printed no verdicts" >&2; exit 1; }

.PHONY: prove-chapter
prove-chapter: check-chapter-1 $(GINKGO) build prove-tool $(if $(VARIANT),build-variant) $(CONTROLLER_GEN) cluster-up ## Prove chapter N's lesson: its lesson specs fail against chapter N-1 (a chapter in PROVED_BY_MUTANTS: against its mutants; VARIANT=dir: against that variant of chapter N) after their lesson step, its suite passes, its mutants are killed (a chapter in REWRITES: its suite passes, its mutants are killed): make prove-chapter 5
	@$(prove) --chapter $(CHAPTER) $(if $(VARIANT),--variant '$(VARIANT)',--with-mutants)

.PHONY: mutants
mutants: check-chapter-1 $(GINKGO) build prove-tool $(CONTROLLER_GEN) cluster-up ## Run chapter N's mutants (chapters/NN-slug/mutants): each must fail its spec, in its step: make mutants 5
	@$(prove) --chapter $(CHAPTER) --mutants

.PHONY: mutant
mutant: check-chapter-1 $(GINKGO) build prove-tool $(CONTROLLER_GEN) cluster-up ## Show one mutant of chapter N and run its spec against it: make mutant 5 NAME
	@if [[ -z '$(MUTANT)' ]]; then echo "error: name the mutant: make mutant $(CHAPTER) NAME (ls chapters/$(call chapter_name,$(CHAPTER))/mutants)" >&2; exit 2; fi
	@$(prove) --chapter $(CHAPTER) --mutants --mutant '$(MUTANT)' --show

.PHONY: prove-chapters
prove-chapters: check-prove-lanes $(GINKGO) build prove-tool $(CONTROLLER_GEN) cluster-up ## Prove every chapter's lesson (and run every suite, and every mutant): make prove-chapter for each (PROVE_LANES="1-8 9-$(LATEST_CHAPTER)": those ranges at once, each but the first on a local cluster of its own).
	@lanes=($(prove_lanes)); \
	if (( $${#lanes[@]} == 1 )); then $(MAKE) --no-print-directory prove-range RANGE=$${lanes[0]}; exit; fi; \
	stop_lanes() { for lane in "$${lanes[@]:1}"; do $(MAKE) --no-print-directory cluster-down CLUSTER=local OUTPUT_DIR=$(OUTPUT_DIR)/lane-$$lane || true; done; }; \
	trap stop_lanes EXIT; pids=(); \
	for lane in "$${lanes[@]}"; do \
	  args=(); if [[ $$lane != "$${lanes[0]}" ]]; then args=(CLUSTER=local OUTPUT_DIR=$(OUTPUT_DIR)/lane-$$lane); fi; \
	  { $(MAKE) --no-print-directory prove-range RANGE=$$lane "$${args[@]}" 2>&1 | sed -u "s/^/[$$lane] /"; } & pids+=($$!); \
	done; \
	status=0; for pid in "$${pids[@]}"; do wait $$pid || status=1; done; exit $$status

.PHONY: prove-range
prove-range: check-range $(GINKGO) build prove-tool $(CONTROLLER_GEN) cluster-up ## Prove chapters FROM-TO in turn, as make prove-chapters does, on the cluster of OUTPUT_DIR: make prove-range RANGE=1-6
	@for n in $$(seq $(subst -, ,$(RANGE))); do \
	  $(prove) --chapter $$n --with-mutants || exit 1; done

# make prove-chapters proves chapters in lanes, one range of chapters each,
# side by side: most of a suite's time is spent waiting for the cluster.
# The first lane runs on the test cluster; each other one on a local
# cluster of its own, under OUTPUT_DIR/lane-FROM-TO, which it stops at the
# end. Empty: every chapter in one lane.
PROVE_LANES ?=
prove_lanes = $(or $(PROVE_LANES),1-$(LATEST_CHAPTER))
.PHONY: check-range
check-range:
	@if [[ ! '$(RANGE)' =~ ^([0-9]+)-([0-9]+)$$ ]] || (( BASH_REMATCH[1] < 1 || BASH_REMATCH[1] > BASH_REMATCH[2] || BASH_REMATCH[2] > $(LATEST_CHAPTER) )); then \
	  echo "error: RANGE='$(RANGE)' is not a range of chapters FROM-TO within 1-$(LATEST_CHAPTER), as in make prove-range RANGE=1-6" >&2; exit 2; fi

.PHONY: check-prove-lanes
check-prove-lanes:
	@want=$$(seq -s ' ' 1 $(LATEST_CHAPTER)); got=""; \
	for lane in $(prove_lanes); do \
	  if [[ ! $$lane =~ ^([0-9]+)-([0-9]+)$$ ]] || (( BASH_REMATCH[1] > BASH_REMATCH[2] )); then \
	    echo "error: PROVE_LANES: '$$lane' is not a range of chapters FROM-TO, as in PROVE_LANES=\"1-8 9-$(LATEST_CHAPTER)\"" >&2; exit 2; fi; \
	  got="$$got $$(seq -s ' ' $${BASH_REMATCH[1]} $${BASH_REMATCH[2]})"; \
	done; \
	if [[ "$$(tr ' ' '\n' <<<"$$got" | grep . | sort -n | tr '\n' ' ')" != "$$want " ]]; then \
	  echo "error: PROVE_LANES=\"$(PROVE_LANES)\" must name each chapter from 1 to $(LATEST_CHAPTER) once, as in PROVE_LANES=\"1-8 9-$(LATEST_CHAPTER)\"" >&2; exit 2; fi

.PHONY: test-local-cluster
test-local-cluster: cluster-tool kubernetes ## Start and stop a local cluster of its own, one node killed on the way: nothing of it may stay in /tmp (no other local cluster may run).
	CLUSTER_TOOL=$(BIN)/cluster KUBERNETES_BIN=$(KUBERNETES_BIN) $(GO_TEST) -tags e2e -count=1 -v -timeout 10m -run '^TestUpDown' ./internal/cluster/localcluster/

.PHONY: test-exercise
test-exercise: exercise-tool cluster-up ## Check the exercises' tools on the cluster, in a scratch EXERCISE_DIR: every exercise's start red at its lesson unit tests; chapter 5's green with the chapter's own package; make check-spec red with the skeleton, green with an answer (chapter 5's; chapter 13's, judged against its mutant).
	@$(with_kubeconfig) $(GO_TEST) -tags e2e -count=1 -v -timeout 20m ./tests/exercise/

.PHONY: test-first-command
test-first-command: cluster-up ## As a learner's first commands, in a fresh clone of HEAD (under CACHE_DIR) with no bin/, on the cluster that is up: make run 1 until it creates a pod, then make test-chapter 1's lesson spec green, and red once chapter 1's pods lose their labels (each builds what it runs).
	@$(with_kubeconfig) FIRST_COMMAND_DIR=$(CACHE_DIR)/first-command $(GO_TEST) -tags e2e -count=1 -v -timeout 45m -run '^TestFirstCommands$$' ./tests/firstcommand/

.PHONY: test-scratch-chapter
test-scratch-chapter: cluster-up ## Add a chapter as the table of chapters says it is done, in a fresh clone of HEAD (under CACHE_DIR), on the cluster that is up: a copy of the last chapter under the next number, its row, make manifests and nothing else; then make run, make test-chapter, make diff-chapter and make chapter-branches take it.
	@$(with_kubeconfig) FIRST_COMMAND_DIR=$(CACHE_DIR)/first-command $(GO_TEST) -tags e2e -count=1 -v -timeout 45m -run '^TestScratchChapter$$' ./tests/firstcommand/

.PHONY: try-it
try-it: $(if $(CHAPTER_ARG),check-chapter-1,check-test-chapters) build cluster-up install ## Run the "Try it" commands of every chapter's README (or chapter N's: make try-it 3; or TEST_CHAPTERS') and compare their output.
	@$(with_kubeconfig) $(GO_TEST) -tags e2e -count=1 -v -timeout 60m ./tests/tryit/ $(if $(or $(CHAPTER_ARG),$(filter command line environment,$(origin CHAPTER))),-run 'TestTryIt/^$(NN)-',$(if $(filter command line environment,$(origin TEST_CHAPTERS)),-run 'TestTryIt/^$(test_chapters_re)-'))

.PHONY: test
test: vet lint verify-manifests unit $(if $(filter $(API_SERVER_RUNG_CHAPTERS) $(TOO_LOW_CHAPTERS) $(FAKE_CLIENT_MISSES_CHAPTERS),$(TEST_CHAPTERS)),test-envtest) test-chapters try-it ## The test command: checks, lint, unit tests, the API server rung (make test-envtest), every suite and every "Try it" (CI also checks the chapter branches and runs prove-chapters on local).

.PHONY: clean
clean: cluster-down ## Stop the test clusters and remove bin/ and _output/ (the Kubernetes cache and your _exercise/ stay).
	@for lane in $(wildcard $(OUTPUT_DIR)/lane-*); do $(MAKE) --no-print-directory cluster-down CLUSTER=local OUTPUT_DIR=$$lane; done
	rm -rf $(BIN) _output
	$(if $(filter-out $(CURDIR)/_output,$(OUTPUT_DIR)),@echo "OUTPUT_DIR=$(OUTPUT_DIR) is yours: remove it yourself")

##@ The book

BOOK_DIR = $(OUTPUT_DIR)/book
BOOK_PORT ?= 8000

.PHONY: book
book: check-diagrams ## Build the course as a web book, both languages, into _output/book: the READMEs, TESTING, the glossary, each chapter's diff side by side, its exercise and mutants, the diagrams rendered; offline, nothing fetched.
	@go run ./scripts/book --out $(BOOK_DIR) --diagrams $(OUTPUT_DIR)/diagrams

.PHONY: serve-book
serve-book: check-diagrams ## Build the book and serve it on http://localhost:8000 (BOOK_PORT).
	@go run ./scripts/book --out $(BOOK_DIR) --diagrams $(OUTPUT_DIR)/diagrams --serve localhost:$(BOOK_PORT)

.PHONY: check-book
check-book: book ## Check the book in Debian's chromium: every page loads with no error and no request outside it, every link and anchor resolves, every diagram is an SVG of text, the language switch and the search work, chapter 5's diff shows its added lines; pictures of the chapter pages in _output/book-screenshots.
	@fc-list :lang=zh | grep -q . || { echo "error: no Chinese font: the pictures of the Chinese pages would show boxes; apt-get install fonts-wqy-microhei" >&2; exit 2; }
	CHROMIUM=$(CHROMIUM) BOOK_DIR=$(BOOK_DIR) BOOK_SCREENSHOTS=$(OUTPUT_DIR)/book-screenshots $(GO_TEST) -tags book -count=1 -v ./tests/book/

##@ Exercises: write a chapter's lesson yourself, judged by its proofs

# The chapter a learner names (make check 5, or CHAPTER=5), or none: the
# exercise started last (scripts/exercise keeps it in _exercise/).
exercise_chapter = $(or $(CHAPTER_ARG),$(if $(filter command line environment,$(origin CHAPTER)),$(CHAPTER)))
# Where the workspaces and the progress file are (a directory of this
# repository: the workspace is built as a package of the module).
EXERCISE_DIR ?= _exercise
exercise = $(BIN)/exercise
exercise_dir = --dir '$(EXERCISE_DIR)'
EXERCISE_OUT ?= $(OUTPUT_DIR)/exercise

# bin/exercise; go build is a no-op when nothing changed.
.PHONY: exercise-tool
exercise-tool:
	@go build -o $(BIN)/exercise ./scripts/exercise

.PHONY: exercise
exercise: exercise-tool ## Start chapter N's exercise: chapter N-1's package in _exercise/NN-slug, for you to make chapter N's: make exercise 5 (FORCE=yes: over your changes; CONTINUE=yes: from your own chapter N-1)
	@$(exercise) start $(exercise_dir) --chapter '$(exercise_chapter)' $(if $(FORCE),--force) $(if $(CONTINUE),--continue)

.PHONY: check
check: exercise-tool $(GINKGO) prove-tool cluster-tool $(CONTROLLER_GEN) ## Check your exercise: it builds, passes the chapter's lesson unit tests, then, on the cluster that is up, its lesson specs and the rest of its suite: make check (or make check 5)
	@$(with_kubeconfig) $(exercise) check $(exercise_dir) $(if $(exercise_chapter),--chapter '$(exercise_chapter)') $(check_flags)

# What make check (and make bench-check) need: the tools, the cluster's
# files, where the operator built with the workspace goes.
check_flags = --out $(EXERCISE_OUT) --controller-gen $(CONTROLLER_GEN) --ginkgo $(GINKGO) --prove $(BIN)/prove --cluster $(BIN)/cluster \
  --state-dir $(LOCAL_CLUSTER_DIR) --env-file $(CLUSTER_ENV) --operator-main $(OPERATOR_MAIN) --operator-bin $(BIN)/operator-exercise \
  --kubernetes-bin $(KUBERNETES_BIN) --envtest-out $(ENVTEST_OUTPUT_DIR) --envtest-state-dir $(ENVTEST_CLUSTER_DIR) \
  --procs $(E2E_PROCS) $(if $(PROVE_TIMEOUT),--eventually-timeout $(PROVE_TIMEOUT))

# The exercises make bench-check times, each solved with its chapter's own
# package: chapter 5's, judged on the cluster, and chapter 2's, whose
# lesson specs are judged on an API server alone first.
BENCH_CHECK_CHAPTERS ?= 5 2
BENCH_CHECK_ROUNDS ?= 3

.PHONY: bench-check
bench-check: exercise-tool $(GINKGO) prove-tool cluster-tool $(CONTROLLER_GEN) cluster-up ## Time make check of the exercises of BENCH_CHECK_CHAPTERS (5 2), solved, in a scratch directory: a warm-up, then BENCH_CHECK_ROUNDS runs to the lesson specs' verdict; goal: a median under 60 s on the cluster, 15 s on an API server alone (chapter 2).
	@for n in $(BENCH_CHECK_CHAPTERS); do \
	  $(with_kubeconfig) $(exercise) bench --dir $(OUTPUT_DIR)/bench-check --chapter $$n --rounds $(BENCH_CHECK_ROUNDS) $(check_flags) || exit 1; done

.PHONY: hint
hint: exercise-tool ## Show the next hint of your exercise (or of chapter N's: make hint 5); never its code.
	@$(exercise) hint $(exercise_dir) $(if $(exercise_chapter),--chapter '$(exercise_chapter)')

.PHONY: solution
solution: exercise-tool ## Show the diff from your exercise's package to the chapter's.
	@$(exercise) solution $(exercise_dir) $(if $(exercise_chapter),--chapter '$(exercise_chapter)')

.PHONY: exercise-spec
exercise-spec: exercise-tool ## Start chapter N's spec exercise: a skeleton of the spec that proves its lesson, in _exercise/spec-NN-slug/, for you to complete: make exercise-spec 5 (FORCE=yes: over your spec)
	@$(exercise) start-spec $(exercise_dir) --chapter '$(exercise_chapter)' $(if $(FORCE),--force)

.PHONY: check-spec
check-spec: exercise-tool $(GINKGO) prove-tool cluster-tool $(CONTROLLER_GEN) ## Judge your spec on the cluster that is up: it must fail against chapter N-1 after its lesson step, pass against chapter N, and kill the chapter's mutants of the spec it stands for: make check-spec (or make check-spec 5)
	@$(with_kubeconfig) $(exercise) check-spec $(exercise_dir) $(if $(exercise_chapter),--chapter '$(exercise_chapter)') $(check_flags)

.PHONY: hint-spec
hint-spec: exercise-tool ## Show the next hint of your spec exercise; never its code.
	@$(exercise) hint-spec $(exercise_dir) $(if $(exercise_chapter),--chapter '$(exercise_chapter)')

.PHONY: progress
progress: exercise-tool ## Show your exercises: started, hints taken, solution seen, the last make check.
	@$(exercise) progress $(exercise_dir)

# make deploy runs the chapter named (make deploy 11), or the shipped one: the
# course's image holds every chapter, OPERATOR_CHAPTER selects one.
DEPLOY_SELECTS_CHAPTER := yes
include scripts/deploy.mk
