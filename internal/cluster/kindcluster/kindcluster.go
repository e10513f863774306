// Package kindcluster runs the test cluster as a kind cluster, through
// kind's Go API (sigs.k8s.io/kind/pkg/cluster), so that learners need Docker
// but not the kind command. The cluster keeps its kubeconfig in a private
// file, is reused while it exists, and its logs can be exported for the
// failure dump.
//
// The node image is, in this order: the one KIND_NODE_IMAGE names; kind's
// default node image when Docker has it; the offline image that
// `make kind-node-image` builds when Docker has that; else kind's default,
// pulled.
package kindcluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/apis/config/defaults"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/constants"
	kindnodes "sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
	kindcmd "sigs.k8s.io/kind/pkg/cmd"
	kinderrors "sigs.k8s.io/kind/pkg/errors"
	kindexec "sigs.k8s.io/kind/pkg/exec"

	"example.com/redis-operator/internal/cluster/apiserver"
)

// DefaultName is the kind cluster's name unless KIND_CLUSTER_NAME says
// otherwise.
const DefaultName = "redis-operator"

// OwnCNILabel marks a node image that brings its own CNI configuration (the
// offline image: there is no kindnetd image offline), so kind must not
// install its default CNI.
const OwnCNILabel = "com.example.redis-operator.kind-node.cni"

// NoCoreDNSLabel marks a node image without CoreDNS (the offline image:
// nothing in the course resolves a name inside the cluster, and CoreDNS
// took minutes of a cold build), so kubeadm must not deploy it.
const NoCoreDNSLabel = "com.example.redis-operator.kind-node.no-coredns"

// NodeImage is what the node image brings that the cluster's
// configuration must know.
type NodeImage struct {
	OwnCNI    bool // OwnCNILabel
	NoCoreDNS bool // NoCoreDNSLabel
}

// readyTimeout bounds the wait for the control-plane node to be Ready.
const readyTimeout = 3 * time.Minute

// Options say which kind cluster and where its kubeconfig goes.
type Options struct {
	// Name of the kind cluster (KIND_CLUSTER_NAME).
	Name string
	// StateDir holds the cluster's private kubeconfig.
	StateDir string
	// NodeImage, when set, is the node image to use (KIND_NODE_IMAGE).
	NodeImage string
	// OfflineImage is the node image `make kind-node-image` builds
	// (KIND_OFFLINE_NODE_IMAGE).
	OfflineImage string
	// APIServerPort on the host; 0 picks a free one (KIND_API_SERVER_PORT).
	APIServerPort int
}

// OptionsFromEnv returns Options from the KIND_* variables, with stateDir
// as the default state directory.
func OptionsFromEnv(stateDir string) (Options, error) {
	o := Options{
		Name:         os.Getenv("KIND_CLUSTER_NAME"),
		StateDir:     stateDir,
		NodeImage:    os.Getenv("KIND_NODE_IMAGE"),
		OfflineImage: os.Getenv("KIND_OFFLINE_NODE_IMAGE"),
	}
	if o.Name == "" {
		o.Name = DefaultName
	}
	if dir := os.Getenv("KIND_CLUSTER_DIR"); dir != "" {
		o.StateDir = dir
	}
	if p := os.Getenv("KIND_API_SERVER_PORT"); p != "" {
		port, err := strconv.Atoi(p)
		if err != nil || port < 1 || port > 65535 {
			return o, fmt.Errorf("KIND_API_SERVER_PORT must be a port number, got %q", p)
		}
		o.APIServerPort = port
	}
	return o, nil
}

// KubeconfigPath is the cluster's private kubeconfig.
func (o Options) KubeconfigPath() string { return filepath.Join(o.StateDir, "kubeconfig") }

// DockerAnswers says whether a Docker daemon answers, with its version, or
// why not.
func DockerAnswers(ctx context.Context) (string, error) {
	if _, err := exec.LookPath("docker"); err != nil {
		return "", errors.New("the docker command is not on PATH")
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "version", "--format", "{{.Server.Version}}").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("no Docker daemon answers: %s", firstLine(out, err))
	}
	return strings.TrimSpace(string(out)), nil
}

func provider() *cluster.Provider {
	return cluster.NewProvider(cluster.ProviderWithDocker(), cluster.ProviderWithLogger(kindcmd.NewLogger()))
}

