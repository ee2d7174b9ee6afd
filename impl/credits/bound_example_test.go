package credits_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/tollgate/tollgate/impl/credits"
)

// The table as a plain admission bound in an HTTP handler: at most 26
// requests are served at once; the 27th is refused at once with 503, not
// queued. Each request has a holder of its own and releases its slot when
// it is done; nothing is enqueued.
func Example_admissionBound() {
	tab := credits.New[struct{}]()
	bounded := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := credits.NewHolder() // one holder per request
			tok, res := tab.Reserve(h, credits.General)
			if res != credits.OK { // Exhausted: all 26 in use (or NoTable: closed)
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			defer func() {
				if !tab.Release(h, tok) { // only a bug of this handler makes it false
					log.Printf("release of slot %d failed", tok.Slot)
				}
			}()
			next.ServeHTTP(w, r)
		})
	}

	started, hold := make(chan struct{}), make(chan struct{})
	slow := bounded(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-hold
	}))
	var wg sync.WaitGroup
	for range 26 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slow.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
		}()
		<-started
	}
	w := httptest.NewRecorder()
	slow.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	fmt.Println("27th request while 26 are served:", w.Code)

	close(hold)
	wg.Wait()
	fmt.Println("general slots free after they finish:", tab.Snapshot().General.Free)
	// Output:
	// 27th request while 26 are served: 503
	// general slots free after they finish: 26
}
