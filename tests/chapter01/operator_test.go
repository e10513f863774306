//go:build e2e

package chapter01

import (
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"

	"example.com/redis-operator/tests/framework"
)

// The operator binary says in one line what is wrong, instead of retrying
// forever, when it cannot work at all.
var _ = Describe("bin/operator", func() {
	run := func(args ...string) *gexec.Session {
		GinkgoHelper()
		session, err := gexec.Start(exec.Command(env.Operator.Binary, args...), GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(session).Should(gexec.Exit(1))
		return session
	}

	It("runs in the suites as its own ServiceAccount, which may do what the chapter's role allows and no more", func(ctx SpecContext) {
		operator, err := framework.NewKubectl(env.Operator.Kubeconfig)
		Expect(err).NotTo(HaveOccurred())
		Expect(operator.Run(ctx, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")).
			To(Equal("system:serviceaccount:" + framework.OperatorNamespace + ":" + framework.OperatorServiceAccount))
		Expect(operator.Run(ctx, "auth", "can-i", "create", "pods", "-n", "default")).To(Equal("yes\n"))
		By("asking whether the operator may list Secrets, which the chapter never reads: no")
		out, err := operator.Run(ctx, "auth", "can-i", "list", "secrets", "-n", "default")
		framework.DecidingCheck("the operator may not list Secrets", func() {
			Expect(err).To(HaveOccurred(), "kubectl auth can-i exits 1 for no")
			Expect(out).To(Equal("no\n"), "kubectl auth can-i list secrets")
		})
	})

	It("says so when no API server answers", func() {
		kubeconfig := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
		Expect(os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: gone, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: gone, context: {cluster: gone, user: nobody}}]
users: [{name: nobody, user: {token: none}}]
current-context: gone
`), 0o600)).To(Succeed())

		session := run("--kubeconfig", kubeconfig, "--health-probe-bind-address", "0")
		Expect(session.Err).To(gbytes.Say(`cannot reach the Kubernetes API server at https://127.0.0.1:1`))
		Expect(session.Err).To(gbytes.Say("make cluster-up"))
	})
})
