# What the course's Makefile and a chapter branch's share: the cluster
# targets, the helpers that run a command against the cluster make
# cluster-up chose, the pinned tools. The includer sets the versions and paths.

# cgo off everywhere, as the shipped static binary: dependencies compile once.
export CGO_ENABLED := 0

##@ Cluster

.PHONY: kubernetes
kubernetes: ## Build the Kubernetes binaries for the local cluster (cached by version; ~14 min cold on 2 cores).
	@scripts/build-kubernetes.sh $(KUBERNETES_VERSION) $(ETCD_VERSION)

.PHONY: kubectl
kubectl: ## Build kubectl at the cluster's version (cached; part of `make kubernetes`).
	@scripts/build-kubernetes.sh $(KUBERNETES_VERSION) $(ETCD_VERSION) kubectl

kind_node_image_build = KUBERNETES_VERSION=$(KUBERNETES_VERSION) ETCD_VERSION=$(ETCD_VERSION) KIND_VERSION=$(KIND_VERSION) \
	  CONTAINERD_VERSION=$(CONTAINERD_VERSION) RUNC_VERSION=$(RUNC_VERSION) \
	  CNI_PLUGINS_VERSION=$(CNI_PLUGINS_VERSION) DEBIAN_SUITE=$(DEBIAN_SUITE) DEBIAN_MIRROR=$(DEBIAN_MIRROR) \
	  KIND_NODE_IMAGE=$(KIND_OFFLINE_NODE_IMAGE) REDIS_IMAGE=$(REDIS_IMAGE) CACHE_DIR=$(CACHE_DIR) \
	  scripts/kind-node-image/build.sh

.PHONY: kind-node-image
kind-node-image: ## Build the offline kind node image, no registry needed (root; cached; ~21 min cold).
	@$(kind_node_image_build)

.PHONY: kind-node-runtime
kind-node-runtime: ## Build only the part of the node image that needs neither Kubernetes nor Docker: containerd, runc, the CNI plugins, the Debian root filesystems (root; cached).
	@$(kind_node_image_build) --runtime

.PHONY: cluster-up
cluster-up: cluster-tool kubectl ## Start the test cluster (CLUSTER=kind|local|envtest|existing|auto; envtest: an API server alone) or reuse it; prints export KUBECONFIG=...
	@cluster=$$($(BIN)/cluster choose); \
	if [[ $$cluster == local || $$cluster == envtest ]]; then $(MAKE) --no-print-directory kubernetes; fi; \
	$(BIN)/cluster up --cluster "$$cluster" --bin-dir $(KUBERNETES_BIN) --state-dir $(LOCAL_CLUSTER_DIR) --envtest-state-dir $(ENVTEST_CLUSTER_DIR) --env-file $(CLUSTER_ENV)

.PHONY: cluster-tool
cluster-tool:
	@go build -o $(BIN)/cluster ./scripts/cluster

.PHONY: cluster-down
cluster-down: cluster-tool ## Stop the test cluster (with CLUSTER=auto: the kind and the local one).
	@$(BIN)/cluster down --state-dir $(LOCAL_CLUSTER_DIR) --envtest-state-dir $(ENVTEST_CLUSTER_DIR) --env-file $(CLUSTER_ENV)

.PHONY: apiserver-stop
apiserver-stop: cluster-tool ## Stop the test cluster's kube-apiserver, as an upgrade or a crash would; etcd and the nodes keep running.
	@$(with_kubeconfig) $(BIN)/cluster stop-apiserver --state-dir $(LOCAL_CLUSTER_DIR)

.PHONY: apiserver-start
apiserver-start: cluster-tool ## Start again the kube-apiserver that apiserver-stop stopped, as it was, and wait until it answers.
	@$(with_kubeconfig) $(BIN)/cluster start-apiserver --state-dir $(LOCAL_CLUSTER_DIR)

# ---- helpers ----------------------------------------------------------------
# $(call chapter_number,N): N as the table numbers it (5 for 5 or 05);
# $(call chapter_name,N): chapter N's NN-slug (CHAPTER_NAMES), or empty.
chapter_number = $(patsubst 0%,%,$(1))
chapter_name = $(filter $(call chapter_number,$(1))-% 0$(call chapter_number,$(1))-%,$(CHAPTER_NAMES))
output_dir = $(patsubst $(CURDIR)/%,%,$(OUTPUT_DIR))
# --vet=off: make vet vets the suites.
ginkgo_e2e = $(GINKGO) --tags=e2e --vet=off --procs=$(E2E_PROCS) $(GINKGO_FLAGS)
KUBECTL_CMD = $(if $(wildcard $(KUBECTL)),$(KUBECTL),kubectl)
# make cluster-up's backend and kubeconfig win when CLUSTER is auto or names it.
cluster_env_matches = $(or $(filter auto,$(CLUSTER)),$(shell grep -qx 'export CLUSTER=$(CLUSTER)' $(CLUSTER_ENV) && echo yes))
with_kubeconfig = $(if $(and $(filter-out existing,$(CLUSTER)),$(wildcard $(CLUSTER_ENV)),$(cluster_env_matches)),source $(CLUSTER_ENV) &&)

$(CONTROLLER_GEN):
	GOBIN=$(BIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)
	mv $(BIN)/controller-gen $@

$(GOLANGCI_LINT):
	@echo "Building golangci-lint $(GOLANGCI_LINT_VERSION) into bin/ (about 3 minutes cold)"
	GOBIN=$(BIN) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(BIN)/golangci-lint $@

$(GINKGO):
	@test -n "$(GINKGO_VERSION)" || { echo "error: cannot read the Ginkgo version from go.mod" >&2; exit 1; }
	GOBIN=$(BIN) go install github.com/onsi/ginkgo/v2/ginkgo@$(GINKGO_VERSION)
	mv $(BIN)/ginkgo $@
