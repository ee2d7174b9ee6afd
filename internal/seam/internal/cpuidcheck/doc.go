// Package cpuidcheck compares internal/seam/internal/cpuid with
// golang.org/x/sys/cpu in its test; it has no code.
package cpuidcheck
