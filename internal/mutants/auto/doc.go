// Package auto is tollgate's automatic mutation testing: mutants nobody
// chose, generated from the source of impl/ and model/ by small operators,
// each judged by a fast profile of the whole suite.
package auto
