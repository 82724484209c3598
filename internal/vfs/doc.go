// Package vfs reads files where they are, knowing no profiler format: a directory, or
// an archive (.tar, .tar.gz, .tgz, .zip) read in place, its members named
// ARCHIVE!/MEMBER (Stat, IsDir, IsFile, ReadDir, Open, WalkDir take both) and only
// those its opener's KeepFunc names kept; and a file that may be gzip-compressed,
// decompressed as it is read (OpenMaybeGzip, GzipRest). Archives and compressed files
// alike are held to a compression ratio (ArchiveLimits), against decompression bombs.
// Beside them, the handling of paths and names the readers share: a bounded walk of a
// tree (WalkLimited), the newest of the files a pattern numbers (NewestMatch), names
// sorted by their numbers (SortByNumbers), links resolved (RealPath, Within).
package vfs
