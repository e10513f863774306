package kindcluster

import (
	"net"
	"strings"
	"testing"
)

func TestOptionsFromEnv(t *testing.T) {
	t.Setenv("KIND_CLUSTER_NAME", "")
	t.Setenv("KIND_CLUSTER_DIR", "")
	t.Setenv("KIND_API_SERVER_PORT", "")
	o, err := OptionsFromEnv("/state")
	if err != nil {
		t.Fatal(err)
	}
	if o.Name != DefaultName || o.KubeconfigPath() != "/state/kubeconfig" || o.APIServerPort != 0 {
		t.Errorf("defaults: got %+v", o)
	}

	t.Setenv("KIND_CLUSTER_NAME", "mine")
	t.Setenv("KIND_CLUSTER_DIR", "/elsewhere")
	t.Setenv("KIND_API_SERVER_PORT", "6443")
	if o, err = OptionsFromEnv("/state"); err != nil {
		t.Fatal(err)
	}
	if o.Name != "mine" || o.StateDir != "/elsewhere" || o.APIServerPort != 6443 {
		t.Errorf("from the environment: got %+v", o)
	}

	for _, bad := range []string{"http", "0", "70000"} {
		t.Setenv("KIND_API_SERVER_PORT", bad)
		if _, err := OptionsFromEnv("/state"); err == nil || !strings.Contains(err.Error(), "KIND_API_SERVER_PORT") {
			t.Errorf("KIND_API_SERVER_PORT=%s: want an error naming the variable, got %v", bad, err)
		}
	}
}

func TestConfig(t *testing.T) {
	hashes := map[string]bool{}
	for _, img := range []NodeImage{{}, {OwnCNI: true}, {OwnCNI: true, NoCoreDNS: true}} {
		c := Config(Options{APIServerPort: 7443}, img)
		if c.Networking.DisableDefaultCNI != img.OwnCNI {
			t.Errorf("%+v: DisableDefaultCNI = %v", img, c.Networking.DisableDefaultCNI)
		}
		if c.Networking.APIServerPort != 7443 {
			t.Errorf("APIServerPort = %d, want 7443", c.Networking.APIServerPort)
		}
		if len(c.Nodes) != 1 {
			t.Errorf("want one node (the offline CNI config serves one), got %d", len(c.Nodes))
		}
		patches := strings.Join(append(c.ContainerdConfigPatches, c.KubeadmConfigPatches...), "\n")
		for _, want := range []string{"restrict_oom_score_adj = true", "failCgroupV1: false"} {
			if !strings.Contains(patches, want) {
				t.Errorf("config patches lack %q", want)
			}
		}
		// kind's InitConfiguration skips preflight: a patch of skipPhases
		// replaces its list, so it must keep preflight.
		skips := strings.Contains(patches, "- addon/coredns")
		if skips != img.NoCoreDNS || (skips && !strings.Contains(patches, "- preflight")) {
			t.Errorf("%+v: patches skip CoreDNS: %v; want %v, with preflight still skipped:\n%s", img, skips, img.NoCoreDNS, patches)
		}
		hashes[c.Nodes[0].Labels[ConfigLabel]] = true
	}
	// A cluster is recreated when its configuration's hash changes: what
	// the image asks for must not change it, or every start would.
	if len(hashes) != 1 {
		t.Errorf("the node images give %d configuration hashes, want 1: %v", len(hashes), hashes)
	}
	if want := configHash(baseConfig(Options{})); !hashes[want] {
		t.Errorf("the hash a running cluster is compared with, %s, is not the one it was made with: %v", want, hashes)
	}
}

func TestDockerAnswersWithoutDocker(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := DockerAnswers(t.Context()); err == nil || !strings.Contains(err.Error(), "docker") {
		t.Errorf("want an error about docker, got %v", err)
	}
}

func TestPortFree(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := portFree(l.Addr().(*net.TCPAddr).Port); err == nil || !strings.Contains(err.Error(), "is in use") {
		t.Errorf("a port in use: want an error, got %v", err)
	}
}
