package linearizability

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/fault"
)

var (
	flagTBOps = flag.Int("lin.tb-ops", 10_000, "operations of BenchmarkCheckTokenBucket's history")
	flagCrOps = flag.Int("lin.cr-ops", 2_000, "least operations of BenchmarkCheckCredits's history")
)

// benchTB records one token-bucket history of about n operations: the
// many-keys workload with 8 clients and 16 keys.
func benchTB(b *testing.B, n int) TBHistory {
	w := TBWorkloads()[2].Scaled(8, 16, n/8)
	if w.Name != "many-keys" {
		b.Fatalf("workload %s, want many-keys", w.Name)
	}
	h, err := RecordTokenBucket(w, InProcessTB(fault.None), 1)
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// BenchmarkCheckTokenBucket checks a 10,000-operation token-bucket history
// (8 clients, 16 keys; -lin.tb-ops changes the size). Goal on the 2-core
// reference machine: < 5 s.
func BenchmarkCheckTokenBucket(b *testing.B) {
	h := benchTB(b, *flagTBOps)
	var rep Report
	b.ResetTimer()
	for range b.N {
		var err error
		rep, err = CheckTokenBucket(h, Options{Timeout: time.Minute, Dir: filepath.Join(os.TempDir(), "tollgate-bench"), Name: "tokenbucket"})
		if err != nil || rep.Result != Ok {
			b.Fatalf("%v %v %s; history %s, visualization %s", rep.Result, err, rep.Detail, rep.JSONPath, rep.HTMLPath)
		}
	}
	b.ReportMetric(float64(rep.Ops), "ops/history")
	b.ReportMetric(float64(rep.Overlapping), "overlapping/history")
}

// benchCr records credit-table histories, more rounds each time, until one
// has at least n operations: the cycling workload with 8 holders. (Cutting a
// longer history short could keep an operation that saw the effect of one
// cut away, so the history is used whole.)
func benchCr(b *testing.B, n int) CrHistory {
	w := CrWorkloads()[0]
	if w.Name != "cycling" {
		b.Fatalf("workload %s, want cycling", w.Name)
	}
	w = w.Scaled(8, n/30)
	for seed := uint64(1); ; seed++ {
		h, err := RecordCredits(w, InProcessCr(fault.None), seed)
		if err != nil {
			b.Fatal(err)
		}
		if len(h.Ops) >= n {
			return h
		}
		w.Rounds += w.Rounds/20 + 1
	}
}

// BenchmarkCheckCredits checks a credit-table history of at least 2,000
// operations credit-table history
// (8 holders, 2 owners, 1 sweeper, and the holders' second threads:
// cycling workload; -lin.cr-ops changes the size). Goal: < 30 s.
func BenchmarkCheckCredits(b *testing.B) {
	h := benchCr(b, *flagCrOps)
	var rep Report
	b.ResetTimer()
	for range b.N {
		var err error
		rep, err = CheckCredits(h, Options{Timeout: 5 * time.Minute, Dir: filepath.Join(os.TempDir(), "tollgate-bench"), Name: "credits"})
		if err != nil || rep.Result != Ok {
			b.Fatalf("%v %v %s; history %s, visualization %s", rep.Result, err, rep.Detail, rep.JSONPath, rep.HTMLPath)
		}
	}
	b.ReportMetric(float64(rep.Ops), "ops/history")
	b.ReportMetric(float64(rep.Overlapping), "overlapping/history")
}
