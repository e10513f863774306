// This file makes the webhook's certificates without cert-manager: a
// CA of the project's own and a serving certificate it signs, kept as PEM
// files in one directory (ca.crt, ca.key, tls.crt, tls.key). make deploy
// puts tls.crt and tls.key in the Secret the operator's pods mount and
// ca.crt in the webhook configuration's caBundle; the API server trusts
// the serving certificate because that CA signed it. Rotating the serving
// certificate keeps the CA, so the caBundle does not change and the
// operator only has to read the new files (certwatcher does).

package main

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// The files in a certificate directory. tls.crt and tls.key are the names
// a Secret of type kubernetes.io/tls has, and the names controller-runtime's
// webhook server reads from its certificate directory.
const (
	CAFile   = "ca.crt"
	CAKey    = "ca.key"
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// Default lifetimes. A serving certificate is renewed by Ensure once less
// than a third of its life is left.
const (
	CAValidity      = 5 * 365 * 24 * time.Hour
	ServingValidity = 90 * 24 * time.Hour
)

// Options say where the files are and whom the serving certificate names.
type Options struct {
	Dir string
	// DNSNames and IPs are the names the API server may dial the webhook
	// by: the Service's DNS names in a cluster, 127.0.0.1 for a webhook on
	// the API server's host.
	DNSNames []string
	IPs      []net.IP
	// Now is the clock (time.Now when nil); tests move it.
	Now func() time.Time
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Ensure makes what is missing or due: the CA when there is none (and then
// a new serving certificate), and the serving certificate when there is
// none, when it names other hosts, when the CA did not sign it, or when
// less than a third of its life is left. It reports what it wrote.
func Ensure(o Options) (string, error) {
	ca, caKey, err := readPair(filepath.Join(o.Dir, CAFile), filepath.Join(o.Dir, CAKey))
	if errors.Is(err, os.ErrNotExist) {
		if ca, caKey, err = newCA(o); err != nil {
			return "", err
		}
		if err := issue(o, ca, caKey); err != nil {
			return "", err
		}
		return "a new CA and a serving certificate it signed", nil
	}
	if err != nil {
		return "", err
	}
	cert, _, err := readPair(filepath.Join(o.Dir, CertFile), filepath.Join(o.Dir, KeyFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "a serving certificate (there was none)", issue(o, ca, caKey)
	case err != nil:
		return "", err
	case cert.CheckSignatureFrom(ca) != nil:
		return "a serving certificate (the CA had not signed the old one)", issue(o, ca, caKey)
	case !sameHosts(cert, o):
		return "a serving certificate (the old one named other hosts)", issue(o, ca, caKey)
	case o.now().After(cert.NotAfter.Add(-cert.NotAfter.Sub(cert.NotBefore) / 3)):
		return "a serving certificate (the old one was due for renewal)", issue(o, ca, caKey)
	}
	return "", nil
}

// Rotate replaces the serving certificate and its key with new ones that
// the same CA signs, whatever their age.
func Rotate(o Options) error {
	ca, caKey, err := readPair(filepath.Join(o.Dir, CAFile), filepath.Join(o.Dir, CAKey))
	if err != nil {
		return fmt.Errorf("reading the CA (make deploy makes it): %w", err)
	}
	return issue(o, ca, caKey)
}

func newCA(o Options) (*x509.Certificate, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	now := o.now()
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "redis-operator webhook CA"},
		NotBefore:             now.Add(-time.Hour), // a node's clock may be a little behind
		NotAfter:              now.Add(CAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := sign(tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, err
	}
	if err := writePair(o.Dir, CAFile, CAKey, der, key); err != nil {
		return nil, nil, err
	}
	ca, err := x509.ParseCertificate(der)
	return ca, key, err
}

func issue(o Options, ca *x509.Certificate, caKey crypto.Signer) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := o.now()
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: firstName(o)},
		DNSNames:    o.DNSNames,
		IPAddresses: o.IPs,
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(ServingValidity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := sign(tmpl, ca, key.Public(), caKey)
	if err != nil {
		return err
	}
	return writePair(o.Dir, CertFile, KeyFile, der, key)
}

func sign(tmpl, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	return x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
}

func firstName(o Options) string {
	if len(o.DNSNames) > 0 {
		return o.DNSNames[0]
	}
	if len(o.IPs) > 0 {
		return o.IPs[0].String()
	}
	return "redis-operator webhook"
}

func sameHosts(cert *x509.Certificate, o Options) bool {
	if !slices.Equal(cert.DNSNames, o.DNSNames) || len(cert.IPAddresses) != len(o.IPs) {
		return false
	}
	for i, ip := range o.IPs {
		if !ip.Equal(cert.IPAddresses[i]) {
			return false
		}
	}
	return true
}

// writePair writes a certificate and its key, each through a temporary
// file renamed into place, key first: a reader never sees half a file, and
// certwatcher, which reloads on either, ends with a matching pair.
func writePair(dir, certName, keyName string, der []byte, key *ecdsa.PrivateKey) error {
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, keyName), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, certName), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func writeAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // once renamed, there is nothing to remove
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

func readPair(certPath, keyPath string) (*x509.Certificate, crypto.Signer, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, nil, err
	}
	cert, err := parseCert(certPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", certPath, err)
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, nil, fmt.Errorf("%s: no PEM block", keyPath)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", keyPath, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("%s: not a signing key", keyPath)
	}
	if pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(cert.PublicKey) {
		return nil, nil, fmt.Errorf("%s is not the key of %s", keyPath, certPath)
	}
	return cert, signer, nil
}

func parseCert(data []byte) (*x509.Certificate, error) {
	block, rest := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" || len(bytes.TrimSpace(rest)) > 0 {
		return nil, errors.New("want exactly one PEM CERTIFICATE block")
	}
	return x509.ParseCertificate(block.Bytes)
}
