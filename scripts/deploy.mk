# The operator in the cluster (chapter 10 on): its image, built offline, and
# `make deploy` / `make undeploy`. The course's Makefile and a chapter
# branch's both include this file; it uses their BIN, KUBECTL_CMD,
# with_kubeconfig and their cluster-up and install targets.

# The image: a static binary built here, packed with no base image, no
# Dockerfile and no network (scripts/image). Its tag is taken from its
# digest, which the same source always gives, so a new build is a new tag
# and IfNotPresent never runs a stale image.
IMAGE_REPOSITORY ?= example.com/redis-operator
IMAGE_DIR := $(output_dir)/image
IMAGE_ARCHIVE := $(IMAGE_DIR)/redis-operator.tar
# make deploy writes its kustomization here: config/default with the image.
DEPLOY_DIR := $(output_dir)/deploy
# How many replicas make deploy runs; empty keeps the Deployment's 2. With 0
# it deploys the manifests and no pod, which is all the local backend, whose
# nodes run no containers, can do.
DEPLOY_REPLICAS ?=
DEPLOYMENT := redis-operator-controller-manager
OPERATOR_NAMESPACE := redis-operator-system
# The role make deploy binds the operator to: config/rbac's (the shipped
# chapter's, in a branch its own), with the rules generated from the
# markers of the chapter it runs (OPERATOR_CHAPTER) in the course, or of a
# variant (OPERATOR_ROLE: make test-chapter N VARIANT=dir sets it).
deploy_role = $(or $(OPERATOR_ROLE),$(if $(DEPLOY_SELECTS_CHAPTER),$(wildcard $(addprefix chapters/,$(addsuffix /role.yaml,$(call chapter_name,$(deploy_chapter)))))))
# The chapter make deploy runs: OPERATOR_CHAPTER (the suites set it), else
# the chapter named (make deploy 11, or CHAPTER=11), else the shipped one
# (SHIPPED_CHAPTER); in a chapter branch, its own. The chapters that run
# in the cluster are IN_CLUSTER_CHAPTERS, those that serve the webhook
# WEBHOOK_CHAPTERS (scripts/chapters.mk, the table of chapters). A suite
# that sets OPERATOR_CHAPTER deploys whatever it proves, the chapter
# before the first in the cluster included (its lesson specs against it),
# with the webhook's configuration whenever the checkout has one (the
# first webhook chapter's lesson specs, against the chapter before).
deploy_chapter = $(or $(OPERATOR_CHAPTER),$(CHAPTER))
deploy_chapter_named = $(or $(CHAPTER_ARG),$(filter command line environment,$(origin OPERATOR_CHAPTER) $(origin CHAPTER)))
load_image = $(BIN)/cluster load-image --state-dir $(LOCAL_CLUSTER_DIR) --archive $(IMAGE_ARCHIVE)

# The validating webhook, where config/webhook exists, when the chapter
# deployed is one of WEBHOOK_CHAPTERS (or a suite deploys it).
# Its certificates are the project's own (scripts/certs): a CA and a
# serving certificate it signs, kept in _output/deploy/certs, for the
# Service's names and for 127.0.0.1. A variant's webhook configuration is
# generated from its own markers (make build-variant), as its role is:
# make deploy then deploys config/webhook with that configuration.
variant_webhook = $(if $(VARIANT),$(wildcard $(VARIANT_OUT)/manifests.yaml))
WEBHOOK = $(if $(or $(OPERATOR_CHAPTER),$(filter $(webhook_chapters),$(deploy_chapter))),$(wildcard config/webhook/kustomization.yaml))
# WEBHOOK_CHAPTERS as a chapter may be named (9 or 09).
webhook_chapters := $(foreach n,$(WEBHOOK_CHAPTERS),$(n) $(call two_digits,$(n)))
WEBHOOK_SERVICE := redis-operator-webhook-service
WEBHOOK_CERT_DIR := $(DEPLOY_DIR)/certs
webhook_certs = go run ./scripts/certs --dir $(WEBHOOK_CERT_DIR) \
  --dns $(WEBHOOK_SERVICE).$(OPERATOR_NAMESPACE).svc,$(WEBHOOK_SERVICE).$(OPERATOR_NAMESPACE).svc.cluster.local --ip 127.0.0.1
