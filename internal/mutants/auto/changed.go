package auto

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// ChangedBase picks the commit a -changed campaign compares with: base
// itself when given (it must name a commit), else the merge base with
// origin/main when that is behind HEAD, else HEAD~1 — a clean clone of main
// (as CI has) holds origin/main at HEAD, so the merge base says nothing
// there and the submission's last commit is what it has — else, in a clone
// of one commit, the empty tree.
func ChangedBase(root, base string) (string, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		b, err := cmd.Output()
		return strings.TrimSpace(string(b)), err
	}
	if base != "" {
		if _, err := git("rev-parse", "--verify", "--quiet", base+"^{commit}"); err != nil {
			return "", fmt.Errorf("-base %s is not a commit here", base)
		}
		return base, nil
	}
	head, err := git("rev-parse", "HEAD")
	if err != nil {
		return "", fmt.Errorf("not a git checkout: %v", err)
	}
	if mb, err := git("merge-base", "HEAD", "origin/main"); err == nil && mb != "" && mb != head {
		return mb, nil
	}
	if p, err := git("rev-parse", "--verify", "--quiet", "HEAD~1^{commit}"); err == nil && p != "" {
		return p, nil
	}
	return "4b825dc642cb6eb9a060e54bf8d69288fbee4904", nil // the empty tree
}

// ChangedLines maps each of targets changed since base (the work tree
// included) to the line numbers, in its current text, of its added or
// changed lines.
func ChangedLines(root, base string, targets []string) (map[string]map[int]bool, error) {
	args := append([]string{"diff", "-U0", "--no-color", base, "--"}, targets...)
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git diff %s: %v", base, err)
	}
	return diffLines(b)
}

// diffLines reads a unified diff with no context (git diff -U0) and maps
// each new-side file to the new-side numbers of its added lines. A deleted
// file has none; a hunk that only deletes (+c,0) adds none.
func diffLines(diff []byte) (map[string]map[int]bool, error) {
	out := map[string]map[int]bool{}
	file := ""
	sc := bufio.NewScanner(bytes.NewReader(diff))
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "+++ "):
			file = strings.TrimPrefix(strings.TrimPrefix(l, "+++ "), "b/")
			if file == "/dev/null" {
				file = ""
			}
		case strings.HasPrefix(l, "@@ ") && file != "":
			// @@ -a,b +c,d @@
			f := strings.Fields(l)
			if len(f) < 3 {
				continue
			}
			start, count := strings.TrimPrefix(f[2], "+"), "1"
			if s, c, ok := strings.Cut(start, ","); ok {
				start, count = s, c
			}
			s, err1 := strconv.Atoi(start)
			c, err2 := strconv.Atoi(count)
			if err1 != nil || err2 != nil {
				continue
			}
			for i := s; i < s+c; i++ {
				if out[file] == nil {
					out[file] = map[int]bool{}
				}
				out[file][i] = true
			}
		}
	}
	return out, sc.Err()
}
