package engine_test

import "testing"

// FuzzObfuscation is the metamorphic property of TestMetamorphicObfuscation
// driven by the fuzzer: the input picks the seed command (seed, modulo the
// number of seeds), the policy (policy, modulo three) and the obfuscation
// chain (each byte of chain is one choice: which rewrite, which word, which
// wrapper, where to split). The obfuscated command must never decide looser
// than the plain one. One policy per input keeps an exec cheap enough for
// make fuzz's 30,000 executions.
func FuzzObfuscation(f *testing.F) {
	// Each fuzz process builds the fixture, the seeds (in a fixed order, so
	// an input picks the same seed in every process) and their plain
	// decisions once; the fuzz function only reads them.
	fx := newIssueFixture(f)
	seeds := obfuscationSeeds(f, fx)
	plain := plainLevels(fx, seeds)
	f.Add(uint16(0), uint8(0), []byte{})
	f.Add(uint16(1), uint8(1), []byte{4, 0, 1})
	f.Add(uint16(7), uint8(2), []byte{3, 0, 3, 2, 1, 2, 10, 1})
	f.Fuzz(func(t *testing.T, seed uint16, policy uint8, chain []byte) {
		if len(chain) > 32 {
			chain = chain[:32] // longer chains add nothing but time
		}
		i := int(seed) % len(seeds)
		s := seeds[i]
		ch := &byteChooser{b: chain}
		cmd, applied := obfuscate(s, ch, fx, 4)
		p := policyNames[int(policy)%len(policyNames)]
		d := fx.evalShell(p, cmd)
		if want := plain[p][i]; d.Level < want {
			t.Errorf("LOOSER under %s: %q decides %s (rule %q); its plain form %q decides %s [rewrites %v]",
				p, cmd, d.Level, d.MatchedRule, s.text, want, applied)
		}
	})
}
