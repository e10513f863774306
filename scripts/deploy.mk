# The operator in the cluster (chapter 9 on): its image, built offline, and
# `make deploy` / `make undeploy`. The course's Makefile and a chapter
# branch's both include this file; it uses their BIN, KUBECTL_CMD,
# with_kubeconfig and their cluster-up and install targets.

# The image: a static binary built here, packed with no base image, no
# Dockerfile and no network (internal/image). Its tag is taken from its
# digest, which the same source always gives, so a new build is a new tag
# and IfNotPresent never runs a stale image.
IMAGE_REPOSITORY ?= example.com/redis-operator
IMAGE_DIR := _output/image
IMAGE_ARCHIVE := $(IMAGE_DIR)/redis-operator.tar
# make deploy writes its kustomization here: config/default with the image.
DEPLOY_DIR := _output/deploy
# How many replicas make deploy runs; empty keeps the Deployment's 2. With 0
# it deploys the manifests and no pod, which is all the local backend, whose
# nodes run no containers, can do.
DEPLOY_REPLICAS ?=
DEPLOYMENT := redis-operator-controller-manager
OPERATOR_NAMESPACE := redis-operator-system
load_image = $(BIN)/cluster load-image --state-dir $(LOCAL_CLUSTER_DIR) --archive $(IMAGE_ARCHIVE)

##@ In the cluster

.PHONY: docker-build
docker-build: ## Build the operator's image offline into _output/image/redis-operator.tar (docker load -i reads it).
	@mkdir -p $(IMAGE_DIR)
	CGO_ENABLED=0 GOOS=linux GOARCH=$$(go env GOARCH) go build -trimpath -buildvcs=false -ldflags '-s -w' -o $(BIN)/manager-linux ./cmd
	@go run ./scripts/image --binary $(BIN)/manager-linux --arch $$(go env GOARCH) --repository $(IMAGE_REPOSITORY) \
	  --out $(IMAGE_ARCHIVE) --name-file $(IMAGE_DIR)/name

.PHONY: load-image
load-image: docker-build cluster-up ## Put the operator's image on every node of the kind cluster, with no registry.
	@$(load_image)

.PHONY: deploy
deploy: docker-build cluster-tool install ## Deploy the operator (config/default, 2 replicas) with the image just built, and wait for it (DEPLOY_REPLICAS=0: no pods).
	@if [[ '$(DEPLOY_REPLICAS)' != 0 ]]; then $(load_image); fi
	@mkdir -p $(DEPLOY_DIR); image=$$(cat $(IMAGE_DIR)/name); \
	{ echo "# Written by make deploy: config/default with the image make docker-build made."; \
	  echo "resources:"; echo "- ../../config/default"; \
	  echo "images:"; echo "- name: controller"; echo "  newName: $${image%:*}"; echo "  newTag: $${image##*:}"; \
	  if [[ -n '$(DEPLOY_REPLICAS)' ]]; then echo "replicas:"; echo "- name: $(DEPLOYMENT)"; echo "  count: $(DEPLOY_REPLICAS)"; fi; \
	  if [[ -n '$(OPERATOR_CHAPTER)' ]]; then echo "patches:"; echo "- target: {kind: Deployment, name: $(DEPLOYMENT)}"; echo "  patch: |-"; \
	    echo "    - {op: add, path: /spec/template/spec/containers/0/env, value: [{name: OPERATOR_CHAPTER, value: \"$(OPERATOR_CHAPTER)\"}]}"; fi; \
	} > $(DEPLOY_DIR)/kustomization.yaml; \
	echo "Deploying $$image$(if $(DEPLOY_REPLICAS), with $(DEPLOY_REPLICAS) replicas)$(if $(OPERATOR_CHAPTER), running chapter $(OPERATOR_CHAPTER))"
	@$(with_kubeconfig) $(KUBECTL_CMD) apply -k $(DEPLOY_DIR)
	@$(with_kubeconfig) $(KUBECTL_CMD) rollout status deployment/$(DEPLOYMENT) -n $(OPERATOR_NAMESPACE) --timeout=3m

.PHONY: undeploy
undeploy: ## Delete what make deploy applied, but not the CRD: every Redis and its pods stay.
	@$(with_kubeconfig) $(KUBECTL_CMD) delete -k config/default --ignore-not-found
