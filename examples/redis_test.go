package examples_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/redisserver"
	redistb "github.com/tollgate/tollgate/impl/redis/tokenbucket"
)

// childAddr is the variable through which TestTwoProcesses hands a child
// process the server's address.
const childAddr = "TOLLGATE_EXAMPLE_REDIS"

// serve is one process of a fleet: it takes from the bucket "user:42" of
// the shared table "api" until it is refused, and reports how many takes
// it got and the wait the refusal answered.
func serve(addr string) (admitted int, retryAfterMs int64, err error) {
	ctx := context.Background()
	tb, err := redistb.New(ctx, &goredis.Options{Addr: addr}, "api")
	if err != nil {
		return 0, 0, err
	}
	defer tb.Close() // this client only: the buckets stay for the fleet
	limit := redistb.Limits{Capacity: 10, RefillPerSecond: 0.01}
	for {
		d, err := tb.Admit(ctx, "user:42", limit, 1)
		if err != nil {
			return admitted, 0, err // ErrUnknown: the take may have happened; never a refusal
		}
		if !d.OK {
			return admitted, d.RetryAfterMs, nil
		}
		admitted++
	}
}

// TestTwoProcesses runs serve in two processes at once against one
// redis-server: one bucket, shared, so together they are admitted exactly
// its capacity, however the takes interleave, and each refusal says when
// the next token comes (100 s at 0.01 tokens per second, less the time
// already refilled).
func TestTwoProcesses(t *testing.T) {
	if addr := os.Getenv(childAddr); addr != "" {
		n, w, err := serve(addr)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(n, w)
		os.Exit(0)
	}
	srv := redisserver.StartT(t)
	var procs []*exec.Cmd
	var outs []*strings.Builder
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTwoProcesses$")
		cmd.Env = append(os.Environ(), childAddr+"="+srv.Addr)
		out := new(strings.Builder)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs, outs = append(procs, cmd), append(outs, out)
	}
	total := 0
	for i, cmd := range procs {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, outs[i])
		}
		f := strings.Fields(outs[i].String())
		if len(f) != 2 {
			t.Fatalf("process %d printed %q, want its takes and its wait", i, outs[i])
		}
		n, err1 := strconv.Atoi(f[0])
		w, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || w < 1 || w > 100_000 {
			t.Fatalf("process %d printed %q: want a count and a wait in 1..100000 ms", i, outs[i])
		}
		total += n
	}
	if total != 10 {
		t.Fatalf("the two processes were admitted %d takes from one bucket of capacity 10", total)
	}
}
