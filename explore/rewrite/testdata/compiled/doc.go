// Package p is where TestAccessesCompile builds the rewritten forms of
// access_test.go, added by an overlay.
package p
