package decisionlog

import (
	"os"
	"testing"

	"github.com/toolgate/toolgate/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