# Where the API server calls the webhook when it cannot reach a Service's
# pods, as on the local backend, whose API server runs on the host: the
# base of a URL, e.g. https://127.0.0.1:9443. Empty: the Service.
WEBHOOK_URL ?=
webhook_path = $(shell sed -n 's/^ *path: *//p' config/webhook/manifests.yaml)
# The webhook's name in its configuration: the API server's metrics count
# its calls under it.
WEBHOOK_NAME := vredis-v1.myapp.example.com
# make deploy waits for the webhook when pods serve it: not with no pod
# (DEPLOY_REPLICAS=0), nor when they run a chapter that serves none.
webhook_served = $(if $(filter 0,$(DEPLOY_REPLICAS)),,$(if $(filter $(webhook_chapters),$(deploy_chapter)),yes))
# Until kube-proxy routes the webhook's Service, a moment after its pods
# are Ready (seconds on a busy machine), the API server cannot reach the
# webhook and failurePolicy Ignore admits every Redis unchecked. So wait
# until the API server's count of the webhook's answered calls goes up on
# a server-side dry run, which stores nothing.
webhook_answers = $(KUBECTL_CMD) get --raw /metrics | awk '/^apiserver_admission_webhook_request_total/ && /code="200"/ && /name="$(WEBHOOK_NAME)"/ {n += $$NF} END {print n + 0}'
wait_for_webhook = for i in $$(seq 120); do before=$$($(webhook_answers)); \
	  printf 'apiVersion: myapp.example.com/v1\nkind: Redis\nmetadata: {name: webhook-probe, namespace: $(OPERATOR_NAMESPACE)}\n' \
	    | $(KUBECTL_CMD) apply --dry-run=server -f - > /dev/null; \
	  (( $$($(webhook_answers)) > before )) && exit 0; sleep 1; done; \
	echo "error: after 2 min the API server still gets no answer from the webhook $(WEBHOOK_NAME)" >&2; exit 1

##@ In the cluster

.PHONY: docker-build
docker-build: ## Build the operator's image offline into _output/image/redis-operator.tar (docker load -i reads it).
	@mkdir -p $(IMAGE_DIR)
	GOOS=linux GOARCH=$$(go env GOARCH) go build $(if $(VARIANT),-overlay $(VARIANT_OUT)/overlay.json) -buildvcs=false -ldflags '-s -w' -o $(IMAGE_DIR)/manager-linux $(OPERATOR_MAIN)
	@go run ./scripts/image --binary $(IMAGE_DIR)/manager-linux --arch $$(go env GOARCH) --repository $(IMAGE_REPOSITORY) \
	  --out $(IMAGE_ARCHIVE) --name-file $(IMAGE_DIR)/name

.PHONY: load-image
load-image: docker-build cluster-up ## Put the operator's image on every node of the kind cluster, with no registry.
	@$(load_image)

.PHONY: deploy
deploy: check-deploy-chapter docker-build cluster-tool install ## Deploy chapter N's operator (make deploy 11; default the shipped one: config/default, 2 replicas; its webhook if it serves one) with the image just built, and wait for it (DEPLOY_REPLICAS=0: no pods).
	@if [[ '$(DEPLOY_REPLICAS)' != 0 ]]; then $(load_image); fi
	@mkdir -p $(DEPLOY_DIR); $(if $(WEBHOOK),$(webhook_certs);) image=$$(cat $(IMAGE_DIR)/name); \
	config=$$(realpath -m --relative-to=$(DEPLOY_DIR) config); \
	{ echo "# Written by make deploy: config/default with the image make docker-build made."; \
	  echo "resources:"; echo "- $$config/default"; \
	  echo "images:"; echo "- name: controller"; echo "  newName: $${image%:*}"; echo "  newTag: $${image##*:}"; \
	  if [[ -n '$(DEPLOY_REPLICAS)' ]]; then echo "replicas:"; echo "- name: $(DEPLOYMENT)"; echo "  count: $(DEPLOY_REPLICAS)"; fi; \
	  if [[ -n '$(WEBHOOK)' ]]; then \
	    rm -rf $(DEPLOY_DIR)/webhook; \
	    if [[ -n '$(variant_webhook)' ]]; then cp -r config/webhook $(DEPLOY_DIR)/webhook; cp '$(variant_webhook)' $(DEPLOY_DIR)/webhook/manifests.yaml; \
	      echo "components:"; echo "- webhook # config/webhook, with the configuration of $(VARIANT)'s markers"; \
	    else echo "components:"; echo "- $$config/webhook"; fi; \
	    echo "secretGenerator:"; echo "- name: redis-operator-webhook-server-cert"; echo "  namespace: $(OPERATOR_NAMESPACE)"; \
	    echo "  type: kubernetes.io/tls"; echo "  files:"; echo "  - certs/tls.crt"; echo "  - certs/tls.key"; \
	    echo "generatorOptions:"; echo "  disableNameSuffixHash: true # so that a new certificate updates the Secret the pods mount"; \
	  fi; \
	  if [[ -n '$(DEPLOY_SELECTS_CHAPTER)$(WEBHOOK)$(deploy_role)' ]]; then echo "patches:"; fi; \
	  if [[ -n '$(deploy_role)' ]]; then cp '$(deploy_role)' $(DEPLOY_DIR)/role.yaml; \
	    echo "- path: role.yaml # $(deploy_role): the rules of the chapter it runs"; fi; \
	  if [[ -n '$(DEPLOY_SELECTS_CHAPTER)' ]]; then echo "- target: {kind: Deployment, name: $(DEPLOYMENT)}"; echo "  patch: |-"; \
	    echo "    - {op: add, path: /spec/template/spec/containers/0/env, value: [{name: OPERATOR_CHAPTER, value: \"$(deploy_chapter)\"}]}"; fi; \
	  if [[ -n '$(WEBHOOK)' ]]; then echo "- target: {kind: ValidatingWebhookConfiguration}"; echo "  patch: |-"; \
	    echo "    - {op: add, path: /webhooks/0/clientConfig/caBundle, value: $$(base64 -w0 $(WEBHOOK_CERT_DIR)/ca.crt)}"; \
	    if [[ -n '$(WEBHOOK_URL)' ]]; then echo "    - {op: remove, path: /webhooks/0/clientConfig/service}"; \
	      echo "    - {op: add, path: /webhooks/0/clientConfig/url, value: \"$(WEBHOOK_URL)$(webhook_path)\"}"; fi; fi; \
	} > $(DEPLOY_DIR)/kustomization.yaml; \
	echo "Deploying $$image$(if $(DEPLOY_REPLICAS), with $(DEPLOY_REPLICAS) replicas)$(if $(DEPLOY_SELECTS_CHAPTER), running chapter $(deploy_chapter)$(if $(deploy_chapter_named),, (the shipped one; make deploy N deploys chapter N)))$(if $(WEBHOOK), with its webhook$(if $(WEBHOOK_URL), at $(WEBHOOK_URL)))"
	@$(with_kubeconfig) $(KUBECTL_CMD) apply -k $(DEPLOY_DIR)
	@$(with_kubeconfig) $(KUBECTL_CMD) rollout status deployment/$(DEPLOYMENT) -n $(OPERATOR_NAMESPACE) --timeout=3m
	$(if $(and $(WEBHOOK),$(webhook_served)),@$(with_kubeconfig) $(wait_for_webhook))

