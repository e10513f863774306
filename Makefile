# The Redis operator, chapter by chapter. `make help` lists the targets.

# ---- pinned versions --------------------------------------------------------
# Kubernetes (built from Go sources: scripts/build-kubernetes.sh) and its etcd.
KUBERNETES_VERSION ?= v1.37.1
ETCD_VERSION ?= v3.7.0
CONTROLLER_TOOLS_VERSION ?= v0.23.0
GOLANGCI_LINT_VERSION ?= v2.15.0
# The Ginkgo CLI and kind's base files always match the versions in go.mod.
GINKGO_VERSION := $(shell go list -m -f '{{.Version}}' github.com/onsi/ginkgo/v2 2>/dev/null)
KIND_VERSION := $(shell go list -m -f '{{.Version}}' sigs.k8s.io/kind 2>/dev/null)
# The offline kind node image: the runtime at kind's base image's versions.
CONTAINERD_VERSION ?= v2.3.4
RUNC_VERSION ?= v1.4.3
CNI_PLUGINS_VERSION ?= v1.9.1
DEBIAN_SUITE ?= bookworm
DEBIAN_MIRROR ?= http://deb.debian.org/debian
KIND_OFFLINE_NODE_IMAGE ?= redis-operator/kind-node:$(KUBERNETES_VERSION)
# The image the Redis pods run by default; the offline node image has it.
REDIS_IMAGE := $(shell sed -n 's/^[[:space:]]*DefaultImage = "\(.*\)"/\1/p' api/v1/redis_types.go)

