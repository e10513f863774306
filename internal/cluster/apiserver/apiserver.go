// Package apiserver is the one health check of an API server that every
// cluster backend and the framework use: /readyz through the kubeconfig's
// credentials, polled with apimachinery's wait.
package apiserver

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Ready asks the API server behind kubeconfig for /readyz, once.
func Ready(ctx context.Context, kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.Timeout = 5 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return cs.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
}

// WaitReady polls Ready every second until it succeeds or timeout passes;
// the error then says what the last attempt got.
func WaitReady(ctx context.Context, kubeconfig string, timeout time.Duration) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		last = Ready(ctx, kubeconfig)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("the API server did not answer within %s: %w", timeout, last)
	}
	return nil
}
