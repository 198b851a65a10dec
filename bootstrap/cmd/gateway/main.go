// Command fluss-gateway is the stateless HTTP/JSON gateway in front of Apache
// Fluss clusters. See bootstrap.Main for the flags.
package main

import (
	"os"

	"github.com/fluss-gateway/fluss-gateway-go/bootstrap"
)

func main() {
	os.Exit(bootstrap.Main(os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}