# ---- paths ------------------------------------------------------------------
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
BIN := $(CURDIR)/bin
CONTROLLER_GEN := $(BIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
GINKGO := $(BIN)/ginkgo-$(GINKGO_VERSION)
GOLANGCI_LINT := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
# Kubernetes' binaries are cached by version, shared by every clone.
CACHE_DIR ?= $(or $(value XDG_CACHE_HOME),$(HOME)/.cache)/redis-operator
KUBERNETES_BIN := $(CACHE_DIR)/kubernetes/$(KUBERNETES_VERSION)/bin
# All the targets make but bin/; another OUTPUT_DIR is another test cluster.
OUTPUT_DIR ?= $(CURDIR)/_output
LOCAL_CLUSTER_DIR := $(OUTPUT_DIR)/local-cluster
ENVTEST_CLUSTER_DIR := $(OUTPUT_DIR)/envtest-cluster
KIND_CLUSTER_DIR := $(OUTPUT_DIR)/kind-cluster
# kind, local, existing, or auto: kind when a Docker daemon answers, else local.
CLUSTER ?= auto
# make cluster-up writes the chosen backend and its KUBECONFIG here.
CLUSTER_ENV := $(OUTPUT_DIR)/cluster.env
OPERATOR_MAIN := ./operator
# The table of chapters (chapters/chapters.go) as Make variables (make manifests).
include scripts/chapters.mk
CHAPTERS := $(CHAPTER_NAMES)
LATEST_CHAPTER := $(words $(CHAPTERS))

export OUTPUT_DIR KUBERNETES_VERSION CLUSTER LOCAL_CLUSTER_DIR ENVTEST_CLUSTER_DIR KIND_CLUSTER_DIR KIND_OFFLINE_NODE_IMAGE OPERATOR_CHAPTER
# The suites and `make run` use the kubectl built at the cluster's version.
export KUBECTL ?= $(KUBERNETES_BIN)/kubectl

# ---- what runs, and how -----------------------------------------------------
# A variable that a rule's prerequisites name is defined above the rules
# (tests/makefile checks it). make install installs config/crd, or the
# crd/ of the chapter (or of VARIANT) if it has one.
CRD_CHAPTER = $(or $(OPERATOR_CHAPTER),$(CHAPTER))
crd_kustomization = $(firstword $(if $(VARIANT),$(wildcard $(VARIANT)/crd)) $(wildcard $(addprefix chapters/,$(addsuffix /crd,$(call chapter_name,$(CRD_CHAPTER))))) config/crd)
CRD_BUILD_DIR := $(OUTPUT_DIR)/crd
NO_COLOR ?= $(if $(CI),true,false)
# The timeout bounds every suite of one make test-chapters together.
GINKGO_FLAGS ?= -v --timeout=60m --no-color=$(NO_COLOR)
# Ginkgo's --procs: the specs that are not Serial run side by side.
E2E_PROCS ?= 4
# VARIANT=dir: chapter CHAPTER's package with changes (a mutant, your own),
# built by make build-variant (scripts/variant), with its role in VARIANT_OUT.
VARIANT ?=
VARIANT_OUT ?= $(OUTPUT_DIR)/variant
VARIANT_BIN ?= $(BIN)/operator-variant
# FAULTS=true: the test build that injects faults (also a variant's, into
# $(VARIANT_BIN)-faults, for a chapter in FAULTS_CHAPTERS).
FAULTS ?=
# A quarter less linking for each mutant.
VARIANT_GOFLAGS ?= -ldflags='-s -w'
# RACE=1: the operator under test is built with Go's race detector (cgo,
# gcc); a race in its log fails the spec running (tests/framework/death.go).
RACE ?=
operator_build = $(if $(RACE),CGO_ENABLED=1 go build -race,go build)
build_under_test = $(if $(VARIANT),build-variant,build)
operator_under_test = $(if $(VARIANT),$(VARIANT_BIN),$(BIN)/operator)
# What a suite run against a variant needs: its role, its faults build, VARIANT.
variant_env = $(if $(VARIANT),VARIANT='$(VARIANT)' OPERATOR_ROLE=$(VARIANT_OUT)/role.yaml OPERATOR_FAULTS_BIN=$(VARIANT_BIN)-faults)

# bin/prove against the cluster; the targets say what to prove.
prove = $(with_kubeconfig) OPERATOR_BIN=$(BIN)/operator $(BIN)/prove --ginkgo $(GINKGO) --procs $(E2E_PROCS) $(if $(PROVE_TIMEOUT),--eventually-timeout $(PROVE_TIMEOUT)) \
  --output-dir $(output_dir)/prove --mutants-dir $(output_dir)/mutants --variant-bin $(VARIANT_BIN) --variant-role $(VARIANT_OUT)/role.yaml

# `make test-chapter 5`, `make deploy 11`, `make mutant 5 NAME`: the word
# after the target is the chapter (CHAPTER=5 works too), the next a mutant.
CHAPTER_ARG :=
MUTANT_ARG :=
ifneq ($(filter test-chapter prove-chapter diff-chapter run try-it build-variant mutants mutant install deploy exercise check hint solution exercise-spec check-spec hint-spec,$(firstword $(MAKECMDGOALS))),)
  CHAPTER_ARG := $(word 2,$(MAKECMDGOALS))
  MUTANT_ARG := $(if $(filter mutant,$(firstword $(MAKECMDGOALS))),$(word 3,$(MAKECMDGOALS)))
  $(foreach w,$(CHAPTER_ARG) $(MUTANT_ARG),$(eval $(w):;@:))
endif
MUTANT ?= $(MUTANT_ARG)
CHAPTER ?= $(or $(CHAPTER_ARG),$(SHIPPED_CHAPTER))
# The chapter named (make check 5, or CHAPTER=5), or none.
named_chapter = $(or $(CHAPTER_ARG),$(if $(filter command line environment,$(origin CHAPTER)),$(CHAPTER)))

# What make test-chapters and make try-it run, e.g. TEST_CHAPTERS="10 11".
TEST_CHAPTERS ?= $(shell seq 1 $(LATEST_CHAPTER))
# bin/course checks what a learner types, one rule and message for each.
.PHONY: course-tool
course-tool:
	@go build -o $(BIN)/course ./scripts/course

.PHONY: check-test-chapters
check-test-chapters: course-tool
	@$(BIN)/course chapters --name TEST_CHAPTERS '$(TEST_CHAPTERS)'

# check-chapter-MIN: CHAPTER is a chapter >= MIN (not .PHONY: a pattern rule).
check-chapter-%: course-tool
	@$(BIN)/course chapter --from $* '$(CHAPTER)'

# check-deploy-chapter: the chapter named (not a suite's) runs in the cluster.
.PHONY: check-deploy-chapter
check-deploy-chapter: course-tool
	@$(if $(OPERATOR_CHAPTER),true,$(BIN)/course chapter --deploy '$(deploy_chapter)')

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
	$(if $(or $(FAULTS),$(filter $(FAULTS_CHAPTERS),$(call chapter_number,$(CHAPTER)))),$(operator_build) $(VARIANT_GOFLAGS) -tags faults -overlay $(VARIANT_OUT)/overlay.json -o $(VARIANT_BIN)-faults $(OPERATOR_MAIN))

.PHONY: check-variant
check-variant:
	@if [[ -z '$(VARIANT)' ]]; then echo "error: VARIANT names no directory: make build-variant 5 VARIANT=dir" >&2; exit 2; fi

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Regenerate from the table of chapters (chapters/chapters.go) scripts/chapters.mk and the operator's map of chapters, and the CRD, each chapter's RBAC role and webhook configuration, and deepcopy code from the Go markers.
	@go run ./scripts/chapters-gen --controller-gen $(CONTROLLER_GEN)

.PHONY: verify-manifests
verify-manifests: $(CONTROLLER_GEN) ## Fail if what the table of chapters generates, the generated CRD, RBAC or deepcopy code is stale.
	@go run ./scripts/chapters-gen --controller-gen $(CONTROLLER_GEN) --check

.PHONY: tools
tools: $(GOLANGCI_LINT) test-tools ## Install the pinned tools into bin/: golangci-lint, controller-gen, the Ginkgo CLI.

.PHONY: test-tools
test-tools: $(CONTROLLER_GEN) $(GINKGO) ## Install the tools the suites and make prove-chapter use into bin/: controller-gen, the Ginkgo CLI.

.PHONY: prove-tool
prove-tool:
	@go build -o $(BIN)/prove ./scripts/prove

.PHONY: vet
# Three go vets: vet caches by -tags, and a branch's make vet gives e2e,faults.
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
# make vet vets every package; go test's own vet would do it again.
GO_TEST = go test -vet=off

unit: ## Run the unit tests (no cluster needed; the suites that need one are built with the e2e tag; make vet vets them).
	$(GO_TEST) ./...

# The Mermaid CLI, pinned by its package-lock.json, in Debian's chromium.
MERMAID_DIR = $(CACHE_DIR)/mermaid-cli/$(shell sha256sum scripts/diagrams/package-lock.json | cut -c1-12)
CHROMIUM ?= /usr/bin/chromium

$(MERMAID_DIR)/node_modules/.bin/mmdc: scripts/diagrams/package.json scripts/diagrams/package-lock.json
	@command -v npm >/dev/null || { echo "error: make check-diagrams needs Node.js and npm (apt-get install nodejs npm)" >&2; exit 2; }
	@echo "Installing the Mermaid CLI into $(MERMAID_DIR) (pinned by scripts/diagrams/package-lock.json; about 450 MB, minutes the first time)"
	@rm -rf $(MERMAID_DIR) $(MERMAID_DIR).part && mkdir -p $(MERMAID_DIR).part && cp scripts/diagrams/package.json scripts/diagrams/package-lock.json $(MERMAID_DIR).part/
	@cd $(MERMAID_DIR).part && PUPPETEER_SKIP_DOWNLOAD=true npm ci --no-audit --no-fund --loglevel=error
	@mv $(MERMAID_DIR).part $(MERMAID_DIR)

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
diff-chapter: check-chapter-2 ## Show the code diff that chapter N adds to chapter N-1 (a chapter in REWRITES: to the chapter it rewrites), with the files outside the chapters it adds (manifests, image, webhook): make diff-chapter 5
	@go build -o $(BIN)/chapter-branches ./scripts/chapter-branches
	@scripts/diff-chapter.sh $$($(BIN)/chapter-branches --dirs $(CHAPTER)) $$($(BIN)/chapter-branches --arrivals $(CHAPTER))

# The commit the chapter branches are made from; never the work tree.
FROM ?= HEAD

.PHONY: chapter-branches
chapter-branches: ## Create or update the local branches chapter/NN-slug, one commit per chapter (of FROM, default HEAD).
	@go build -o $(BIN)/chapter-branches ./scripts/chapter-branches
	@$(BIN)/chapter-branches --from '$(FROM)'

.PHONY: verify-chapter-branches
verify-chapter-branches: $(CONTROLLER_GEN) ## Check the chapter branches of FROM, in turn in one directory under CACHE_DIR (kept, so go's caches serve unchanged branches next time): each builds and passes its make test; git diff is make diff-chapter (no cluster).
	@go build -o $(BIN)/chapter-branches ./scripts/chapter-branches
	@$(BIN)/chapter-branches --verify --from '$(FROM)' --bin $(BIN) --work $(CACHE_DIR)/chapter-branches/branch

# The cluster targets and the pinned tools, shared with the chapter branches.
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
test-chapter: check-chapter-1 course-tool $(GINKGO) $(build_under_test) cluster-up ## Run chapter N's end-to-end suite: make test-chapter 5 (VARIANT=dir: against your version of chapter 5)
	@$(with_kubeconfig) $(variant_env) OPERATOR_BIN=$(operator_under_test) $(ginkgo_e2e) $$($(BIN)/course suite-dirs '$(CHAPTER)')

.PHONY: test-chapters
test-chapters: check-test-chapters course-tool $(GINKGO) build cluster-up ## Run every chapter's end-to-end suite (TEST_CHAPTERS="10 11": those chapters').
	@$(with_kubeconfig) OPERATOR_BIN=$(BIN)/operator $(ginkgo_e2e) $$($(BIN)/course suite-dirs '$(TEST_CHAPTERS)')

.PHONY: test-faults
test-faults: course-tool $(GINKGO) build build-faults cluster-up ## The crash sweep alone (the first fault chapter's lesson): the operator crashed after each of its writes in turn; every run must end as the run without a crash does.
	@$(with_kubeconfig) OPERATOR_BIN=$(BIN)/operator OPERATOR_FAULTS_BIN=$(BIN)/operator-faults $(ginkgo_e2e) --fail-on-empty --label-filter=crash-sweep $$($(BIN)/course suite-dirs $(firstword $(FAULTS_CHAPTERS)))

.PHONY: test-replicas
test-replicas: $(GINKGO) build cluster-up ## The framework's own suite of several operators at once (tests/replicas): three host replicas of the first chapter that elects a leader, one leading and two waiting; a replica that dies is seen, and only it.
	@$(with_kubeconfig) OPERATOR_BIN=$(BIN)/operator $(ginkgo_e2e) tests/replicas

# The runs on an API server alone (envtest) write here, beside any cluster.
ENVTEST_OUTPUT_DIR = $(OUTPUT_DIR)/envtest

.PHONY: test-envtest
test-envtest: ## The middle rung of the testing ladder, no Docker or network needed: on an API server alone (envtest), the lesson specs of the chapters that need no more fail against the chapter before and pass, a spec that needs more fails there for what the rung lacks (the table's TooLow), and a bug the fake client's unit tests let through is caught there (the table's FakeClientMisses).
	@$(MAKE) --no-print-directory envtest-proofs CLUSTER=envtest OUTPUT_DIR=$(ENVTEST_OUTPUT_DIR) ENVTEST_CLUSTER_DIR=$(ENVTEST_CLUSTER_DIR)

# What test-envtest runs, on the API server it starts and stops.
.PHONY: envtest-proofs
envtest-proofs: $(GINKGO) build prove-tool $(CONTROLLER_GEN) cluster-up
	@trap '$(MAKE) --no-print-directory cluster-down CLUSTER=envtest' EXIT; $(prove) --envtest-rung

.PHONY: bench
bench: build cluster-up install ## Benchmark the chapter the table says it measures (a row's Bench) and its baselines against a StatefulSet and a ReplicaSet (BENCH_SAMPLES, BENCH_N, BENCH_UNRELATED_PODS, BENCH_FLAGS); table on stdout, samples in _output/bench/.
	@go build -o $(BIN)/bench ./scripts/bench
	@$(with_kubeconfig) $(BIN)/bench --operator $(BIN)/operator --out $(OUTPUT_DIR)/bench $(BENCH_FLAGS)

# Every phase, small: so the benchmark cannot break unseen (numbers mean nothing).
BENCH_SMOKE_FLAGS := --samples 3 --warmup 1 --objects 6 --api-objects 6 --unrelated-pods 200 --steady 15s --out $(OUTPUT_DIR)/bench-smoke

.PHONY: bench-smoke
bench-smoke: ## Run every phase of make bench once, small (minutes): it must end with the measured chapter's verdicts.
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
	@$(prove) --chapter $(CHAPTER) --mutants --mutant '$(MUTANT)' --show

.PHONY: prove-chapters
prove-chapters: course-tool $(GINKGO) build prove-tool $(CONTROLLER_GEN) cluster-up ## Prove every chapter's lesson (and run every suite, and every mutant): make prove-chapter for each (PROVE_LANES="1-8 9-$(LATEST_CHAPTER)": those ranges at once, each but the first on a local cluster of its own under OUTPUT_DIR/lane-RANGE).
	@$(BIN)/course prove-lanes --output-dir $(OUTPUT_DIR) $(or $(PROVE_LANES),1-$(LATEST_CHAPTER))

.PHONY: prove-range
prove-range: $(GINKGO) build prove-tool $(CONTROLLER_GEN) cluster-up ## Prove chapters FROM-TO in turn, as make prove-chapters does, on the cluster of OUTPUT_DIR: make prove-range RANGE=1-6
	@$(prove) --range '$(RANGE)' --with-mutants

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
test-scratch-chapter: cluster-up ## Add chapters as the table of chapters says it is done, in a fresh clone of HEAD (under CACHE_DIR), on the cluster that is up: copies of the last chapter, of one whose suite deploys the operator and of one whose specs run it with faults, under the next numbers, their rows, make manifests and nothing else; then make run, make test-chapter (each run as its row says), make diff-chapter and make chapter-branches take them.
	@$(with_kubeconfig) FIRST_COMMAND_DIR=$(CACHE_DIR)/first-command $(GO_TEST) -tags e2e -count=1 -v -timeout 45m -run '^TestScratchChapter$$' ./tests/firstcommand/

.PHONY: try-it
try-it: $(if $(CHAPTER_ARG),check-chapter-1,check-test-chapters) build cluster-up install ## Run the "Try it" commands of every chapter's README (or chapter N's: make try-it 3; or TEST_CHAPTERS') and compare their output.
	@$(with_kubeconfig) TRY_IT_CHAPTERS='$(or $(named_chapter),$(TEST_CHAPTERS))' $(GO_TEST) -tags e2e -count=1 -v -timeout 60m ./tests/tryit/

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

# Where the workspaces and the progress file are (inside the module).
EXERCISE_DIR ?= _exercise
exercise = $(BIN)/exercise
exercise_dir = --dir '$(EXERCISE_DIR)'
EXERCISE_OUT ?= $(OUTPUT_DIR)/exercise

.PHONY: exercise-tool
exercise-tool:
	@go build -o $(BIN)/exercise ./scripts/exercise

.PHONY: exercise
exercise: exercise-tool ## Start chapter N's exercise: chapter N-1's package in _exercise/NN-slug, for you to make chapter N's: make exercise 5 (FORCE=yes: over your changes; CONTINUE=yes: from your own chapter N-1)
	@$(exercise) start $(exercise_dir) --chapter '$(named_chapter)' $(if $(FORCE),--force) $(if $(CONTINUE),--continue)

.PHONY: check
check: exercise-tool $(GINKGO) prove-tool cluster-tool $(CONTROLLER_GEN) ## Check your exercise: it builds, passes the chapter's lesson unit tests, then, on the cluster that is up, its lesson specs and the rest of its suite: make check (or make check 5)
	@$(with_kubeconfig) $(exercise) check $(exercise_dir) $(if $(named_chapter),--chapter '$(named_chapter)') $(check_flags)

# What make check and make bench-check pass bin/exercise.
check_flags = --out $(EXERCISE_OUT) --controller-gen $(CONTROLLER_GEN) --ginkgo $(GINKGO) --prove $(BIN)/prove --cluster $(BIN)/cluster \
  --state-dir $(LOCAL_CLUSTER_DIR) --env-file $(CLUSTER_ENV) --operator-main $(OPERATOR_MAIN) --operator-bin $(BIN)/operator-exercise \
  --kubernetes-bin $(KUBERNETES_BIN) --envtest-out $(ENVTEST_OUTPUT_DIR) --envtest-state-dir $(ENVTEST_CLUSTER_DIR) \
  --procs $(E2E_PROCS) $(if $(PROVE_TIMEOUT),--eventually-timeout $(PROVE_TIMEOUT))

# make bench-check times BENCH_CHECK_CHAPTERS' exercises (the table's BenchCheck).
BENCH_CHECK_ROUNDS ?= 3

.PHONY: bench-check
bench-check: exercise-tool $(GINKGO) prove-tool cluster-tool $(CONTROLLER_GEN) cluster-up ## Time make check of the exercises of BENCH_CHECK_CHAPTERS (the table's rows with BenchCheck), solved, in a scratch directory: a warm-up, then BENCH_CHECK_ROUNDS runs to the lesson specs' verdict; goal: a median under 60 s on the cluster, 15 s for a chapter judged on an API server alone first.
	@for n in $(BENCH_CHECK_CHAPTERS); do \
	  $(with_kubeconfig) $(exercise) bench --dir $(OUTPUT_DIR)/bench-check --chapter $$n --rounds $(BENCH_CHECK_ROUNDS) $(check_flags) || exit 1; done

.PHONY: hint
hint: exercise-tool ## Show the next hint of your exercise (or of chapter N's: make hint 5); never its code.
	@$(exercise) hint $(exercise_dir) $(if $(named_chapter),--chapter '$(named_chapter)')

.PHONY: solution
solution: exercise-tool ## Show the diff from your exercise's package to the chapter's.
	@$(exercise) solution $(exercise_dir) $(if $(named_chapter),--chapter '$(named_chapter)')

.PHONY: exercise-spec
exercise-spec: exercise-tool ## Start chapter N's spec exercise: a skeleton of the spec that proves its lesson, in _exercise/spec-NN-slug/, for you to complete: make exercise-spec 5 (FORCE=yes: over your spec)
	@$(exercise) start-spec $(exercise_dir) --chapter '$(named_chapter)' $(if $(FORCE),--force)

.PHONY: check-spec
check-spec: exercise-tool $(GINKGO) prove-tool cluster-tool $(CONTROLLER_GEN) ## Judge your spec on the cluster that is up: it must fail against chapter N-1 after its lesson step, pass against chapter N, and kill the chapter's mutants of the spec it stands for: make check-spec (or make check-spec 5)
	@$(with_kubeconfig) $(exercise) check-spec $(exercise_dir) $(if $(named_chapter),--chapter '$(named_chapter)') $(check_flags)

.PHONY: hint-spec
hint-spec: exercise-tool ## Show the next hint of your spec exercise; never its code.
	@$(exercise) hint-spec $(exercise_dir) $(if $(named_chapter),--chapter '$(named_chapter)')

.PHONY: progress
progress: exercise-tool ## Show your exercises: started, hints taken, solution seen, the last make check.
	@$(exercise) progress $(exercise_dir)

# The course's image holds every chapter; make deploy N selects one.
DEPLOY_SELECTS_CHAPTER := yes
include scripts/deploy.mk
