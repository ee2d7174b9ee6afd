package redissut_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"sync"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/tollgate/tollgate/backends/redissut"
	"github.com/tollgate/tollgate/internal/fault"
)

// captured is a go-redis logger that keeps what it is given.
type captured struct {
	mu    sync.Mutex
	lines []string
}

func (c *captured) Printf(_ context.Context, format string, v ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, fmt.Sprintf(format, v...))
}

// stderrLogger is go-redis's own default, restored after the test.
type stderrLogger struct{ l *log.Logger }

func (s stderrLogger) Printf(_ context.Context, format string, v ...any) { s.l.Printf(format, v...) }

// TestTablesLogNothing: making tables from one client's options logs
// nothing (go-redis logged "cannot overwrite existing handler" for every
// table when the copy shared the client's push notification processor).
func TestTablesLogNothing(t *testing.T) {
	c := redisClient(t)
	logs := &captured{}
	goredis.SetLogger(logs)
	defer goredis.SetLogger(stderrLogger{log.New(os.Stderr, "redis: ", log.LstdFlags|log.Lshortfile)})
	for i := range 3 {
		tb, err := redissut.NewTokenBucket(fault.None, c, fmt.Sprint("quiet-tb-", i))
		if err != nil {
			t.Fatal(err)
		}
		defer tb.Close()
		cr, err := redissut.NewCredits(fault.None, c, fmt.Sprint("quiet-cr-", i))
		if err != nil {
			t.Fatal(err)
		}
		defer cr.Close()
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	if len(logs.lines) > 0 {
		t.Errorf("go-redis logged while tables were made:\n%s", strings.Join(logs.lines, "\n"))
	}
}
