package conform_test

import (
	"fmt"
	"io"
	"time"

	"github.com/tollgate/tollgate/conform"
	"github.com/tollgate/tollgate/internal/fault"
)

// Run the golden vectors against the Go driver, in process. A port's driver
// is given as Argv instead (tollgate conform -- CMD ARGS...).
func ExampleRun() {
	rep := conform.Run(conform.Config{
		Serve: func(in io.Reader, out, logw io.Writer) error {
			return conform.ServeGo(in, out, logw, fault.None) // the real implementation
		},
		Seed: 1, Budget: time.Second, Clients: 4, Timeout: 10 * time.Second,
		Suites: []string{conform.SuiteVectors},
	})
	for _, r := range rep.Results {
		fmt.Printf("%s: %d cases, %d failed\n", r.Suite, r.Cases, r.Failed)
	}
	fmt.Println("pass:", rep.OK())
	// Output:
	// tb/vectors: 28 cases, 0 failed
	// cr/vectors: 16 cases, 0 failed
	// pass: true
}
