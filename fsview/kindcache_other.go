//go:build !linux

package fsview

import "github.com/toolgate/toolgate/engine"

// CallKindOf is KindOf outside Linux: nothing is cached there.
func CallKindOf() func(string) engine.FileKind { return KindOf }
