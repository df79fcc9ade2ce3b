package auth

import (
	"os"
	"testing"

	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestMain stops the PostgreSQL cluster the PG* stores' tests share.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
