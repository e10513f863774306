package localcluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// runAPIServerOnly is Run for Options.APIServerOnly: what a kubebuilder
// project's suite_test.go starts in its BeforeSuite, kept running for the
// suites, make run and kubectl, until ctx ends. The binaries are the
// course's own, built from Go sources (make kubernetes), so it starts
// offline; KUBEBUILDER_ASSETS, where setup-envtest puts the ones it
// downloads, wins when it is set, as in any envtest.
func runAPIServerOnly(ctx context.Context, o Options) (retErr error) {
	etcdLog, err := os.Create(filepath.Join(o.LogDir(), "etcd.log"))
	if err != nil {
		return err
	}
	defer etcdLog.Close()
	apiLog, err := os.Create(filepath.Join(o.LogDir(), "kube-apiserver.log"))
	if err != nil {
		return err
	}
	defer apiLog.Close()

	testEnv := &envtest.Environment{
		BinaryAssetsDirectory: o.BinDir,
		ControlPlane: envtest.ControlPlane{
			Etcd:      &envtest.Etcd{Out: etcdLog, Err: etcdLog},
			APIServer: &envtest.APIServer{Out: apiLog, Err: apiLog},
		},
		// The suites install each chapter's CRD themselves (make install),
		// as on any cluster; a project's own suite names its CRDs here:
		// CRDDirectoryPaths: []string{"config/crd/bases"}.
	}
	log("Starting etcd and kube-apiserver with envtest.Environment")
	if _, err := testEnv.Start(); err != nil {
		return err
	}
	defer func() {
		log("Stopping kube-apiserver and etcd")
		retErr = errors.Join(retErr, testEnv.Stop())
	}()

	// Start returned the admin's rest.Config; kubectl and the suites need
	// a kubeconfig file of it.
	admin, err := testEnv.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.KubeconfigPath(), kubeconfig, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.StateDir, readyFile), []byte(o.configVersion()), 0o644); err != nil {
		return err
	}
	log("API server ready; kubeconfig: " + o.KubeconfigPath())
	<-ctx.Done()
	log("Shutting down")
	return nil
}
