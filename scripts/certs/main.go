// Command certs makes or rotates the webhook's certificates in a directory
// (see certs.go): make deploy runs it to make what is missing or due,
// make rotate-webhook-cert to replace the serving certificate.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		o        Options
		dns, ips string
		rotate   bool
	)
	flag.StringVar(&o.Dir, "dir", "", "the directory of ca.crt, ca.key, tls.crt and tls.key")
	flag.StringVar(&dns, "dns", "", "comma-separated DNS names the serving certificate is for")
	flag.StringVar(&ips, "ip", "", "comma-separated IP addresses the serving certificate is for")
	flag.BoolVar(&rotate, "rotate", false, "replace the serving certificate even if it is not due (the CA stays)")
	flag.Parse()
	if o.Dir == "" || flag.NArg() > 0 {
		flag.Usage()
		return errors.New("--dir is required, and there are no arguments")
	}
	if dns != "" {
		o.DNSNames = strings.Split(dns, ",")
	}
	for _, s := range strings.Split(ips, ",") {
		if s == "" {
			continue
		}
		ip := net.ParseIP(s)
		if ip == nil {
			return fmt.Errorf("--ip: %q is not an IP address", s)
		}
		o.IPs = append(o.IPs, ip)
	}
	if len(o.DNSNames) == 0 && len(o.IPs) == 0 {
		return errors.New("name at least one host with --dns or --ip")
	}
	if rotate {
		if err := Rotate(o); err != nil {
			return err
		}
		fmt.Printf("%s: a new serving certificate, signed by the same CA\n", o.Dir)
		return nil
	}
	made, err := Ensure(o)
	if err != nil {
		return err
	}
	if made == "" {
		made = "nothing new; the certificates are valid"
	}
	fmt.Printf("%s: %s\n", o.Dir, made)
	return nil
}
