//go:build amd64

// Package cpuidcheck holds one test, in a package the tables do not
// import: that internal/seam/internal/cpuid reads the features
// golang.org/x/sys/cpu reads. Kept apart so that go mod tidy in a module
// using the tables, which looks at the tests of what it imports, records
// no golang.org/x/sys (scripts/fresh-module.sh).
package cpuidcheck

import (
	"testing"

	"golang.org/x/sys/cpu"

	"github.com/tollgate/tollgate/internal/seam/internal/cpuid"
)

// TestFeatures: the same AVX and CMPXCHG16B as golang.org/x/sys/cpu.
func TestFeatures(t *testing.T) {
	avx, cx16 := cpuid.Features()
	if avx != cpu.X86.HasAVX || cx16 != cpu.X86.HasCX16 {
		t.Fatalf("cpuid.Features() = AVX %v, CMPXCHG16B %v; golang.org/x/sys/cpu says AVX %v, CMPXCHG16B %v", avx, cx16, cpu.X86.HasAVX, cpu.X86.HasCX16)
	}
}
