package counter

import (
	"testing"

	"example.com/mod/testonly"
)

func TestAdd(t *testing.T) {
	var c Counter
	if n := c.Add(); n != testonly.One {
		t.Fatalf("Add() = %d, want %d", n, testonly.One)
	}
}
