package localcluster

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

func TestMissingBinaries(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []string{"etcd", "kube-apiserver"} {
		if err := os.WriteFile(filepath.Join(dir, c), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got := Options{BinDir: dir}.MissingBinaries()
	want := []string{"kube-controller-manager", "kube-scheduler", "kubemark"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("MissingBinaries = %v, want %v", got, want)
	}
}

func TestRunningNeedsALiveProcessAndTheReadyFile(t *testing.T) {
	o := Options{StateDir: t.TempDir()}
	if pid := o.Running(); pid != 0 {
		t.Fatalf("Running = %d with an empty state directory", pid)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(o.StateDir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(pidFile, strconv.Itoa(os.Getpid()))
	if pid := o.Running(); pid != 0 {
		t.Errorf("Running = %d before the ready file exists", pid)
	}
	write(readyFile, "")
	if pid := o.Running(); pid != os.Getpid() {
		t.Errorf("Running = %d, want this process %d", pid, os.Getpid())
	}
	write(pidFile, "999999999") // no such process
	if pid := o.Running(); pid != 0 {
		t.Errorf("Running = %d for a pid that does not exist", pid)
	}
}

func TestUpSaysWhichBinariesAreMissing(t *testing.T) {
	o := Options{BinDir: t.TempDir(), StateDir: t.TempDir()}
	err := Up(context.Background(), o, []string{"unused"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "make kubernetes") || !strings.Contains(err.Error(), "kube-apiserver") {
		t.Errorf("Up error = %v, want the missing binaries and how to build them", err)
	}
}

func TestDownWithoutClusterIsFine(t *testing.T) {
	var out bytes.Buffer
	if err := Down(Options{StateDir: t.TempDir()}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "No local cluster running") {
		t.Errorf("Down said %q", out.String())
	}
}

func TestNodesNotReadyNamesMissingAndNotReadyNodes(t *testing.T) {
	node := func(name string, ready corev1.ConditionStatus) *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}},
		}
	}
	var objs []runtime.Object
	nodes := DefaultNodes
	for i := range nodes - 2 { // the last two: one not Ready, one not registered
		objs = append(objs, node(nodeName(i), corev1.ConditionTrue))
	}
	objs = append(objs, node(nodeName(nodes-2), corev1.ConditionFalse), node("another-node", corev1.ConditionTrue))
	got, err := nodesNotReady(context.Background(), fake.NewClientset(objs...), nodes)
	want := []string{nodeName(nodes - 2), nodeName(nodes - 1)}
	if err != nil || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("nodesNotReady = %v, %v; want %v", got, err, want)
	}
}

// A component that exits once the cluster is ready is started again
// until it has been restarted maxRestarts times; then the error names it.
func TestComponentRestartsUntilItsLimit(t *testing.T) {
	logDir := t.TempDir()
	c := &component{name: "exits-at-once", bin: "true"}
	if err := c.start("/bin", logDir); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= maxRestarts; i++ {
		<-c.proc.Done()
		if err := c.restart("/bin", logDir); err != nil {
			t.Fatalf("restart %d: %v", i, err)
		}
	}
	<-c.proc.Done()
	err := c.restart("/bin", logDir)
	if err == nil || !strings.Contains(err.Error(), "exits-at-once exited unexpectedly") {
		t.Fatalf("restart %d: got %v, want the component named in an error", maxRestarts+1, err)
	}
	if c.restarts != maxRestarts {
		t.Errorf("restarts = %d, want %d", c.restarts, maxRestarts)
	}
}
