// Package advisor turns the analysis' measurements into decisions: the slow ranks,
// links and servers and the checks that fire (Detect), findings (what is wrong, with
// evidence a person can check in the timeline) and recommendations (what to change,
// how to set it for the framework in use, and its predicted effect from the cost
// model in advisor/costmodel, calibrated on the run). It names only real settings: Knobs is
// the allowlist.
package advisor
