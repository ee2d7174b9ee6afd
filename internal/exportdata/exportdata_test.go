package exportdata

import (
	"go/token"
	"strings"
	"testing"
)

// TestImporterFollowsImportMap: a path as a package's source writes it is
// imported as the package its ImportMap resolves it to, and a package
// with no export data is an error naming it.
func TestImporterFollowsImportMap(t *testing.T) {
	files, err := Files(".", "strconv")
	if err != nil {
		t.Fatal(err)
	}
	imp := Importer(token.NewFileSet(), files, map[string]string{"vendor/example.com/conv": "strconv"})
	p, err := imp.Import("vendor/example.com/conv")
	if err != nil {
		t.Fatal(err)
	}
	if p.Path() != "strconv" || p.Scope().Lookup("Itoa") == nil {
		t.Errorf("imported %s, want strconv with Itoa", p.Path())
	}
	if _, err := Importer(token.NewFileSet(), files, nil).Import("vendor/example.com/conv"); err == nil || !strings.Contains(err.Error(), "vendor/example.com/conv") {
		t.Errorf("an unmapped path without export data: %v, want an error naming it", err)
	}
}