// Exists says whether the kind cluster exists.
func Exists(o Options) (bool, error) {
	names, err := provider().List()
	if err != nil {
		return false, fmt.Errorf("listing kind clusters: %w", err)
	}
	return slices.Contains(names, o.Name), nil
}

// Up creates the kind cluster, or reuses it if it exists, writes its
// kubeconfig to o.KubeconfigPath() and waits until its API server answers.
// Progress goes to out.
func Up(ctx context.Context, o Options, out io.Writer) error {
	if _, err := DockerAnswers(ctx); err != nil {
		return fmt.Errorf("kind needs Docker: %w (start Docker, or use CLUSTER=local)", err)
	}
	if err := os.MkdirAll(o.StateDir, 0o755); err != nil {
		return err
	}
	p := provider()
	exists, err := Exists(o)
	if err != nil {
		return err
	}
	if exists {
		fmt.Fprintf(out, "Reusing kind cluster %q\n", o.Name)
		if err := p.ExportKubeConfig(o.Name, o.KubeconfigPath(), false); err != nil {
			return fmt.Errorf("writing the kubeconfig of kind cluster %q: %w", o.Name, err)
		}
		// A suite that ended while it had the API server stopped (see
		// StopAPIServer) left it so.
		if err := StartAPIServer(ctx, o, out); err != nil {
			return fmt.Errorf("kind cluster %q exists but does not answer (%w): run `make cluster-down`, then `make cluster-up`", o.Name, err)
		}
		same, err := madeWithThisConfig(ctx, o)
		if err != nil {
			return fmt.Errorf("reading the nodes of kind cluster %q: %w", o.Name, err)
		}
		if same {
			return nil
		}
		fmt.Fprintf(out, "Kind cluster %q was made with another configuration (an older checkout); recreating it\n", o.Name)
		if err := p.Delete(o.Name, o.KubeconfigPath()); err != nil {
			return fmt.Errorf("deleting kind cluster %q: %w", o.Name, err)
		}
	}

	if o.APIServerPort != 0 {
		if err := portFree(o.APIServerPort); err != nil {
			return err
		}
	}
	image, reason, err := ChooseNodeImage(ctx, o, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Creating kind cluster %q with node image %s (%s)\n", o.Name, image, reason)
	brings := NodeImage{
		OwnCNI:    imageLabel(ctx, image, OwnCNILabel) != "",
		NoCoreDNS: imageLabel(ctx, image, NoCoreDNSLabel) != "",
	}
	if err := p.Create(o.Name,
		cluster.CreateWithV1Alpha4Config(Config(o, brings)),
		cluster.CreateWithNodeImage(image),
		cluster.CreateWithKubeconfigPath(o.KubeconfigPath()),
		cluster.CreateWithWaitForReady(readyTimeout),
		cluster.CreateWithDisplayUsage(false),
		cluster.CreateWithDisplaySalutation(false),
		// A node that failed to come up is kept, so that its logs say why.
		cluster.CreateWithRetain(true),
	); err != nil {
		// kind's error names the command that failed; what the command
		// printed, where Docker or kubeadm say why, is in its RunError.
		output := commandOutput(err)
		if o.APIServerPort != 0 && inUse(output) {
			return fmt.Errorf("port %d is in use: free it, or set KIND_API_SERVER_PORT to another port (or leave it unset)", o.APIServerPort)
		}
		logs := filepath.Join(o.StateDir, "create-failed-logs")
		kept := fmt.Sprintf("the node is kept; its logs are in %s; `make cluster-down` deletes it", logs)
		if _, lerr := ExportLogs(o, logs); lerr != nil {
			kept = fmt.Sprintf("the node is kept (exporting its logs failed: %v); `make cluster-down` deletes it", lerr)
		}
		if output != "" {
			output = "\n" + output
		}
		return fmt.Errorf("creating kind cluster %q: %w%s\n%s", o.Name, err, output, kept)
	}
	return apiserver.WaitReady(ctx, o.KubeconfigPath(), time.Minute)
}

// Config is the kind cluster configuration: one node, two settings a
// learner's host may need and others ignore, and what the node image asks
// for.
func Config(o Options, img NodeImage) *v1alpha4.Cluster {
	c := baseConfig(o)
	c.Nodes[0].Labels = map[string]string{ConfigLabel: configHash(c)}
	// The offline image configures a bridge CNI for its one node.
	c.Networking.DisableDefaultCNI = img.OwnCNI
	if img.NoCoreDNS {
		// kind's own InitConfiguration skips preflight; a patch replaces
		// the list.
		c.KubeadmConfigPatches = append(c.KubeadmConfigPatches,
			"kind: InitConfiguration\nskipPhases:\n- preflight\n- addon/coredns")
	}
	return c
}

// baseConfig is Config without what depends on the node image.
func baseConfig(o Options) *v1alpha4.Cluster {
	c := &v1alpha4.Cluster{
		TypeMeta: v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"},
		Nodes:    []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole}},
		Networking: v1alpha4.Networking{
			// 0: kind picks a free port.
			APIServerPort: int32(o.APIServerPort), // validated 0..65535 by OptionsFromEnv
		},
		// Where the node cannot lower oom_score_adj (rootless Docker or
		// Podman, some VMs), containerd must not try.
		ContainerdConfigPatches: []string{"[plugins.\"io.containerd.grpc.v1.cri\"]\n  restrict_oom_score_adj = true"},
		// On a cgroup v1 host the kubelet refuses to start unless told
		// otherwise; on cgroup v2 this changes nothing. It syncs each pod
		// every 10 s, not every minute: a pod sees an update of a Secret
		// it mounts (chapter 11's certificate rotation) at its next sync.
		KubeadmConfigPatches: []string{
			"kind: KubeletConfiguration\napiVersion: kubelet.config.k8s.io/v1beta1\nfailCgroupV1: false\nsyncFrequency: 10s",
			// As on production clusters that enforce it: setting
			// blockOwnerDeletion on a child needs update on the owner's
			// finalizers subresource. (kubeadm enables NodeRestriction.)
			// And stopped (see StopAPIServer), the API server answers 429
			// with Retry-After until its requests in flight are done, then
			// closes its connections within 2 s; without it, net/http
			// waits for the watches until the kubelet kills it, 30 s on.
			//
			// One node runs one controller manager and one scheduler, as
			// on the local backend: nothing to elect. With leader
			// election, an API server restart would cost each its Lease;
			// they exit, and the kubelet starts them again with a growing
			// back-off, during which no pod is scheduled.
			"kind: ClusterConfiguration\napiServer:\n  extraArgs:\n    enable-admission-plugins: NodeRestriction,OwnerReferencesPermissionEnforcement\n    shutdown-send-retry-after: \"true\"\n" +
				"controllerManager:\n  extraArgs:\n    leader-elect: \"false\"\nscheduler:\n  extraArgs:\n    leader-elect: \"false\"",
		},
	}
	return c
}

