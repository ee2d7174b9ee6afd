package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestCheckRealTables: a short check of both primitives passes and prints
// the summary table.
func TestCheckRealTables(t *testing.T) {
	var out, errb bytes.Buffer
	code := runCheck([]string{"-duration", "2s", "-seed", "1", "-out", t.TempDir()}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"primitive", "tokenbucket", "credits", "porcupine", "sequential", "result: Ok"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestCheckMutant: --mutant makes the check fail with a visualization, the
// raw history and a replay command, and the replay fails the same way.
func TestCheckMutant(t *testing.T) {
	for _, m := range []string{"tb-plain-store", "cr-reserve-no-cas"} {
		t.Run(m, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := runCheck([]string{"-duration", "20s", "-seed", "1", "-mutant", m, "-seq-share", "0", "-out", t.TempDir()}, &out, &errb)
			if code != exitIllegal {
				t.Fatalf("exit %d, want %d\n%s%s", code, exitIllegal, out.String(), errb.String())
			}
			html := regexp.MustCompile(`visualization: (\S+\.html)`).FindStringSubmatch(out.String())
			js := regexp.MustCompile(`history: +(\S+\.json)`).FindStringSubmatch(out.String())
			if html == nil || js == nil || !strings.Contains(out.String(), "--replay "+js[1]) {
				t.Fatalf("paths or replay command missing:\n%s", out.String())
			}
			for _, p := range []string{html[1], js[1]} {
				if st, err := os.Stat(p); err != nil || st.Size() == 0 {
					t.Fatalf("%s: %v", p, err)
				}
			}
			out.Reset()
			if code := runCheck([]string{"-replay", js[1]}, &out, &errb); code != exitIllegal {
				t.Fatalf("replay exit %d, want %d\n%s%s", code, exitIllegal, out.String(), errb.String())
			}
		})
	}
}

// TestCheckFlags: bad flags are usage errors naming the flag.
func TestCheckFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-primitive", "semaphore"},
		{"-mutant", "no-such-mutant"},
		{"-primitive", "credits", "-mutant", "tb-plain-store"},
		{"-seq-share", "1"},
		{"stray"},
	} {
		var out, errb bytes.Buffer
		if code := runCheck(args, &out, &errb); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
		if !strings.Contains(errb.String(), "check:") {
			t.Errorf("%v: error %q lacks the check: prefix", args, errb.String())
		}
	}
}

// TestCheckUnknownIsNotAPass: a checker timeout is reported as Unknown with
// its own exit code, never as Ok.
func TestCheckUnknownIsNotAPass(t *testing.T) {
	var out, errb bytes.Buffer
	code := runCheck([]string{"-primitive", "tokenbucket", "-workload", "contention", "-timeout", "1us",
		"-duration", "0", "-seq-share", "0", "-seed", "1", "-out", t.TempDir()}, &out, &errb)
	if code != exitUnknown || !strings.Contains(out.String(), "Unknown") {
		t.Fatalf("exit %d, want %d (Unknown)\n%s%s", code, exitUnknown, out.String(), errb.String())
	}
}
