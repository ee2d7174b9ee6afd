// Package patch parses unified diffs (as diff -u and git diff write them)
// and applies them strictly: every context line and every removed line of a
// hunk must match the target file exactly. A hunk that does not match at the
// line its header states may match at another place, as git apply allows,
// but only if it matches at exactly one place after the previous hunk.
//
// Only modifications are supported: a patch cannot create, delete, rename or
// change the mode of a file.
package patch

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Patch is a parsed patch file.
type Patch struct {
	// Name is the patch file's name as errors report it.
	Name string
	// Comment is the text before the first file of the patch, which git
	// apply and patch ignore.
	Comment string
	// Files are the patched files in the order the patch lists them.
	Files []*File
}

// File is the part of a patch that changes one file.
type File struct {
	// Path is the file's path with the a/ and b/ prefixes removed.
	Path  string
	Hunks []*Hunk
}

// Hunk is one @@ section of a file.
type Hunk struct {
	// OldStart and OldLines are the header's -l,s; NewStart and NewLines
	// its +l,s.
	OldStart, OldLines, NewStart, NewLines int
	// Header is the @@ line as written; PatchLine its line in the patch.
	Header    string
	PatchLine int
	Lines     []Line
	// OldNoEOL and NewNoEOL record a "\ No newline at end of file" marker
	// after the last line of the old or the new side.
	OldNoEOL, NewNoEOL bool
}

// Line is one line of a hunk: Op is ' ' (context), '-' (removed) or '+'
// (added); Text is the line without its op and newline.
type Line struct {
	Op   byte
	Text string
}

// old returns the lines the hunk expects in the file.
func (h *Hunk) old() []string { return h.side('-') }

// new returns the lines the hunk leaves in their place.
func (h *Hunk) new() []string { return h.side('+') }

