// Package examples holds the programs of the README's "Use it": an HTTP
// middleware with a token bucket per client and a reclaimer for the clients
// that went away, a handler admitted by the credit table, and one Redis
// bucket shared by two processes. Each is run by go test, so the README's
// quick start cannot drift from the API: Example_middleware and
// Example_creditHandler print what they serve, and TestTwoProcesses runs
// two processes against one redis-server.
//
// The middleware and the reclaimer are written to be copied: they use only
// the public API of impl/tokenbucket.
package examples
