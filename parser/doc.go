// Package parser turns the files that profilers write (torch_npu, MindSpore and msprof
// output, msprof-analyze's cluster output, PyTorch's Kineto traces of GPU runs; in
// directories or archives) and hcclprof's own rank summaries into hcclprof's data
// model, package profile. Each input format is read here and nowhere else; large files
// are streamed and only what analysis needs is kept. Errors name the file and the
// position (line or byte offset) of bad input.
//
// Each input format is an inputFormat in a file of its own (format_*.go: how
// discovery recognises it, what it holds until the walk is done, how one rank of it is
// read, who claims its ranks, its fuzz targets), listed once in formats.go's
// inputFormats. A rank input carries the format that found it, so discovery and
// loading know no format by name. The rank summary's encoding, which summarize writes
// too, is internal/ranksummary; its format here recognises the files and reads them
// through it. Every rank read, in any format, then goes through profile.Rank.Normalize.
package parser
