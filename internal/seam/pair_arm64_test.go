//go:build !purego

package seam

var pairPaths = []pairPath{{name: "exclusive"}}
