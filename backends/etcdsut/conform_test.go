package etcdsut_test

import (
	"bytes"
	"io"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tollgate/tollgate/backends/etcdserver"
	"github.com/tollgate/tollgate/backends/etcdsut"
	"github.com/tollgate/tollgate/conform"
	"github.com/tollgate/tollgate/impl/etcd/econn"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/testlong"
)

// TestConform: both etcd-backed tables, on a cluster of three members,
// pass the conformance suites through the Go driver's tables: the golden
// vectors (the model's answers, bit for bit), the random differential
// sessions, and the concurrent sessions checked by porcupine.
func TestConform(t *testing.T) {
	testlong.Skip(t)
	t.Parallel()
	cl := etcdserver.SharedT(t)
	c, err := econn.NewClient(clientv3.Config{Endpoints: cl.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	runs := []struct {
		prim   string
		suites []string
	}{{conform.PrimTokenBucket, nil}, {conform.PrimCredits, nil}}
	for _, r := range runs {
		rep := conform.Run(conform.Config{
			Serve: func(in io.Reader, out io.Writer, logw io.Writer) error {
				return conform.Serve(in, out, logw, etcdsut.DriverTables(c, fault.None, 5*time.Second))
			},
			Seed: 1, Budget: time.Second, Clients: 4, Timeout: 10 * time.Second, Dir: t.TempDir(),
			Primitives: []string{r.prim}, Suites: r.suites,
		})
		var b bytes.Buffer
		rep.Print(&b, "")
		if !rep.OK() {
			t.Fatalf("conform against the etcd tables:\n%s", b.String())
		}
		t.Logf("\n%s", b.String())
	}
}
