package cpuid

// Features reports whether the CPU has usable AVX and CMPXCHG16B, read from
// the CPU itself (golang.org/x/sys/cpu reads the same bits;
// internal/seam/internal/cpuidcheck compares them). CMPXCHG16B is
// CPUID.1:ECX bit 13. AVX is usable when CPUID.1:ECX has AVX (bit 28) and
// OSXSAVE (bit 27) and the OS saves the XMM and YMM state, XCR0 bits 1 and
// 2 (Intel SDM vol. 1, 14.3, "Detection of Intel AVX instructions").
func Features() (avx, cx16 bool) {
	if maxLeaf, _, _, _ := cpuid(0, 0); maxLeaf < 1 {
		return false, false
	}
	_, _, ecx, _ := cpuid(1, 0)
	const cx16Bit, osxsaveBit, avxBit = 1 << 13, 1 << 27, 1 << 28
	cx16 = ecx&cx16Bit != 0
	if ecx&osxsaveBit != 0 && ecx&avxBit != 0 {
		xcr0, _ := xgetbv()
		const xmmYmmState = 1<<1 | 1<<2
		avx = xcr0&xmmYmmState == xmmYmmState
	}
	return avx, cx16
}

// cpuid runs CPUID for leaf and subleaf, in cpuid_amd64.s.
func cpuid(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)

// xgetbv reads XCR0 (XGETBV with ECX = 0), in cpuid_amd64.s. Only when
// CPUID reports OSXSAVE: without it the instruction faults.
func xgetbv() (eax, edx uint32)
