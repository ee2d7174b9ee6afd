package generate

import "github.com/tollgate/tollgate/internal/mutants/patch"

// Fault is one fault as its patch declares it (patch.Declare): the
// generator reads the patches as internal/fault does, from their headers.
type Fault = patch.Declared

// Header is a patch's fields (patch.Header).
type Header = patch.Header

// ParseHeader reads the fields of a patch's comment (patch.ParseHeader).
func ParseHeader(name, comment string) (Header, error) { return patch.ParseHeader(name, comment) }
