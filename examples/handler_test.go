package examples_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/tollgate/tollgate/impl/credits"
)

// A handler admitted by the credit table: each request holds a general
// slot while the owner serves it, so at most 26 are in flight; the 27th is
// refused at once with 503 instead of queueing. Here 26 slots are held by
// requests of someone else, so the first request is refused; one released,
// the next is served.
func Example_creditHandler() {
	tab := credits.New[*credits.Request[string, string]]()
	owner := credits.NewOwner(tab, time.Millisecond, func(_ context.Context, path string) (string, error) {
		return "served " + path, nil
	})
	stop := owner.Start(context.Background())
	defer stop()

	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller := credits.NewHolder() // one holder per request: its reservation is its own
		defer caller.Exit()
		resp, err := owner.Call(r.Context(), caller, credits.General, r.URL.Path)
		switch {
		case errors.Is(err, credits.ErrExhausted):
			http.Error(w, "busy, retry", http.StatusServiceUnavailable)
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		default:
			fmt.Fprint(w, resp)
		}
	})
	get := func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/balance", nil))
		fmt.Println(w.Code, strings.TrimSpace(w.Body.String()))
	}

	busy := credits.NewHolder()
	var held []credits.Token
	for range credits.GeneralSlots {
		tok, _ := tab.Reserve(busy, credits.General)
		held = append(held, tok)
	}
	get()
	tab.Release(busy, held[0])
	get()
	// Output:
	// 503 busy, retry
	// 200 served /balance
}
