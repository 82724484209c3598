// Package parser turns the files that profilers write (torch_npu, MindSpore and msprof
// output, msprof-analyze's cluster output, PyTorch's Kineto traces of GPU runs; in
// directories or archives) into hcclprof's data model, package profile. Each input format is read here
// and nowhere else; large files are streamed and only what analysis needs is kept.
// Errors name the file and the position (line or byte offset) of bad input.
//
// Each input format is an inputFormat in a file of its own (format_*.go: how
// discovery recognises it, how one rank of it is read), listed once in formats.go's
// inputFormats; discovery, loading and the rank summary's reader all go through that
// list. Every rank read, in any format, then goes through profile.Rank.Normalize.
package parser
