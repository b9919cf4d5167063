package land

import (
	"os"
	"testing"

	"github.com/git-agency/git-agency/internal/testenv"
)

// TestMain runs the tests under a HOME, XDG directories and git
// configuration of their own (testenv.Main).
func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m))
}
