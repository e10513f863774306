package main

import (
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func testOptions(t *testing.T) Options {
	return Options{
		Dir:      t.TempDir(),
		DNSNames: []string{"webhook.ns.svc"},
		IPs:      []net.IP{net.ParseIP("127.0.0.1")},
	}
}

// TestEnsure: the first call makes a CA and a serving certificate that a
// TLS client trusting only that CA accepts for each name; the second makes
// nothing.
func TestEnsure(t *testing.T) {
	o := testOptions(t)
	made, err := Ensure(o)
	if err != nil || made == "" {
		t.Fatalf("Ensure = %q, %v; want a new CA and certificate", made, err)
	}
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(filepath.Join(o.Dir, CAFile))
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(caPEM)
	pair, err := tls.LoadX509KeyPair(filepath.Join(o.Dir, CertFile), filepath.Join(o.Dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"webhook.ns.svc", "127.0.0.1"} {
		if _, err := pair.Leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: pool}); err != nil {
			t.Errorf("the serving certificate does not verify for %s: %v", host, err)
		}
	}
	if info, err := os.Stat(filepath.Join(o.Dir, KeyFile)); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("tls.key: %v, %v; want mode 0600", info.Mode(), err)
	}
	if made, err := Ensure(o); err != nil || made != "" {
		t.Errorf("second Ensure = %q, %v; want nothing made", made, err)
	}
}

// TestEnsureRenews: a serving certificate is made again when it is due,
// names other hosts or is missing; the CA stays.
func TestEnsureRenews(t *testing.T) {
	o := testOptions(t)
	if _, err := Ensure(o); err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(filepath.Join(o.Dir, CAFile))
	if err != nil {
		t.Fatal(err)
	}
	serial := func() string {
		s, err := servingSerial(o.Dir)
		if err != nil {
			t.Fatal(err)
		}
		return s.String()
	}
	for _, tc := range []struct {
		name   string
		change func(*Options)
	}{
		{"due", func(o *Options) { o.Now = func() time.Time { return time.Now().Add(ServingValidity * 3 / 4) } }},
		{"other hosts", func(o *Options) { o.DNSNames = []string{"other.ns.svc"} }},
		{"missing", func(o *Options) { _ = os.Remove(filepath.Join(o.Dir, CertFile)) }},
	} {
		before := "none"
		if _, err := os.Stat(filepath.Join(o.Dir, CertFile)); err == nil {
			before = serial()
		}
		tc.change(&o)
		if made, err := Ensure(o); err != nil || made == "" {
			t.Errorf("%s: Ensure = %q, %v; want a new serving certificate", tc.name, made, err)
		}
		if serial() == before {
			t.Errorf("%s: the serving certificate did not change", tc.name)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(o.Dir, CAFile)); string(after) != string(ca) {
		t.Error("the CA changed")
	}
}

// TestRotate replaces a valid serving certificate and keeps the CA; with
// no CA it says where one comes from.
func TestRotate(t *testing.T) {
	o := testOptions(t)
	if err := Rotate(o); err == nil {
		t.Error("Rotate with no CA succeeded")
	}
	if _, err := Ensure(o); err != nil {
		t.Fatal(err)
	}
	before, _ := servingSerial(o.Dir)
	if err := Rotate(o); err != nil {
		t.Fatal(err)
	}
	after, _ := servingSerial(o.Dir)
	if before.Cmp(after) == 0 {
		t.Error("Rotate kept the serving certificate")
	}
	if made, err := Ensure(o); err != nil || made != "" {
		t.Errorf("Ensure after Rotate = %q, %v; want nothing made", made, err)
	}
}

// servingSerial returns the serial number of the serving certificate in dir.
func servingSerial(dir string) (*big.Int, error) {
	data, err := os.ReadFile(filepath.Join(dir, CertFile))
	if err != nil {
		return nil, err
	}
	cert, err := parseCert(data)
	if err != nil {
		return nil, err
	}
	return cert.SerialNumber, nil
}
