// Package conform checks a port of tollgate's primitives against the model
// through a language-neutral driver protocol (spec/protocol.md): JSON lines
// on a driver's stdin and stdout, one concurrent actor per client.
//
// Run starts a driver (a command, or an in-process function for tests),
// exchanges hello, and runs three suites for each primitive the driver
// supports:
//
//   - vectors: the golden cases of spec/vectors/, generated from the model
//     by GenerateVectors (tollgate conform --write-vectors spec/vectors)
//     and kept identical to it by TestVectorsMatchModel;
//   - random: sequential sessions generated from the model's state and
//     checked answer by answer, a failing one shrunk by deleting requests;
//   - concurrent: many clients at once, the recorded history checked by the
//     porcupine models of package linearizability (T11, C16).
//
// Every expected answer comes from model/ through the codec in this package
// (request ↔ model input, model output ↔ answer), which the Go driver
// (ServeGo, behind `tollgate driver`) uses in the other direction over
// internal/sut. Nothing here restates a rule of the spec.
//
// Conn turns every way a driver can break the protocol (exiting, printing
// garbage, answering an unknown id, not answering in time) into a
// DriverError naming the request, and always reaps the child.
package conform
