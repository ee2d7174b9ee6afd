// Package house checks, in its tests, the rules of the repository's
// layout that docs/layout.md states: the reference code (model/, impl/, the
// seam, the clock, the explorer's layout interfaces and the copies generated
// from impl/) imports nothing that checks it, model/ imports nothing of
// ours, the rooms of the house (a top-level directory, or one under
// internal/ or backends/) import each other without a cycle, so no arrow
// runs back up, and no package name is used twice but where the same table
// is served by another backend. It holds no code.
package house
