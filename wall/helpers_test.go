package wall

import (
	"net"
	"testing"

	"github.com/git-agency/git-agency/internal/testsandbox"
)

const testInv = testsandbox.Inv

// listenUnix listens on a unix socket at path.
func listenUnix(t *testing.T, path string) net.Listener {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
