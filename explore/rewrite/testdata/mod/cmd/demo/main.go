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
	ch := make(chan int, 1)
	ch <- 1
	fmt.Println("buffered", len(ch))
	fmt.Println("ticket", tickets.Next())
	fmt.Println("ratemutex", paced.MutexPkg())
	file, line = paced.Caller()
	fmt.Printf("ratecaller %s:%d\n", file, line)
	fmt.Println("last", !c.Last().IsZero())
}
