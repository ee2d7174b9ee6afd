//go:build (amd64 || arm64) && !purego

package seam

const pairBoxed = false
