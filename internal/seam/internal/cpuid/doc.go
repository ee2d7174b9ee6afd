// Package cpuid reads the amd64 CPU features seam.Pair needs (CMPXCHG16B,
// and AVX for its one-instruction load) with CPUID and XGETBV, so that the
// tables need no module beyond the standard library. On other
// architectures it is empty.
package cpuid
