package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKustomizationWithWebhook: with the webhook, what make deploy writes
// builds into its configuration with the CA's bundle and the URL the API
// server calls instead of the Service, a variant's configuration in place
// of config/webhook's, and the certificate's Secret.
func TestKustomizationWithWebhook(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "deploy/certs/tls.crt", "CERT")
	writeFile(t, dir, "deploy/certs/tls.key", "KEY")
	writeFile(t, dir, "deploy/certs/ca.crt", "CA")
	variant, err := os.ReadFile("../../config/webhook/manifests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o := options{
		dir: filepath.Join(dir, "deploy"), config: "../../config", imageFile: writeFile(t, dir, "name", "example.com/redis-operator:abc123\n"),
		replicas: -1, webhook: true,
		webhookManifests: writeFile(t, dir, "variant/manifests.yaml", strings.ReplaceAll(string(variant), "timeoutSeconds: 5", "timeoutSeconds: 7")),
		certDir:          filepath.Join(dir, "deploy", "certs"), webhookURL: "https://127.0.0.1:9443",
		namespace: "redis-operator-system", deployment: "redis-operator-controller-manager", secret: "redis-operator-webhook-server-cert",
	}
	built := build(t, o)
	mustContain(t, built,
		"caBundle: Q0E=",
		"url: https://127.0.0.1:9443/validate-myapp-example-com-v1-redis", // the path of the variant's configuration
		"timeoutSeconds: 7",
		"name: redis-operator-webhook-server-cert",
		"type: kubernetes.io/tls",
	)
	if _, after, _ := strings.Cut(built, "clientConfig:\n"); strings.Contains(strings.SplitN(after, "failurePolicy", 2)[0], "service:") {
		t.Errorf("with --webhook-url, the webhook is still called through its Service:\n%s", built)
	}
}
