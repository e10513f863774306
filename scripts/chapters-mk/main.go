// Command chapters-mk prints scripts/chapters.mk, the table of chapters
// (package chapters) as Make variables: `make manifests` writes it, `make
// verify-manifests` and the table's test check that it is current.
package main

import (
	"fmt"

	"example.com/redis-operator/chapters"
)

func main() { fmt.Print(chapters.MakeInclude(chapters.All, chapters.Shipped)) }
