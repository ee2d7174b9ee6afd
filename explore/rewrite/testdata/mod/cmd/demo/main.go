// Demo prints what the rewrite changed, one "key value" a line.
package main

import (
	"fmt"
	"reflect"

	"example.com/mod/counter"
	"example.com/mod/paced"
	tickets "example.com/mod/ticket"
)

func main() {
	var c counter.Counter
	c.Add()
	t := reflect.TypeFor[counter.Counter]()
	mu, _ := t.FieldByName("mu")
	n, _ := t.FieldByName("n")
	fmt.Println("mutex", mu.Type.PkgPath())
	fmt.Println("atomic", n.Type.PkgPath())
	file, line := counter.Where()
	fmt.Printf("where %s:%d\n", file, line)
	fmt.Println("ready", counter.Ready(make(chan struct{})))
	fmt.Println("ticket", tickets.Next())
	fmt.Println("ratemutex", paced.MutexPkg())
	file, line = paced.Caller()
	fmt.Printf("ratecaller %s:%d\n", file, line)
	fmt.Println("last", !c.Last().IsZero())
}
