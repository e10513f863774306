// Command deploy is make deploy: it writes the kustomization to apply,
// config/default with the image make docker-build made, and what the
// chapter deployed needs beside it (its role's rules, the chapter it runs,
// its webhook with the certificate's Secret and the CA that signed it);
// with --apply it applies it with kubectl, waits for the rollout and,
// with --wait-webhook, until the API server gets answers from the
// webhook. The kustomization is kustomize's own Kustomization
// (sigs.k8s.io/kustomize/api/types), written as YAML, so every field is
// one kustomize reads.
package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/yaml"
)

// options are the flags: what make deploy knows.
type options struct {
	dir, config, imageFile string
	replicas               int
	chapter                string
	role                   string
	webhook                bool
	webhookManifests       string
	certDir, webhookURL    string
	namespace, deployment  string
	secret                 string
	// apply: kubectl applies the kustomization and waits for the
	// rollout; waitWebhook: then for the webhook's answers.
	apply, waitWebhook bool
	kubectl            string
	// shipped: the chapter was not named, so the shipped one runs.
	shipped bool
}

func main() {
	var o options
	flag.StringVar(&o.dir, "dir", "_output/deploy", "where the kustomization (and what it copies) goes")
	flag.StringVar(&o.config, "config", "config", "the project's config/")
	flag.StringVar(&o.imageFile, "image-file", "", "the file holding the image's name:tag (make docker-build's)")
	flag.IntVar(&o.replicas, "replicas", -1, "the Deployment's replicas (-1: config/manager's)")
	flag.StringVar(&o.chapter, "chapter", "", "the chapter the operator runs (OPERATOR_CHAPTER; empty: the image's default)")
	flag.StringVar(&o.role, "role", "", "a role whose rules replace config/rbac's (empty: config/rbac's)")
	flag.BoolVar(&o.webhook, "webhook", false, "deploy the validating webhook (config/webhook)")
	flag.StringVar(&o.webhookManifests, "webhook-manifests", "", "a webhook configuration in place of config/webhook's (a variant's)")
	flag.StringVar(&o.certDir, "cert-dir", "", "the webhook's certificates: tls.crt, tls.key and the CA's ca.crt")
	flag.StringVar(&o.webhookURL, "webhook-url", "", "where the API server calls the webhook, in place of its Service (the base of a URL)")
	flag.StringVar(&o.namespace, "namespace", "redis-operator-system", "the operator's namespace")
	flag.StringVar(&o.deployment, "deployment", "redis-operator-controller-manager", "the Deployment's name")
	flag.StringVar(&o.secret, "secret", "redis-operator-webhook-server-cert", "the webhook certificate's Secret")
	flag.BoolVar(&o.apply, "apply", false, "apply the kustomization (kubectl apply -k) and wait for the Deployment's rollout")
	flag.BoolVar(&o.waitWebhook, "wait-webhook", false, "wait until the API server gets answers from the webhook (with --apply: after it; alone: only that)")
	flag.StringVar(&o.kubectl, "kubectl", "kubectl", "the kubectl to run")
	flag.BoolVar(&o.shipped, "shipped", false, "--chapter is the shipped one, as no chapter was named (for the message)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.waitWebhook && !o.apply {
		return waitForWebhook(o)
	}
	if err := write(o); err != nil {
		return err
	}
	if !o.apply {
		return nil
	}
	fmt.Println(deploying(o))
	if err := kubectl(o, "apply", "-k", o.dir); err != nil {
		return err
	}
	if err := kubectl(o, "rollout", "status", "deployment/"+o.deployment, "-n", o.namespace, "--timeout=3m"); err != nil {
		return err
	}
	if o.waitWebhook {
		return waitForWebhook(o)
	}
	return nil
}

// deploying says what is deployed.
func deploying(o options) string {
	image, _ := os.ReadFile(o.imageFile)
	msg := "Deploying " + strings.TrimSpace(string(image))
	if o.replicas >= 0 {
		msg += fmt.Sprintf(" with %d replicas", o.replicas)
	}
	if o.chapter != "" {
		msg += " running chapter " + o.chapter
		if o.shipped {
			msg += " (the shipped one; make deploy N deploys chapter N)"
		}
	}
	if o.webhook {
		msg += " with its webhook"
		if o.webhookURL != "" {
			msg += " at " + o.webhookURL
		}
	}
	return msg
}

