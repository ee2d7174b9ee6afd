// Package build builds tollgate's mutants from their patches, at run time:
// nothing generated from a patch is committed. Write turns every patch of
// internal/mutants/patches into its package (internal/mutants/<name>) and
// the constructors files of internal/sut, backends/redissut and
// backends/etcdsut into their form with a case per mutant, in a temporary
// directory, with an overlay file that hands them to the go command at
// their paths inside the module (go build -overlay). One build of a
// package with the overlay links every mutant; the go build cache keeps
// the compiled packages, so a second build is a link.
//
// Without the overlay the committed code compiles with the real tables
// alone, and asking for a mutant's table says how to get it
// (fault.NotCompiled). Compiled reports which build this is. A test that
// needs the mutants calls Need; its package's TestMain runs the tests
// through Main (or Wrap), which, when the mutants are not compiled in,
// builds the package's test binary once more with the overlay and runs
// the tests that asked in it. The tollgate command does the same for
// itself (Rerun): it rebuilds itself with the overlay and runs the new
// binary with the same arguments.
package build