# check-deploy-chapter fails unless the chapter named (not a suite's
# OPERATOR_CHAPTER) is one that runs in the cluster.
.PHONY: check-deploy-chapter
check-deploy-chapter:
	@if [[ -z '$(OPERATOR_CHAPTER)' ]] && [[ '$(deploy_chapter)' =~ ^[0-9]+$$ && " $(REWRITES) " == *" $$((10#$(deploy_chapter))) "* ]]; then \
	  echo "error: chapter $(deploy_chapter) rewrites a chapter that runs on your machine, and runs there too: make run $(deploy_chapter)" >&2; exit 2; fi
	@if [[ -z '$(OPERATOR_CHAPTER)' ]] && { ! [[ '$(deploy_chapter)' =~ ^[0-9]+$$ ]] || [[ " $(IN_CLUSTER_CHAPTERS) " != *" $$((10#$(deploy_chapter))) "* ]]; }; then \
	  echo "error: make deploy runs the chapters that run in the cluster, $(IN_CLUSTER_CHAPTERS) (got chapter '$(deploy_chapter)'); make run N runs any chapter on your machine" >&2; exit 2; fi

.PHONY: undeploy
undeploy: ## Delete what make deploy applied, but not the CRD: every Redis and its pods stay.
	$(if $(wildcard config/webhook/kustomization.yaml),@$(with_kubeconfig) $(KUBECTL_CMD) delete -f config/webhook/manifests.yaml --ignore-not-found # first: no webhook without its operator)
	@$(with_kubeconfig) $(KUBECTL_CMD) delete -k config/default --ignore-not-found

.PHONY: wait-webhook
wait-webhook: ## Wait until the API server gets answers from the webhook, if the chapter deployed (OPERATOR_CHAPTER, or N) serves one (make deploy does it, where pods serve the webhook).
	$(if $(filter $(webhook_chapters),$(deploy_chapter)),@$(with_kubeconfig) $(wait_for_webhook),@echo "Chapter $(deploy_chapter) serves no webhook: nothing to wait for")

.PHONY: rotate-webhook-cert
rotate-webhook-cert: ## Replace the webhook's serving certificate (the CA stays) and its Secret; the operator reloads it, with no restart.
	@test -f $(DEPLOY_DIR)/kustomization.yaml || { echo "error: nothing deployed from here; run make deploy first" >&2; exit 2; }
	@$(webhook_certs) --rotate
	@$(with_kubeconfig) $(KUBECTL_CMD) apply -k $(DEPLOY_DIR)
