// Package testonly is imported by a test alone.
package testonly

import "sync"

// One is one.
const One = 1

var once sync.Once

// Do runs f once.
func Do(f func()) { once.Do(f) }
