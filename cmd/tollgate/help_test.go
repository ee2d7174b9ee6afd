package main

import (
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/mainjob"
)

// runCaptured runs command name with args, capturing what it writes to
// os.Stderr (every command's help goes there) and os.Stdout.
func runCaptured(t *testing.T, name string, args []string) (code int, stderr string) {
	t.Helper()
	c, ok := commands[name]
	if !ok {
		t.Fatalf("no command %q", name)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	oldErr, oldOut := os.Stderr, os.Stdout
	os.Stderr, os.Stdout = w, w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	func() {
		defer func() { os.Stderr, os.Stdout = oldErr, oldOut }()
		code = c.run(args)
	}()
	w.Close()
	return code, <-done
}

// TestHelpConvention: every command's -h follows one convention — its
// usage line, what it does, its flags, examples and its exit codes, exit
// status 0 — and a flag it does not know exits 2 with the same usage line.
// Every help tail belongs to a command.
func TestHelpConvention(t *testing.T) {
	type cmd struct {
		name string   // the key of helpTails
		run  string   // the registered command
		pre  []string // arguments before the flag
	}
	cmds := []cmd{{name: "mutants --auto", run: "mutants", pre: []string{"--auto"}}, {name: "mutants --patch", run: "mutants", pre: []string{"--patch"}}}
	for name := range commands {
		cmds = append(cmds, cmd{name: name, run: name})
	}
	if len(cmds) != len(helpTails) {
		t.Errorf("%d commands (with mutants --auto and --patch), %d help tails: each command has one tail, each tail a command", len(cmds), len(helpTails))
	}
	code := regexp.MustCompile(`(?m)^exit codes:\n(  \d  \S.*\n)+`)
	for _, c := range cmds {
		t.Run(c.name, func(t *testing.T) {
			status, out := runCaptured(t, c.run, append(c.pre, "-h"))
			if status != 0 {
				t.Errorf("tollgate %s -h exits %d, want 0", c.name, status)
			}
			if !strings.HasPrefix(out, "usage: tollgate "+c.name+" ") {
				t.Errorf("tollgate %s -h does not begin with its usage line:\n%s", c.name, out)
			}
			for _, part := range []string{"\nflags:\n", "\nexamples:\n  go run ./cmd/tollgate ", "\nexit codes:\n  0  "} {
				if !strings.Contains(out, part) {
					t.Errorf("tollgate %s -h lacks %q:\n%s", c.name, part, out)
				}
			}
			if !code.MatchString(out) || !strings.Contains(out, "\n  2  ") {
				t.Errorf("tollgate %s -h lists no exit code 2 (a bad flag):\n%s", c.name, out)
			}
			status, out = runCaptured(t, c.run, append(c.pre, "-no-such-flag"))
			if status != 2 || !strings.Contains(out, "usage: tollgate "+c.name+" ") {
				t.Errorf("tollgate %s -no-such-flag exits %d, want 2 and the usage:\n%s", c.name, status, out)
			}
		})
	}
}

// TestCheckHelpDuration: the budget that check's first example states is
// default of -duration (issue 45: it said 20 s when the default was 1 m).
func TestCheckHelpDuration(t *testing.T) {
	first := helpTails["check"].examples[0]
	m := regexp.MustCompile(`for -duration (\S+)$`).FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("check's first example states no -duration: %q", first)
	}
	if want := mainjob.Defaults().Duration.String(); m[1] != want {
		t.Errorf("check's first example says -duration %s; the default is %s", m[1], want)
	}
}
