package conform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// ProtocolVersion is the version of spec/protocol.md this package speaks.
const ProtocolVersion = 2

// Primitive names as the hello exchange spells them.
const (
	PrimTokenBucket = "tb"
	PrimCredits     = "cr"
)

// Error kinds (spec/protocol.md §5).
const (
	ErrInvalidArgument = "invalid_argument"
	ErrBadRequest      = "bad_request"
	ErrRateLimited     = "rate_limited"
	ErrExhausted       = "exhausted"
	ErrLost            = "lost"
	ErrNoTable         = "no_table"
	ErrNone            = "none"
	// ErrUnknownOutcome: the driver's backend (a server) was sent the call
	// and no answer came; it may have taken effect, or may yet.
	ErrUnknownOutcome = "unknown"
)

// Float is a binary64 as the protocol writes it (spec/protocol.md §3): a
// finite value is a JSON number in shortest round-trip form; NaN, +Inf and
// -Inf are the strings "NaN", "Infinity" and "-Infinity".
type Float float64

// MarshalJSON writes f in shortest round-trip form.
func (f Float) MarshalJSON() ([]byte, error) {
	x := float64(f)
	switch {
	case math.IsNaN(x):
		return []byte(`"NaN"`), nil
	case math.IsInf(x, 1):
		return []byte(`"Infinity"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-Infinity"`), nil
	}
	return json.Marshal(x)
}

// UnmarshalJSON reads a JSON number (correctly rounded) or one of the three
// strings of MarshalJSON.
func (f *Float) UnmarshalJSON(b []byte) error {
	var s string
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch s {
		case "NaN":
			*f = Float(math.NaN())
		case "Infinity":
			*f = Float(math.Inf(1))
		case "-Infinity":
			*f = Float(math.Inf(-1))
		default:
			return fmt.Errorf("conform: %q is not a number (only \"NaN\", \"Infinity\" and \"-Infinity\" may be strings)", s)
		}
		return nil
	}
	x, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("conform: %s is not a number: %w", b, err)
	}
	*f = Float(x)
	return nil
}

// F returns a pointer to Float(x), for building requests.
func F(x float64) *Float { v := Float(x); return &v }

// I returns a pointer to x.
func I[T any](x T) *T { return &x }

// Request is one line a harness writes to a driver (spec/protocol.md §2).
// Fields an operation does not use are omitted. Epoch is opaque: the harness
// sends back exactly the JSON value the driver issued.
type Request struct {
	ID              int64           `json:"id,omitempty"`
	Op              string          `json:"op"`
	Protocol        int             `json:"protocol,omitempty"`
	Client          string          `json:"client,omitempty"`
	Table           string          `json:"table,omitempty"`
	Key             *string         `json:"key,omitempty"`
	Capacity        *Float          `json:"capacity,omitempty"`
	RefillPerSecond *Float          `json:"refill_per_second,omitempty"`
	Cost            *Float          `json:"cost,omitempty"`
	NowMs           *int64          `json:"now_ms,omitempty"`
	Class           string          `json:"class,omitempty"`
	Slot            *int            `json:"slot,omitempty"`
	Epoch           json.RawMessage `json:"epoch,omitempty"`
	Payload         *string         `json:"payload,omitempty"`
}

// Counts are the per-state row counts of one class in a cr.snapshot answer.
type Counts struct {
	Free       int `json:"free"`
	Reserved   int `json:"reserved"`
	Enqueued   int `json:"enqueued"`
	Processing int `json:"processing"`
}

// Entry is one row of a cr.enqueued answer.
type Entry struct {
	Slot     int             `json:"slot"`
	Epoch    json.RawMessage `json:"epoch"`
	MarkedMs int64           `json:"marked_ms"`
	Payload  string          `json:"payload"`
}

// Response is one line a driver writes (spec/protocol.md §2). General and
// Internal are numbers in cr.bounds and Counts objects in cr.snapshot, so
// they stay raw until the operation is known.
type Response struct {
	ID         int64    `json:"id"`
	OK         bool     `json:"ok"`
	Error      string   `json:"error,omitempty"`
	Field      string   `json:"field,omitempty"`
	Message    string   `json:"message,omitempty"`
	Protocol   int      `json:"protocol,omitempty"`
	Primitives []string `json:"primitives,omitempty"`
	// Ops lists, in a hello's answer, the optional operations the driver
	// serves (spec/protocol.md §4.0: tb.admit).
	Ops          []string        `json:"ops,omitempty"`
	Name         string          `json:"name,omitempty"`
	Remaining    *Float          `json:"remaining,omitempty"`
	Tokens       *Float          `json:"tokens,omitempty"`
	RetryAfterMs *int64          `json:"retry_after_ms,omitempty"`
	Reclaimed    *int            `json:"reclaimed,omitempty"`
	Slot         *int            `json:"slot,omitempty"`
	Epoch        json.RawMessage `json:"epoch,omitempty"`
	Payload      *string         `json:"payload,omitempty"`
	Freed        *int            `json:"freed,omitempty"`
	Entries      *[]Entry        `json:"entries,omitempty"`
	General      json.RawMessage `json:"general,omitempty"`
	Internal     json.RawMessage `json:"internal,omitempty"`
	Total        *int            `json:"total,omitempty"`
}

// Line renders v as one compact JSON line without a newline.
func Line(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("conform: cannot encode %T: %v", v, err))
	}
	return string(bytes.TrimRight(buf.Bytes(), "\n"))
}

// rawJSON marshals v, for the raw General/Internal/Epoch fields.
func rawJSON(v any) json.RawMessage { return json.RawMessage(Line(v)) }

// compactRaw returns the compact form of a raw JSON value, the identity under
// which epochs are compared.
func compactRaw(b json.RawMessage) (string, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return "", err
	}
	return buf.String(), nil
}