func (h *Hunk) side(op byte) []string {
	var out []string
	for _, l := range h.Lines {
		if l.Op == ' ' || l.Op == op {
			out = append(out, l.Text)
		}
	}
	return out
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// Parse parses data, the contents of the patch file called name.
func Parse(name string, data []byte) (*Patch, error) {
	p := &Patch{Name: name}
	text := string(data)
	if text == "" {
		return nil, fmt.Errorf("%s: empty patch", name)
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	errAt := func(i int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", name, i+1, fmt.Sprintf(format, args...))
	}
	i := 0
	// The comment: everything before the first diff or --- line.
	for i < len(lines) && !strings.HasPrefix(lines[i], "diff ") && !strings.HasPrefix(lines[i], "--- ") {
		i++
	}
	p.Comment = strings.TrimRight(strings.Join(lines[:i], "\n"), "\n")
	if i == len(lines) {
		return nil, fmt.Errorf("%s: no file in the patch (no --- line)", name)
	}
	seen := map[string]bool{}
	for i < len(lines) {
		line := lines[i]
		switch {
		case line == "":
			i++
			continue
		case strings.HasPrefix(line, "diff "):
			i++
			for i < len(lines) && !strings.HasPrefix(lines[i], "--- ") && !strings.HasPrefix(lines[i], "diff ") {
				if strings.HasPrefix(lines[i], "index ") {
					i++
					continue
				}
				return nil, errAt(i, "unsupported extended header %q: only modifications of existing files are supported", lines[i])
			}
			continue
		case !strings.HasPrefix(line, "--- "):
			return nil, errAt(i, "expected a --- line, found %q", line)
		}
		oldPath, err := filePath(line, "--- ", "a/")
		if err != nil {
			return nil, errAt(i, "%v", err)
		}
		i++
		if i == len(lines) || !strings.HasPrefix(lines[i], "+++ ") {
			return nil, errAt(i-1, "--- line not followed by a +++ line")
		}
		newPath, err := filePath(lines[i], "+++ ", "b/")
		if err != nil {
			return nil, errAt(i, "%v", err)
		}
		if oldPath != newPath {
			return nil, errAt(i, "renames %s to %s: only modifications are supported", oldPath, newPath)
		}
		if seen[oldPath] {
			return nil, errAt(i, "%s is patched twice", oldPath)
		}
		seen[oldPath] = true
		f := &File{Path: oldPath}
		p.Files = append(p.Files, f)
		i++
		for i < len(lines) && strings.HasPrefix(lines[i], "@@") {
			h, next, err := parseHunk(lines, i, len(f.Hunks)+1)
			if err != nil {
				return nil, fmt.Errorf("%s:%w", name, err)
			}
			f.Hunks = append(f.Hunks, h)
			i = next
		}
		if len(f.Hunks) == 0 {
			return nil, errAt(i-1, "%s has no hunks", f.Path)
		}
	}
	return p, nil
}

// filePath returns the path of a --- or +++ line, without its prefix and
// without a tab-separated timestamp (diff -u writes one).
func filePath(line, marker, prefix string) (string, error) {
	path := strings.TrimPrefix(line, marker)
	if tab := strings.IndexByte(path, '\t'); tab >= 0 {
		path = path[:tab]
	}
	if path == "/dev/null" {
		return "", fmt.Errorf("creates or deletes a file: only modifications are supported")
	}
	if !strings.HasPrefix(path, prefix) || len(path) == len(prefix) {
		return "", fmt.Errorf("path %q does not start with %s", path, prefix)
	}
	return path[len(prefix):], nil
}

// parseHunk parses the hunk whose @@ line is lines[i] and returns it with
// the index of the line after it.
func parseHunk(lines []string, i, number int) (*Hunk, int, error) {
	h, err := parseHunkHeader(lines[i], i, number)
	if err != nil {
		return nil, 0, err
	}
	i++
	left := [2]int{h.OldLines, h.NewLines} // old and new lines still expected
	var last byte
	for left[0] > 0 || left[1] > 0 {
		if i == len(lines) {
			return nil, 0, fmt.Errorf("%d: hunk %d ends early: %d old and %d new lines missing", i, number, left[0], left[1])
		}
		l := lines[i]
		op, text := byte(' '), ""
		if l != "" { // git apply reads an empty line as an empty context line
			op, text = l[0], l[1:]
		}
		if op == '\\' {
			if err := h.noEOL(last, i, number); err != nil {
				return nil, 0, err
			}
			i++
			continue
		}
		if !take(&left, op) {
			return nil, 0, fmt.Errorf("%d: hunk %d: unexpected line %q (%d old and %d new lines still expected)", i+1, number, l, left[0], left[1])
		}
		if h.OldNoEOL && op != '+' || h.NewNoEOL && op != '-' {
			return nil, 0, fmt.Errorf("%d: hunk %d: a line follows \"\\ No newline at end of file\"", i+1, number)
		}
		h.Lines = append(h.Lines, Line{Op: op, Text: text})
		last = op
		i++
	}
	if i < len(lines) && strings.HasPrefix(lines[i], `\`) {
		if err := h.noEOL(last, i, number); err != nil {
			return nil, 0, err
		}
		i++
	}
	return h, i, nil
}

// take counts a hunk line of op against the old and new lines still
// expected, and reports whether one of its side was expected.
func take(left *[2]int, op byte) bool {
	switch {
	case op == ' ' && left[0] > 0 && left[1] > 0:
		left[0]--
		left[1]--
	case op == '-' && left[0] > 0:
		left[0]--
	case op == '+' && left[1] > 0:
		left[1]--
	default:
		return false
	}
	return true
}

// parseHunkHeader parses the @@ line of hunk number, line i of the patch.
func parseHunkHeader(line string, i, number int) (*Hunk, error) {
	m := hunkHeader.FindStringSubmatch(line)
	if m == nil {
		return nil, fmt.Errorf("%d: malformed hunk header %q", i+1, line)
	}
	num := func(s string) int {
		if s == "" {
			return 1 // a side's count is 1 when the header leaves it out
		}
		n, _ := strconv.Atoi(s)
		return n
	}
	h := &Hunk{
		OldStart: num(m[1]), OldLines: num(m[2]), NewStart: num(m[3]), NewLines: num(m[4]),
		Header: line, PatchLine: i + 1,
	}
	if h.OldLines == 0 && h.NewLines == 0 {
		return nil, fmt.Errorf("%d: hunk %d is empty", i+1, number)
	}
	if h.OldLines > 0 && h.OldStart == 0 {
		return nil, fmt.Errorf("%d: hunk %d starts at line 0", i+1, number)
	}
	return h, nil
}

// noEOL records a "\ No newline at end of file" marker after a line of op.
func (h *Hunk) noEOL(op byte, i, number int) error {
	switch op {
	case ' ':
		h.OldNoEOL, h.NewNoEOL = true, true
	case '-':
		h.OldNoEOL = true
	case '+':
		h.NewNoEOL = true
	default:
		return fmt.Errorf("%d: hunk %d: %q before any line", i+1, number, `\`)
	}
	return nil
}

// File returns the part of p that changes path, or nil.
func (p *Patch) File(path string) *File {
	for _, f := range p.Files {
		if f.Path == path {
			return f
		}
	}
	return nil
}

// Error is a hunk that does not apply.
type Error struct {
	Patch string // the patch file
	Hunk  int    // 1-based, within the file's hunks
	// Header is the hunk's @@ line.
	Header string
	File   string // the target file
	// Line is the target line (1-based) where the hunk first differs when
	// placed at its stated line; Expected is the hunk's line and Found the
	// file's ("end of file" past its end).
	Line            int
	Expected, Found string
	// Others lists the other lines (1-based) at which the whole hunk
	// matches; more than one makes the hunk ambiguous.
	Others []int
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: hunk %d (%s) does not apply to %s", e.Patch, e.Hunk, e.Header, e.File)
	if e.Expected != "" || e.Found != "" {
		fmt.Fprintf(&b, ": line %d: expected %s, found %s", e.Line, e.Expected, e.Found)
	}
	switch len(e.Others) {
	case 0:
		b.WriteString("; it matches nowhere else in the file")
	default:
		fmt.Fprintf(&b, "; it matches at lines %s, so its place is ambiguous", joinInts(e.Others))
	}
	return b.String()
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// Apply returns src, the contents of the file f patches, with f's hunks
// applied. patchName names the patch in errors.
func (f *File) Apply(patchName string, src []byte) ([]byte, error) {
	text := string(src)
	eol := text == "" || strings.HasSuffix(text, "\n")
	var lines []string
	if text != "" {
		lines = strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	}
	var out []string
	cursor := 0
	for n, h := range f.Hunks {
		old := h.old()
		stated := h.OldStart - 1
		if h.OldLines == 0 {
			stated = h.OldStart // inserts after line OldStart
		}
		matches := func(pos int) bool {
			if pos < cursor || pos+len(old) > len(lines) {
				return false
			}
			for k, l := range old {
				if lines[pos+k] != l {
					return false
				}
			}
			atEnd := pos+len(old) == len(lines)
			// The marker must be there exactly when the hunk ends at an
			// unterminated last line.
			return h.OldNoEOL == (atEnd && !eol && len(old) > 0)
		}
		pos := stated
		if !matches(stated) {
			var others []int
			if len(old) > 0 {
				for p := cursor; p+len(old) <= len(lines); p++ {
					if matches(p) {
						others = append(others, p+1)
					}
				}
			}
			if len(others) != 1 {
				e := &Error{Patch: patchName, Hunk: n + 1, Header: h.Header, File: f.Path, Others: others}
				e.Line, e.Expected, e.Found = firstDifference(lines, old, h.OldNoEOL, stated, cursor)
				return nil, e
			}
			pos = others[0] - 1
		}
		out = append(out, lines[cursor:pos]...)
		out = append(out, h.new()...)
		cursor = pos + len(old)
		if cursor == len(lines) {
			eol = !h.NewNoEOL
		}
	}
	out = append(out, lines[cursor:]...)
	if len(out) == 0 {
		return nil, nil
	}
	res := strings.Join(out, "\n")
	if eol {
		res += "\n"
	}
	return []byte(res), nil
}

// firstDifference describes the first line at which old, placed at line
// index pos, differs from the file: its 1-based line, what the hunk
// expected and what the file holds, both quoted.
func firstDifference(lines []string, old []string, noEOL bool, pos, cursor int) (int, string, string) {
	if pos < cursor {
		return pos + 1, "the hunk's first line", fmt.Sprintf("line %d already changed by the previous hunk", pos+1)
	}
	for k, l := range old {
		at := pos + k
		if at >= len(lines) {
			return at + 1, strconv.Quote(l), "end of file"
		}
		if lines[at] != l {
			return at + 1, strconv.Quote(l), strconv.Quote(lines[at])
		}
	}
	at := pos + len(old)
	switch {
	case len(old) == 0:
		return at + 1, "an insertion point", "a hunk without context, which applies only at its stated line"
	case noEOL && at < len(lines):
		return at + 1, "end of file (the hunk ends without a newline)", strconv.Quote(lines[at])
	case noEOL:
		return at, "no newline at end of file", "a newline"
	}
	return at, "a newline at end of file", "none"
}
