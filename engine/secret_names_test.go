package engine

import (
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestSecretFilesByTheirNames: a private key under its default name and
// Terraform's state (which holds the secrets it manages in plain text) ask
// wherever they are, under a policy that allows everything else; the
// public key and Terraform's sources beside them stay allowed.
func TestSecretFilesByTheirNames(t *testing.T) {
	e := builtinOnlyEngine(t)
	read := func(path string) *Request { return pathCall("read_file", path) }
	for _, c := range []struct {
		note string
		req  *Request
		want policy.Level
	}{
		{"a deploy key in the repository", read("/ws/project/deploy/id_rsa"), policy.Ask},
		{"an ed25519 key, relative", read("id_ed25519"), policy.Ask},
		{"a security-key key", read("/ws/project/keys/id_ecdsa_sk"), policy.Ask},
		{"Terraform's state", read("/ws/project/infra/terraform.tfstate"), policy.Ask},
		{"its backup", read("terraform.tfstate.backup"), policy.Ask},
		{"the key read in the shell", shellCall("bash", "cat deploy/id_ed25519"), policy.Ask},
		{"the state read in the shell", shellCall("bash", "jq .resources infra/terraform.tfstate"), policy.Ask},
		{"the public key", read("/ws/project/deploy/id_rsa.pub"), policy.Allow},
		{"Terraform's sources", read("/ws/project/infra/main.tf"), policy.Allow},
		{"a file that only starts alike", read("/ws/project/src/id_rsa_parser.go"), policy.Allow},
		{"terraform plan", shellCall("bash", "terraform plan -out plan.bin"), policy.Allow},
	} {
		if d := e.Evaluate(c.req); d.Level != c.want {
			t.Errorf("%s: %s by %s, want %s", c.note, d.Level, d.MatchedRule, c.want)
		}
	}
}