// ConfigLabel is a node label with a hash of the configuration the cluster
// was made with, so that a cluster made by an older checkout is recreated
// instead of silently reused.
const ConfigLabel = "redis-operator.example.com/kind-config"

// configHash hashes a base configuration without what varies from one
// creation to the next (the port).
func configHash(c *v1alpha4.Cluster) string {
	recipe := c.DeepCopy()
	recipe.Networking.APIServerPort = 0
	data, err := json.Marshal(recipe)
	if err != nil {
		panic(err) // a struct of strings, ints and bools always marshals
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// madeWithThisConfig says whether the running cluster's node carries this
// configuration's hash.
func madeWithThisConfig(ctx context.Context, o Options) (bool, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.KubeconfigPath())
	if err != nil {
		return false, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return false, err
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	want := configHash(baseConfig(o))
	for _, n := range nodes.Items {
		if n.Labels[ConfigLabel] != want {
			return false, nil
		}
	}
	return len(nodes.Items) > 0, nil
}

// ChooseNodeImage picks the node image and says why. It pulls kind's
// default image only when neither an explicit nor the offline image
// decides, printing Docker's progress to out.
func ChooseNodeImage(ctx context.Context, o Options, out io.Writer) (image, reason string, err error) {
	if o.NodeImage != "" {
		return o.NodeImage, "KIND_NODE_IMAGE", nil
	}
	if imagePresent(ctx, defaults.Image) {
		return defaults.Image, "kind's default node image, in Docker", nil
	}
	if o.OfflineImage != "" && imagePresent(ctx, o.OfflineImage) {
		return o.OfflineImage, "built by `make kind-node-image`; kind's default node image is not in Docker", nil
	}
	fmt.Fprintf(out, "Pulling kind's default node image %s\n", defaults.Image)
	cmd := exec.CommandContext(ctx, "docker", "pull", defaults.Image)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	if err := cmd.Run(); err != nil {
		offline := "the offline node image is not built"
		if o.OfflineImage != "" {
			offline = fmt.Sprintf("the offline node image %s is not built", o.OfflineImage)
		}
		name, _, _ := strings.Cut(defaults.Image, "@")
		return "", "", fmt.Errorf("cannot pull kind's node image %s (%s) and %s: run `make kind-node-image` (no registry needed)",
			name, firstLine(stderr.Bytes(), err), offline)
	}
	return defaults.Image, "kind's default node image, pulled", nil
}

// Down deletes the kind cluster and its kubeconfig; nothing to delete is
// fine.
func Down(o Options, out io.Writer) error {
	exists, err := Exists(o)
	if err != nil {
		return err
	}
	if !exists {
		fmt.Fprintf(out, "No kind cluster %q\n", o.Name)
		return nil
	}
	fmt.Fprintf(out, "Deleting kind cluster %q\n", o.Name)
	if err := provider().Delete(o.Name, o.KubeconfigPath()); err != nil {
		return fmt.Errorf("deleting kind cluster %q: %w", o.Name, err)
	}
	if err := os.Remove(o.KubeconfigPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// LoadImage loads the image archive at path into every node of the
// cluster, as `kind load image-archive` does: into the nodes' containerd,
// with no registry in between.
func LoadImage(o Options, path string, out io.Writer) error {
	nodes, err := provider().ListInternalNodes(o.Name)
	if err != nil {
		return fmt.Errorf("listing the nodes of kind cluster %q: %w", o.Name, err)
	}
	if len(nodes) == 0 {
		return fmt.Errorf("kind cluster %q has no nodes; `make cluster-up CLUSTER=kind` starts it", o.Name)
	}
	for _, n := range nodes {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		err = nodeutils.LoadImageArchive(n, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("loading %s into node %s: %w", path, n.String(), err)
		}
		fmt.Fprintf(out, "Loaded %s into node %s\n", path, n.String())
	}
	return nil
}

// The API server is a static pod of the control-plane node, as kubeadm
// makes it: the kubelet runs what its manifest directory holds. Moving the
// manifest out stops it; moving it back starts it again, with the same
// flags, certificates and etcd.
const (
	apiserverManifest = "/etc/kubernetes/manifests/kube-apiserver.yaml"
	apiserverAside    = "/etc/kubernetes/kube-apiserver.yaml.stopped"
)

// StopAPIServer stops the cluster's API server, as an upgrade or a crash
// of the control plane would, and returns once its container is gone. etcd
// and the kubelet keep running; StartAPIServer starts it again.
func StopAPIServer(ctx context.Context, o Options, out io.Writer) error {
	node, err := controlPlaneNode(o)
	if err != nil {
		return err
	}
	if node.CommandContext(ctx, "test", "-e", apiserverAside).Run() == nil {
		fmt.Fprintln(out, "The kind cluster's kube-apiserver is stopped already")
		return nil
	}
	fmt.Fprintf(out, "Stopping the kind cluster's kube-apiserver (its static pod's manifest moves out of %s)\n", filepath.Dir(apiserverManifest))
	if err := node.CommandContext(ctx, "mv", apiserverManifest, apiserverAside).Run(); err != nil {
		return fmt.Errorf("moving the kube-apiserver manifest aside on %s: %w", node, err)
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		ids, err := kindexec.OutputLines(node.CommandContext(ctx, "bash", "-c", RunningContainersScript("io.kubernetes.container.name", "kube-apiserver")))
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = fmt.Sprintf("containers still running: %v", ids)
		return len(ids) == 0, nil
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		return fmt.Errorf("the kubelet of %s did not stop kube-apiserver within 2 minutes (%s)", node, last)
	}
	return err
}

// StartAPIServer starts the API server that StopAPIServer stopped, and
// returns once it answers. An API server that runs already is left alone.
func StartAPIServer(ctx context.Context, o Options, out io.Writer) error {
	node, err := controlPlaneNode(o)
	if err != nil {
		return err
	}
	if node.CommandContext(ctx, "test", "-e", apiserverAside).Run() == nil {
		fmt.Fprintln(out, "Starting the kind cluster's kube-apiserver again (its manifest moves back)")
		if err := node.CommandContext(ctx, "mv", apiserverAside, apiserverManifest).Run(); err != nil {
			return fmt.Errorf("moving the kube-apiserver manifest back on %s: %w", node, err)
		}
	}
	return apiserver.WaitReady(ctx, o.KubeconfigPath(), 3*time.Minute)
}

func controlPlaneNode(o Options) (kindnodes.Node, error) {
	all, err := provider().ListInternalNodes(o.Name)
	if err != nil {
		return nil, fmt.Errorf("listing the nodes of kind cluster %q: %w", o.Name, err)
	}
	for _, n := range all {
		if role, err := n.Role(); err == nil && role == constants.ControlPlaneNodeRoleValue {
			return n, nil
		}
	}
	return nil, fmt.Errorf("kind cluster %q has no control-plane node; `make cluster-up CLUSTER=kind` starts it", o.Name)
}

// ExportLogs writes kind's logs (per node: journal, kubelet, containerd,
// pods) under dir and returns the control-plane node's directory.
func ExportLogs(o Options, dir string) (string, error) {
	err := provider().CollectLogs(o.Name, dir)
	errs := kinderrors.Errors(err)
	if errs == nil && err != nil {
		errs = []error{err}
	}
	// kind lists each node's images into images.log with crictl, which the
	// offline node image leaves out (nothing else needs it, and it is
	// minutes of a cold build): ctr lists them instead.
	errs = slices.DeleteFunc(errs, func(e error) bool { return strings.Contains(e.Error(), "crictl images") })
	nodes, listErr := provider().ListNodes(o.Name)
	errs = append(errs, listErr)
	for _, n := range nodes {
		f, err := os.Create(filepath.Join(dir, n.String(), "images.log"))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, n.Command("ctr", "--namespace", "k8s.io", "images", "list").SetStdout(f).SetStderr(f).Run())
		f.Close()
	}
	return filepath.Join(dir, o.Name+"-control-plane"), errors.Join(errs...)
}

// RunningContainersScript is a bash script that prints the IDs of the
// running containers of a kind node whose CRI labels have the values given
// (pairs: label, value; io.kubernetes.container.name, io.kubernetes.pod.name,
// ...), one a line, as `crictl ps --quiet` would: with containerd's ctr, in
// the namespace the kubelet's containers live in.
func RunningContainersScript(labelValues ...string) string {
	var filter []string
	for i := 0; i+1 < len(labelValues); i += 2 {
		filter = append(filter, fmt.Sprintf("labels.%q==%q", labelValues[i], labelValues[i+1]))
	}
	return fmt.Sprintf(`set -euo pipefail
ids=$(ctr --namespace k8s.io containers list --quiet %s | tr '\n' ' ')
ctr --namespace k8s.io tasks list | awk -v ids="$ids" 'BEGIN { n = split(ids, a, " "); for (i = 1; i <= n; i++) want[a[i]] = 1 } NR > 1 && $3 == "RUNNING" && ($1 in want) { print $1 }'`,
		shellQuote(strings.Join(filter, ",")))
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func imagePresent(ctx context.Context, image string) bool {
	return exec.CommandContext(ctx, "docker", "image", "inspect", "--format", "{{.Id}}", image).Run() == nil
}

func imageLabel(ctx context.Context, image, label string) string {
	out, err := exec.CommandContext(ctx, "docker", "image", "inspect", "--format",
		fmt.Sprintf("{{ index .Config.Labels %q }}", label), image).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func portFree(port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("port %d is in use: free it, or set KIND_API_SERVER_PORT to another port (or leave it unset)", port)
	}
	return l.Close()
}

func inUse(output string) bool {
	return strings.Contains(output, "address already in use") || strings.Contains(output, "port is already allocated")
}

// commandOutput is the tail of what the failed command behind a kind error
// printed, or "" when the error holds no command.
func commandOutput(err error) string {
	runErr := kindexec.RunErrorForError(err)
	if runErr == nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(runErr.Output)), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

func firstLine(out []byte, err error) string {
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return err.Error()
}
