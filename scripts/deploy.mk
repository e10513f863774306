# The operator in the cluster: its image, built offline, make deploy and
# make undeploy (scripts/deploy). The course's Makefile and a chapter
# branch's include this file. The image (scripts/image) is a static binary
# with no base image; its tag is its digest, so a new build is a new tag.
IMAGE_REPOSITORY ?= example.com/redis-operator
IMAGE_DIR := $(output_dir)/image
IMAGE_ARCHIVE := $(IMAGE_DIR)/redis-operator.tar
# make deploy's kustomization: config/default with the image.
DEPLOY_DIR := $(output_dir)/deploy
# Empty: the Deployment's 2; 0: no pod (the local backend's nodes run none).
DEPLOY_REPLICAS ?=
DEPLOYMENT := redis-operator-controller-manager
OPERATOR_NAMESPACE := redis-operator-system
# The role of the chapter deployed (or of a variant: OPERATOR_ROLE).
deploy_role = $(or $(OPERATOR_ROLE),$(if $(DEPLOY_SELECTS_CHAPTER),$(wildcard $(addprefix chapters/,$(addsuffix /role.yaml,$(call chapter_name,$(deploy_chapter)))))))
# The chapter deployed: a suite's OPERATOR_CHAPTER, the one named, or the
# shipped one; with its webhook whenever a suite deploys it.
deploy_chapter = $(or $(OPERATOR_CHAPTER),$(CHAPTER))
deploy_chapter_named = $(or $(CHAPTER_ARG),$(filter command line environment,$(origin OPERATOR_CHAPTER) $(origin CHAPTER)))
load_image = $(BIN)/cluster load-image --state-dir $(LOCAL_CLUSTER_DIR) --archive $(IMAGE_ARCHIVE)

# The webhook (config/webhook), with the project's own CA and serving
# certificate (scripts/certs, in _output/deploy/certs).
variant_webhook = $(if $(VARIANT),$(wildcard $(VARIANT_OUT)/manifests.yaml))
WEBHOOK = $(if $(or $(OPERATOR_CHAPTER),$(filter $(WEBHOOK_CHAPTERS),$(call chapter_number,$(deploy_chapter)))),$(wildcard config/webhook/kustomization.yaml))
WEBHOOK_SERVICE := redis-operator-webhook-service
WEBHOOK_CERT_DIR := $(DEPLOY_DIR)/certs
webhook_certs = go run ./scripts/certs --dir $(WEBHOOK_CERT_DIR) \
  --dns $(WEBHOOK_SERVICE).$(OPERATOR_NAMESPACE).svc,$(WEBHOOK_SERVICE).$(OPERATOR_NAMESPACE).svc.cluster.local --ip 127.0.0.1
# Where the API server calls the webhook if not its Service (the local
# backend's runs on the host), e.g. https://127.0.0.1:9443.
WEBHOOK_URL ?=
# make deploy waits for the webhook when pods serve it.
webhook_served = $(if $(filter 0,$(DEPLOY_REPLICAS)),,$(if $(filter $(WEBHOOK_CHAPTERS),$(call chapter_number,$(deploy_chapter))),yes))
deploy_tool = $(with_kubeconfig) go run ./scripts/deploy --kubectl $(KUBECTL_CMD) --namespace $(OPERATOR_NAMESPACE)

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
deploy: $(if $(value DEPLOY_SELECTS_CHAPTER),check-deploy-chapter) docker-build cluster-tool install ## Deploy chapter N's operator (make deploy 11; default the shipped one: config/default, 2 replicas; its webhook if it serves one) with the image just built, and wait for it (DEPLOY_REPLICAS=0: no pods).
	$(if $(filter 0,$(DEPLOY_REPLICAS)),,@$(load_image))
	@mkdir -p $(DEPLOY_DIR); $(if $(WEBHOOK),$(webhook_certs);) $(deploy_tool) --apply --dir $(DEPLOY_DIR) --config config --image-file $(IMAGE_DIR)/name \
	  --deployment $(DEPLOYMENT) $(if $(DEPLOY_REPLICAS),--replicas $(DEPLOY_REPLICAS)) $(if $(DEPLOY_SELECTS_CHAPTER),--chapter '$(deploy_chapter)' $(if $(deploy_chapter_named),,--shipped)) \
	  $(if $(deploy_role),--role '$(deploy_role)') $(if $(and $(WEBHOOK),$(webhook_served)),--wait-webhook) \
	  $(if $(WEBHOOK),--webhook --cert-dir $(WEBHOOK_CERT_DIR) $(if $(variant_webhook),--webhook-manifests '$(variant_webhook)') $(if $(WEBHOOK_URL),--webhook-url '$(WEBHOOK_URL)'))

.PHONY: undeploy
undeploy: ## Delete what make deploy applied, but not the CRD: every Redis and its pods stay.
	$(if $(wildcard config/webhook/kustomization.yaml),@$(with_kubeconfig) $(KUBECTL_CMD) delete -f config/webhook/manifests.yaml --ignore-not-found # first: no webhook without its operator)
	@$(with_kubeconfig) $(KUBECTL_CMD) delete -k config/default --ignore-not-found

.PHONY: wait-webhook
wait-webhook: ## Wait until the API server gets answers from the webhook, if the chapter deployed (OPERATOR_CHAPTER, or N) serves one (make deploy does it, where pods serve the webhook).
	$(if $(filter $(WEBHOOK_CHAPTERS),$(call chapter_number,$(deploy_chapter))),@$(deploy_tool) --wait-webhook,@echo "Chapter $(deploy_chapter) serves no webhook: nothing to wait for")

.PHONY: rotate-webhook-cert
rotate-webhook-cert: ## Replace the webhook's serving certificate (the CA stays) and its Secret; the operator reloads it, with no restart.
	@test -f $(DEPLOY_DIR)/kustomization.yaml || { echo "error: nothing deployed from here; run make deploy first" >&2; exit 2; }
	@$(webhook_certs) --rotate
	@$(with_kubeconfig) $(KUBECTL_CMD) apply -k $(DEPLOY_DIR)
