package importer

import (
	"maps"
	"slices"
)

// sortedKeys are a map's keys in order, so that every run reports alike.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
