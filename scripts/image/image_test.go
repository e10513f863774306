package main

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func writeBinary(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "manager")
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func options(binary string) Options {
	return Options{Binary: binary, Entrypoint: "/manager", User: "65532:65532", OS: "linux", Architecture: "amd64"}
}

// TestSameBinarySameDigest: two builds of the same binary, from files
// written at different times, are the same image; another binary is not.
func TestSameBinarySameDigest(t *testing.T) {
	a, err := Build(options(writeBinary(t, "the operator")))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build(options(writeBinary(t, "the operator")))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Build(options(writeBinary(t, "another operator")))
	if err != nil {
		t.Fatal(err)
	}
	da, _ := a.Digest()
	db, _ := b.Digest()
	dc, _ := c.Digest()
	if da != db {
		t.Errorf("the same binary gave two digests: %s and %s", da, db)
	}
	if da == dc {
		t.Errorf("two binaries gave one digest: %s", da)
	}
	ta, err := Tag("example.com/redis-operator", a)
	if err != nil {
		t.Fatal(err)
	}
	if want := "example.com/redis-operator:sha-" + da.Hex[:12]; ta.String() != want {
		t.Errorf("tag %s, want %s", ta, want)
	}
}

// TestImage: one layer with the binary alone, executable and owned by
// root; the config runs it as the user, on the platform given; nothing
// in it carries the time of the build.
func TestImage(t *testing.T) {
	img, err := Build(options(writeBinary(t, "the operator")))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Architecture != "amd64" {
		t.Errorf("platform %s/%s, want linux/amd64", cfg.OS, cfg.Architecture)
	}
	if cfg.Config.User != "65532:65532" || strings.Join(cfg.Config.Entrypoint, " ") != "/manager" {
		t.Errorf("user %q, entrypoint %q; want 65532:65532 and /manager", cfg.Config.User, cfg.Config.Entrypoint)
	}
	if !cfg.Created.Equal(epoch) {
		t.Errorf("created %s, want the epoch", cfg.Created)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Mode != 0o555 || h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(epoch) {
			t.Errorf("%s: mode %o, owner %d:%d, time %s; want 555, 0:0, the epoch", h.Name, h.Mode, h.Uid, h.Gid, h.ModTime)
		}
		data, _ := io.ReadAll(tr)
		if string(data) != "the operator" {
			t.Errorf("%s holds %q, want the binary", h.Name, data)
		}
	}
	if strings.Join(names, ",") != "manager" {
		t.Errorf("the layer holds %q, want the binary alone", names)
	}
}

// TestWriteArchive: the archive reads back as the same image under its
// tag, as docker load and kind read it.
func TestWriteArchive(t *testing.T) {
	img, err := Build(options(writeBinary(t, "the operator")))
	if err != nil {
		t.Fatal(err)
	}
	tag, err := Tag("example.com/redis-operator", img)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "image.tar")
	if err := WriteArchive(path, tag, img); err != nil {
		t.Fatal(err)
	}
	back, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := img.Digest()
	if got, _ := back.Digest(); got != want {
		t.Errorf("the archive's image is %s, want %s", got, want)
	}
}

func TestBuildRefuses(t *testing.T) {
	bin := writeBinary(t, "x")
	for _, tt := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"root", func(o *Options) { o.User = "0:0" }, "not root"},
		{"no user", func(o *Options) { o.User = "" }, "not root"},
		{"a relative entrypoint", func(o *Options) { o.Entrypoint = "manager" }, "absolute"},
		{"no platform", func(o *Options) { o.Architecture = "" }, "platform"},
		{"no binary", func(o *Options) { o.Binary = filepath.Join(t.TempDir(), "none") }, "no such file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := options(bin)
			tt.edit(&o)
			if _, err := Build(o); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Build: error %v, want one that says %q", err, tt.want)
			}
		})
	}
}
