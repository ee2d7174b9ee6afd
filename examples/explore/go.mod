module example.com/explore

go 1.26.8

require (
	github.com/tollgate/tollgate v0.0.0
	golang.org/x/sync v0.25.0
	golang.org/x/time v0.16.0
)

require (
	github.com/anishathalye/porcupine v1.3.1 // indirect
)

replace github.com/tollgate/tollgate => ../..
