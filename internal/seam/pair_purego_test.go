//go:build purego || !(amd64 || arm64)

package seam

const pairBoxed = true

var pairPaths = []pairPath{{name: "boxed"}}
