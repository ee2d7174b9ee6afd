module example.com/mod

go 1.26.8

require (
	github.com/tollgate/tollgate v0.0.0
	golang.org/x/time v0.16.0
)

replace github.com/tollgate/tollgate => ../../../..
