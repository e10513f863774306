package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// TestKustomizationBuilds: what make deploy writes, built by kustomize
// itself from the project's config/, deploys what it was asked to: the
// image, the replicas, the chapter and the chapter's role.
func TestKustomizationBuilds(t *testing.T) {
	dir := t.TempDir()
	o := options{
		dir: filepath.Join(dir, "deploy"), config: "../../config", imageFile: writeFile(t, dir, "name", "example.com/redis-operator:abc123\n"),
		replicas: 0, chapter: "10", role: "../../config/rbac/role.yaml",
		namespace: "redis-operator-system", deployment: "redis-operator-controller-manager", secret: "redis-operator-webhook-server-cert",
	}
	built := build(t, o)
	mustContain(t, built,
		"image: example.com/redis-operator:abc123",
		"replicas: 0",
		"name: OPERATOR_CHAPTER\n          value: \"10\"",
		"kind: ClusterRole",
	)
}

// build writes o's kustomization and builds it with kustomize.
func build(t *testing.T, o options) string {
	t.Helper()
	if err := write(o); err != nil {
		t.Fatal(err)
	}
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), o.dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", o.dir, err)
	}
	out, err := res.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// writeFile writes data to dir/name and returns its path.
func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// mustContain fails the test for each of wants that built lacks.
func mustContain(t *testing.T, built string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(built, want) {
			t.Errorf("kustomize build has no %q:\n%s", want, built)
		}
	}
}

// TestCountAnswers: the webhook's calls answered with 200 are summed over
// its series; another webhook's, and other codes, are not.
func TestCountAnswers(t *testing.T) {
	metrics := `# TYPE apiserver_admission_webhook_request_total counter
apiserver_admission_webhook_request_total{code="200",name="vredis-v1.myapp.example.com",operation="CREATE",rejected="false",type="validating"} 3
apiserver_admission_webhook_request_total{code="200",name="vredis-v1.myapp.example.com",operation="UPDATE",rejected="true",type="validating"} 2
apiserver_admission_webhook_request_total{code="500",name="vredis-v1.myapp.example.com",operation="CREATE",rejected="true",type="validating"} 7
apiserver_admission_webhook_request_total{code="200",name="other.example.com",operation="CREATE",rejected="false",type="validating"} 11
`
	n, err := countAnswers([]byte(metrics))
	if err != nil || n != 5 {
		t.Errorf("countAnswers = %v, %v; want 5", n, err)
	}
}
