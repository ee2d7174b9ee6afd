// Package paced uses golang.org/x/time/rate, a package of the module
// cache.
package paced

import (
	"reflect"
	"runtime"

	"golang.org/x/time/rate"
)

// MutexPkg returns the package path of the type of rate.Limiter's mutex.
func MutexPkg() string {
	f, _ := reflect.TypeFor[rate.Limiter]().FieldByName("mu")
	return f.Type.PkgPath()
}

// Caller returns the file and line of rate.Sometimes.Do's call of its
// function.
func Caller() (file string, line int) {
	var s rate.Sometimes
	s.Do(func() { _, file, line, _ = runtime.Caller(1) })
	return file, line
}
