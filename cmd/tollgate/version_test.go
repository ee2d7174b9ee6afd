package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionText: the module version, the VCS revision with its time and
// a dirty tree, and the Go version are printed as the build recorded them,
// and a build that recorded no revision says so.
func TestVersionText(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/tollgate/tollgate", Version: "v0.3.1"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "e8aab01"}, {Key: "vcs.time", Value: "2026-12-05T00:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	want := "tollgate v0.3.1\nmodule github.com/tollgate/tollgate\nrevision e8aab01 (2026-12-05T00:00:00Z), with uncommitted changes\ngo1.26.8\n"
	if got := versionText(bi); got != want {
		t.Errorf("versionText =\n%s\nwant\n%s", got, want)
	}
	bi.Settings = nil
	if got := versionText(bi); !strings.Contains(got, "revision unknown (not recorded") {
		t.Errorf("without a recorded revision: %q", got)
	}
}

// TestVersionCommand: the test binary's own build information is printed.
func TestVersionCommand(t *testing.T) {
	var out, errb strings.Builder
	if code := runVersion(nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), "tollgate ") || !strings.Contains(out.String(), "\nmodule github.com/tollgate/tollgate\n") {
		t.Errorf("version printed %q", out.String())
	}
	if code := runVersion([]string{"extra"}, &out, &errb); code != 2 {
		t.Errorf("version extra exited %d, want 2", code)
	}
}
