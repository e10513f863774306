// Command pause is the sandbox ("pause") container of the offline kind node
// image, in place of registry.k8s.io/pause: it holds a pod's namespaces
// until the kubelet stops it, reaps the zombies it inherits, and exits on
// SIGINT or SIGTERM, like the upstream C program.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "-v" {
		fmt.Println("pause (redis-operator offline kind node image)")
		return
	}
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			fmt.Fprintln(os.Stderr, "Shutting down, got signal:", sig)
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
