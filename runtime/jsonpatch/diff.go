package jsonpatch

import (
	"slices"
	"strconv"
)

// Diff returns a patch that turns a into b: objects are compared member by member (removed
// members first, then changed ones, then added ones, each in key order), arrays of the same
// length element by element, and anything else that differs is replaced whole. Equal values
// (Equal) give an empty patch.
func Diff(a, b any) Patch {
	return diff(nil, a, b, nil)
}

func diff(out Patch, a, b any, path []string) Patch {
	if Equal(a, b) {
		return out
	}
	x, xObj := a.(map[string]any)
	y, yObj := b.(map[string]any)
	if xObj && yObj {
		for _, k := range sortedKeys(x) {
			if _, ok := y[k]; !ok {
				out = append(out, Op{Op: OpRemove, Path: Pointer(append(slices.Clip(path), k)...)})
			}
		}
		for _, k := range sortedKeys(y) {
			p := append(slices.Clip(path), k)
			if old, ok := x[k]; ok {
				out = diff(out, old, y[k], p)
			} else {
				out = append(out, Op{Op: OpAdd, Path: Pointer(p...), Value: clone(y[k])})
			}
		}
		return out
	}
	xs, xArr := a.([]any)
	ys, yArr := b.([]any)
	if xArr && yArr && len(xs) == len(ys) {
		for i := range xs {
			out = diff(out, xs[i], ys[i], append(slices.Clip(path), strconv.Itoa(i)))
		}
		return out
	}
	return append(out, Op{Op: OpReplace, Path: Pointer(path...), Value: clone(b)})
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
