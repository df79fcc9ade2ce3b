package engine

// d6Stricter names the reference cases where toolgate is stricter than the
// reference through the external-directory merge because of contract D6,
// with the reason (README, "stricter than the contract").
var d6Stricter = map[string]string{
	"s11-c17-104": "D6: the shell's workdir (..) is judged as a path itself and lies outside the workspace",
}