// kubectl runs kubectl with args, its output the user's.
func kubectl(o options, args ...string) error {
	cmd := exec.Command(o.kubectl, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kubectl %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// webhookName is the webhook's name in its configuration: the API
// server's metrics count its calls under it.
const webhookName = "vredis-v1.myapp.example.com"

// waitForWebhook waits until the API server's count of the webhook's
// answered calls goes up on a server-side dry run, which stores nothing.
// Until kube-proxy routes the webhook's Service, a moment after its pods
// are Ready (seconds on a busy machine), the API server cannot reach the
// webhook, and failurePolicy Ignore admits every Redis unchecked.
func waitForWebhook(o options) error {
	probe := fmt.Sprintf("apiVersion: myapp.example.com/v1\nkind: Redis\nmetadata: {name: webhook-probe, namespace: %s}\n", o.namespace)
	for range 120 {
		before, err := webhookAnswers(o)
		if err != nil {
			return err
		}
		cmd := exec.Command(o.kubectl, "apply", "--dry-run=server", "-f", "-")
		cmd.Stdin, cmd.Stderr = strings.NewReader(probe), os.Stderr
		_ = cmd.Run() // refused or admitted, the webhook may have answered
		if after, err := webhookAnswers(o); err != nil {
			return err
		} else if after > before {
			return nil
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("after 2 min the API server still gets no answer from the webhook %s", webhookName)
}

// answered matches the API server's count of a webhook's calls answered
// with 200; its name is checked apart.
var answered = regexp.MustCompile(`^apiserver_admission_webhook_request_total\{.*code="200".*\} (\S+)$`)

// webhookAnswers is how many calls the webhook answered, by the API
// server's metrics.
func webhookAnswers(o options) (float64, error) {
	out, err := exec.Command(o.kubectl, "get", "--raw", "/metrics").Output()
	if err != nil {
		return 0, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	return countAnswers(out)
}

// countAnswers sums the webhook's calls answered with 200 in the API
// server's metrics.
func countAnswers(metrics []byte) (float64, error) {
	var n float64
	for line := range bytes.Lines(metrics) {
		m := answered.FindSubmatch(bytes.TrimSpace(line))
		if m == nil || !bytes.Contains(line, []byte(`name="`+webhookName+`"`)) {
			continue
		}
		v, err := strconv.ParseFloat(string(m[1]), 64)
		if err != nil {
			return 0, err
		}
		n += v
	}
	return n, nil
}

// webhookPathLine is the path: line of a webhook configuration.
var webhookPathLine = regexp.MustCompile(`(?m)^\s*path:\s*(\S+)\s*$`)

// webhookPath is the path of the webhook in config/webhook's
// configuration, which the URL the API server calls ends with.
func webhookPath(o options) (string, error) {
	manifests := o.webhookManifests
	if manifests == "" {
		manifests = filepath.Join(o.config, "webhook", "manifests.yaml")
	}
	data, err := os.ReadFile(manifests)
	if err != nil {
		return "", err
	}
	m := webhookPathLine.FindSubmatch(data)
	if m == nil {
		return "", errors.New(manifests + " names no webhook path")
	}
	return string(m[1]), nil
}

// write writes o.dir/kustomization.yaml, and the files it copies there.
func write(o options) error {
	k, files, err := kustomization(o)
	if err != nil {
		return err
	}
	// A copy of config/webhook an earlier deploy made (a variant's) goes.
	if err := os.RemoveAll(filepath.Join(o.dir, "webhook")); err != nil {
		return err
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		p := filepath.Join(o.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	out, err := yaml.Marshal(k)
	if err != nil {
		return err
	}
	header := "# Written by make deploy (scripts/deploy): config/default with the image make docker-build made.\n"
	return os.WriteFile(filepath.Join(o.dir, "kustomization.yaml"), append([]byte(header), out...), 0o644)
}

// kustomization is what make deploy applies, and the files it needs
// beside it, by their names in o.dir.
func kustomization(o options) (*types.Kustomization, map[string][]byte, error) {
	image, err := os.ReadFile(o.imageFile)
	if err != nil {
		return nil, nil, fmt.Errorf("the image's name (make docker-build writes it): %w", err)
	}
	ref := strings.TrimSpace(string(image))
	colon := strings.LastIndex(ref, ":")
	if colon < 0 || strings.Contains(ref[colon:], "/") {
		return nil, nil, fmt.Errorf("%s: %q is no image name:tag", o.imageFile, ref)
	}
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return nil, nil, err
	}
	configDir, err := filepath.Abs(o.config)
	if err != nil {
		return nil, nil, err
	}
	config, err := filepath.Rel(dir, configDir)
	if err != nil {
		return nil, nil, err
	}
	k := &types.Kustomization{
		Resources: []string{filepath.ToSlash(filepath.Join(config, "default"))},
		Images:    []types.Image{{Name: "controller", NewName: ref[:colon], NewTag: ref[colon+1:]}},
	}
	files := map[string][]byte{}
	if o.replicas >= 0 {
		k.Replicas = []types.Replica{{Name: o.deployment, Count: int64(o.replicas)}}
	}
	if o.role != "" {
		data, err := os.ReadFile(o.role)
		if err != nil {
			return nil, nil, err
		}
		files["role.yaml"] = data
		k.Patches = append(k.Patches, types.Patch{Path: "role.yaml"})
	}
	if o.chapter != "" {
		k.Patches = append(k.Patches, types.Patch{
			Target: &types.Selector{ResId: resID("Deployment", o.deployment)},
			Patch:  fmt.Sprintf(`[{"op": "add", "path": "/spec/template/spec/containers/0/env", "value": [{"name": "OPERATOR_CHAPTER", "value": %q}]}]`, o.chapter),
		})
	}
	if o.webhook {
		if err := addWebhook(o, k, files, config); err != nil {
			return nil, nil, err
		}
	}
	return k, files, nil
}

// addWebhook adds config/webhook (or a copy of it with a variant's
// configuration), the certificate's Secret and the CA's bundle, and the
// URL the API server calls if not the Service.
func addWebhook(o options, k *types.Kustomization, files map[string][]byte, config string) error {
	component := filepath.ToSlash(filepath.Join(config, "webhook"))
	if o.webhookManifests != "" {
		// config/webhook, with the configuration of the variant's markers.
		entries, err := os.ReadDir(filepath.Join(o.config, "webhook"))
		if err != nil {
			return err
		}
		for _, e := range entries {
			src := filepath.Join(o.config, "webhook", e.Name())
			if e.Name() == "manifests.yaml" {
				src = o.webhookManifests
			}
			data, err := os.ReadFile(src)
			if err != nil {
				return err
			}
			files[filepath.Join("webhook", e.Name())] = data
		}
		component = "webhook"
	}
	k.Components = []string{component}
	k.SecretGenerator = []types.SecretArgs{{
		GeneratorArgs: types.GeneratorArgs{Namespace: o.namespace, Name: o.secret, KvPairSources: types.KvPairSources{
			FileSources: []string{"certs/tls.crt", "certs/tls.key"},
		}},
		Type: "kubernetes.io/tls",
	}}
	// So that a new certificate updates the Secret the pods mount.
	k.GeneratorOptions = &types.GeneratorOptions{DisableNameSuffixHash: true}
	ca, err := os.ReadFile(filepath.Join(o.certDir, "ca.crt"))
	if err != nil {
		return fmt.Errorf("the webhook's CA (scripts/certs writes it): %w", err)
	}
	ops := []string{fmt.Sprintf(`{"op": "add", "path": "/webhooks/0/clientConfig/caBundle", "value": %q}`, base64.StdEncoding.EncodeToString(ca))}
	if o.webhookURL != "" {
		path, err := webhookPath(o)
		if err != nil {
			return err
		}
		ops = append(ops, `{"op": "remove", "path": "/webhooks/0/clientConfig/service"}`,
			fmt.Sprintf(`{"op": "add", "path": "/webhooks/0/clientConfig/url", "value": %q}`, o.webhookURL+path))
	}
	k.Patches = append(k.Patches, types.Patch{
		Target: &types.Selector{ResId: resID("ValidatingWebhookConfiguration", "")},
		Patch:  "[" + strings.Join(ops, ", ") + "]",
	})
	return nil
}

// resid selects the resources of kind named name (any name if empty).
func resID(kind, name string) resid.ResId {
	return resid.ResId{Gvk: resid.Gvk{Kind: kind}, Name: name}
}
