// Package advisor will turn analysis metrics into findings (what is wrong, with
// evidence) and recommendations (what to change, with the effect a calibrated cost
// model predicts). It is empty until the advisor issue lands; the folder exists so the
// layout (parser → analysis → advisor → report) is visible from the start.
package advisor
