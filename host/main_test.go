package host_test

import (
	"os"
	"testing"

	"github.com/git-agency/git-agency/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
