package explore

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

var (
	sourceMu sync.Mutex
	sources  = map[string][]string{}
)

// siteOf renders the code under test at pc: its file's name with its
// directory's (rate/rate.go: two packages' files of one name do not look
// alike), the line and the line's source, read from the original file
// (the rewrite keeps every line where it was).
func siteOf(pc uintptr) string {
	frames := runtime.CallersFrames([]uintptr{pc})
	f, _ := frames.Next()
	if f.File == "" {
		return ""
	}
	at := fmt.Sprintf("%s/%s:%d", filepath.Base(filepath.Dir(f.File)), filepath.Base(f.File), f.Line)
	if src := sourceLine(f.File, f.Line); src != "" {
		at += " " + src
	}
	return at
}

func sourceLine(file string, line int) string {
	sourceMu.Lock()
	defer sourceMu.Unlock()
	lines, ok := sources[file]
	if !ok {
		b, err := os.ReadFile(file)
		if err == nil {
			lines = strings.Split(string(b), "\n")
		}
		sources[file] = lines
	}
	if line < 1 || line > len(lines) {
		return ""
	}
	s := strings.TrimSpace(lines[line-1])
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
