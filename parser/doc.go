// Package parser turns the files that profilers write (torch_npu, MindSpore and msprof
// output, msprof-analyze's cluster output, PyTorch's Kineto traces of GPU runs; in
// directories or archives) into hcclprof's data model, package profile. Each input format is read here
// and nowhere else; large files are streamed and only what analysis needs is kept.
// Errors name the file and the position (line or byte offset) of bad input.
package parser
