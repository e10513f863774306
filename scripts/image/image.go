// This file makes the operator's container image from a static binary
// built on the host, with no base image and no network: no Dockerfile, no
// registry, no `go mod download` inside a container. The image has one
// layer, which holds the binary alone; its config runs the binary as a
// user that is not root; every timestamp in it is the Unix epoch. So the
// same binary always gives the same image, byte for byte, and the same
// digest, and the tag can be taken from that digest.

package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Options describe the image.
type Options struct {
	// Binary is the path of the static binary on the host.
	Binary string
	// Entrypoint is where the binary is in the image, e.g. /manager.
	Entrypoint string
	// User is the numeric user:group the binary runs as. It must not be
	// root: a Pod Security "restricted" namespace refuses a pod that may
	// run as root.
	User string
	// OS and Architecture are the platform the binary was built for
	// (GOOS and GOARCH): the node's container runtime checks them.
	OS, Architecture string
}

// epoch is every timestamp of the image.
var epoch = time.Unix(0, 0).UTC()

// Build returns the image of o.Binary.
func Build(o Options) (v1.Image, error) {
	if !strings.HasPrefix(o.Entrypoint, "/") || strings.HasSuffix(o.Entrypoint, "/") {
		return nil, fmt.Errorf("the entrypoint must be an absolute file path, got %q", o.Entrypoint)
	}
	if o.User == "" || strings.HasPrefix(o.User, "0:") || o.User == "0" || o.User == "root" {
		return nil, fmt.Errorf("the image must run as a user that is not root, got %q", o.User)
	}
	if o.OS == "" || o.Architecture == "" {
		return nil, fmt.Errorf("the platform is missing (OS %q, architecture %q)", o.OS, o.Architecture)
	}
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, err
	}
	layerTar, err := singleFileTar(strings.TrimPrefix(o.Entrypoint, "/"), bin)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return nil, err
	}
	img, err := mutate.Append(empty.Image, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "redis-operator scripts/image: " + o.Entrypoint},
	})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = o.OS, o.Architecture
	cfg.Created = v1.Time{Time: epoch}
	cfg.Config.Entrypoint = []string{o.Entrypoint}
	cfg.Config.User = o.User
	cfg.Config.WorkingDir = "/"
	return mutate.ConfigFile(img, cfg)
}

// singleFileTar is a tar archive of one executable file at p, owned by
// root (the user the image runs as may read and run it, not change it).
func singleFileTar(p string, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     p,
		Mode:     0o555,
		Size:     int64(len(data)),
		ModTime:  epoch,
		Format:   tar.FormatUSTAR,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Tag is repository:sha-<the first 12 hex digits of the image's digest>:
// a tag that changes exactly when the image does, so that a Deployment
// that names it rolls out a new build and a node never runs a stale
// image of the same name.
func Tag(repository string, img v1.Image) (name.Tag, error) {
	d, err := img.Digest()
	if err != nil {
		return name.Tag{}, err
	}
	return name.NewTag(repository+":sha-"+d.Hex[:12], name.StrictValidation)
}

// WriteArchive writes img as an archive in `docker save`'s format, which
// `docker load` and kind's image loading read, under the tag t.
func WriteArchive(path string, t name.Tag, img v1.Image) error {
	return tarball.WriteToFile(path, t, img)
}
