package web_test

import (
	"os"
	"testing"

	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestMain stops the shared PostgreSQL cluster some tests start.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
