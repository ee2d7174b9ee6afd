package auto

import (
	"reflect"
	"testing"
)

// TestDiffLines: the added lines of a -U0 diff, by new-side file and
// number: a one-line hunk without a count, a hunk of several, a pure
// deletion (count 0) and a deleted file add nothing.
func TestDiffLines(t *testing.T) {
	diff := `diff --git a/impl/x.go b/impl/x.go
--- a/impl/x.go
+++ b/impl/x.go
@@ -3 +3 @@ func f() {
-	a
+	b
@@ -10,0 +11,2 @@ func g() {
+	c
+	d
@@ -20,2 +22,0 @@ func h() {
-	e
-	f
diff --git a/impl/gone.go b/impl/gone.go
--- a/impl/gone.go
+++ /dev/null
@@ -1,2 +0,0 @@
-package impl
-
`
	got, err := diffLines([]byte(diff))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[int]bool{"impl/x.go": {3: true, 11: true, 12: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("diffLines = %v, want %v", got, want)
	}
}
