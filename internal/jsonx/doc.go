// Package jsonx is the JSON and byte handling under hcclprof's format readers, knowing
// no profiler format: a lexer with strict and lenient readings (LexString,
// LexNumber, LexLiteral); a streaming scanner for timelines of hundreds of MB (Stream,
// ObjIter, SkipValue), read from the mapped file where it can be (ReadStream,
// MapFile), or in parts from guessed starts (GuessObjectInArray); the readings of a
// raw value written as a number or a string (RawStringBody, OptInt, IntOrZero,
// CanonicalInt); a position-keeping tree for summary files (ReadTree, WithTree,
// TreeParser, TreeReader) and a stream of such trees for files too big to hold
// (TreeStream); the members encoder of the rank summaries (EncodeMembers); and the
// append-only lists that hold a big trace's records packed (Chunks), with the table
// of the strings they hold by id (StringIDs). Errors name the file and the byte
// (SyntaxError).
package jsonx
