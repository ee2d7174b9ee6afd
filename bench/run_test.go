package bench

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestBenchWritesResults runs a few cases of the suite for a millisecond
// each and checks every output: raw lines benchstat can read, the
// markdown with its target and ratio table, and the plots.
func TestBenchWritesResults(t *testing.T) {
	dir := t.TempDir()
	c := Config{Out: dir, Benchtime: 2 * time.Millisecond, Rounds: 1, MemKeys: 2000,
		Run: `TB/work=admit/keys=1/g=(1|2)/design=(tollgate|mutex-per-bucket)$|MemoryPerKey/design=tollgate`}
	var progress strings.Builder
	if err := Run(c, &progress); err != nil {
		t.Fatal(err)
	}
	// The terminal ends with the targets' summary, and says that one
	// round cannot show a significant difference.
	for _, want := range []string{"[4/4] round 1", "with -rounds 1 no difference can be significant", "summary (1 rounds;", "Take admitting, 1 key, 2 goroutines, vs mutex-per-bucket: ", "— ~ (not significant, p=1.000, n=1)", " met, 0 missed, 2 not significant,"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress.String())
		}
	}
	raw, err := os.Open(filepath.Join(dir, "raw.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	line := regexp.MustCompile(`^Benchmark\S+-\d+\t\d+\t[0-9.e+]+ (ns/op|bytes/key)(\t[0-9.e+-]+ \S+)*$`)
	results := 0
	for sc := bufio.NewScanner(raw); sc.Scan(); {
		l := sc.Text()
		if strings.HasPrefix(l, "Benchmark") {
			results++
			if !line.MatchString(l) {
				t.Errorf("raw.txt line not in benchmark format: %q", l)
			}
		}
	}
	if results != 5 {
		t.Errorf("raw.txt has %d result lines, want 4 cases and 1 memory line", results)
	}
	md, err := os.ReadFile(filepath.Join(dir, "RESULTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"quick run, 1 round(s), 2ms per case per round, 4 cases", "cpu: ", "## Targets", "Take admitting, 1 key, 2 goroutines, vs mutex-per-bucket", "| 2 |", "Memory per idle key at 2000 keys", "TB_work-admit_keys-1_throughput.png"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("RESULTS.md lacks %q:\n%s", want, md)
		}
	}
	for _, f := range []string{"throughput.png", "throughput.svg", "p99.png", "p99.svg"} {
		if st, err := os.Stat(filepath.Join(dir, "TB_work-admit_keys-1_"+f)); err != nil || st.Size() == 0 {
			t.Errorf("plot %s: %v", f, err)
		}
	}
}
