// Command image writes the operator's container image, made from a static
// binary built on the host (see image.go), to an archive that
// `docker load` and kind read (make docker-build). It prints the image's
// name, repository:sha-<digest prefix>, as its last line.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	o := Options{Entrypoint: "/manager", User: "65532:65532"}
	var repository, out, nameFile string
	flag.StringVar(&o.Binary, "binary", "", "the static binary to put in the image (built with CGO_ENABLED=0)")
	flag.StringVar(&o.OS, "os", "linux", "the binary's GOOS")
	flag.StringVar(&o.Architecture, "arch", runtime.GOARCH, "the binary's GOARCH")
	flag.StringVar(&repository, "repository", "example.com/redis-operator", "the image's repository; the tag is sha-<the first 12 hex digits of its digest>")
	flag.StringVar(&out, "out", "", "the archive to write")
	flag.StringVar(&nameFile, "name-file", "", "a file to write the image's name (repository:tag) into, for make deploy")
	flag.Parse()
	if o.Binary == "" || out == "" || flag.NArg() > 0 {
		flag.Usage()
		return errors.New("--binary and --out are required, and nothing else")
	}
	img, err := Build(o)
	if err != nil {
		return err
	}
	tag, err := Tag(repository, img)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	if err := WriteArchive(out, tag, img); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s: %s (%s/%s, digest %s)\n", out, tag, o.OS, o.Architecture, digest)
	if nameFile != "" {
		return os.WriteFile(nameFile, []byte(tag.String()+"\n"), 0o644)
	}
	return nil
}
