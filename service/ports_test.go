package service_test

import (
	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/store/decisionlog"
	"github.com/toolgate/toolgate/store/history"
)

// The file and SQLite implementations and the PostgreSQL ones satisfy the
// same ports, so either slots in without touching services or handlers.
var (
	_ service.PolicyDocs      = (*inforce.Holder)(nil)
	_ service.DocumentSource  = (*store.FileBackend)(nil)
	_ service.DocumentSource  = (*store.PGBackend)(nil)
	_ service.TokenStore      = (*auth.Tokens)(nil)
	_ service.TokenStore      = (*auth.PGTokens)(nil)
	_ service.DecisionLog     = (*decisionlog.Log)(nil)
	_ service.DecisionLog     = (*decisionlog.PGLog)(nil)
	_ service.DecisionLog     = service.NopDecisionLog{}
	_ service.ApprovalHistory = (*history.Store)(nil)
	_ service.ApprovalHistory = (*history.PGStore)(nil)
	_ service.ApprovalManager = (*approval.Manager)(nil)
	_ approval.Persister      = (*service.Policy)(nil)
)
