// Package mainjob is tollgate's main job, `tollgate check`: for each
// primitive a short sequential differential check (fuzz: the
// model and the implementation stepped side by side over random inputs),
// then concurrent histories recorded and checked with porcupine
// (linearizability.Run), then, on the Redis backend, the fault workloads
// of redischeck; one summary table and one verdict.
//
// Config is the job's whole input (the command's flags, one field each);
// Resolve checks it and fills in what follows from it; Run runs it and
// Replay checks a saved history again. A Verdict is Ok, Unknown (nothing
// failed, but something could not be checked: not a pass) or Illegal, and
// verdicts combine with Merge, the worst one winning. An error is a job
// that could not run (a bad Config, a server that would not start), never
// a verdict.
package mainjob
