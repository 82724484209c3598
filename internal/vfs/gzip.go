package vfs

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/hcclprof/hcclprof/internal/jsonx"
)

// OpenMaybeGzip opens p, decompressing it as it is read when it starts with the gzip
// magic bytes (gz), whatever its name. Errors in the gzip data are *jsonx.SyntaxError
// naming p.
func OpenMaybeGzip(p string) (rd io.Reader, closeFn func(), gz bool, err error) {
	f, err := Open(p)
	if err != nil {
		return nil, nil, false, err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		cr := newCountingReader(br)
		zr, err := gzip.NewReader(cr)
		if err != nil {
			f.Close()
			return nil, nil, false, jsonx.ErrAtOffset(p, 0, "gzip: %v", err)
		}
		return &gzipRatioReader{newRatioReader(zr, cr, DefaultArchiveLimits.MaxRatio), DefaultArchiveLimits.MaxRatio}, func() { zr.Close(); f.Close() }, true, nil
	}
	return br, func() { f.Close() }, false, nil
}

// gzipRatioReader bounds a compressed file's ratio as archives bound their members'
// (DefaultArchiveLimits.MaxRatio, from RatioMinSize on): the file is read as a
// stream, so its size is not bounded, but a run of one byte (a bomb) stops early.
type gzipRatioReader struct {
	*RatioReader
	max int64
}

func (r *gzipRatioReader) Read(p []byte) (int, error) {
	n, err := r.RatioReader.Read(p)
	var re *RatioError
	if errors.As(err, &re) {
		err = fmt.Errorf("gzip: decompresses to more than %d times its size (%d bytes from %d): refused (a limit against decompression bombs)",
			r.max, re.Out, re.In)
	}
	return n, err
}

// GzipRest reads a gzip stream (OpenMaybeGzip's) to its end once the JSON trace it
// holds is read: gzip checks its CRC and length only there, and bytes after the
// compressed data (another member, or garbage) are met only there. A mismatch means
// the JSON read may not be what was written, so it is an error naming p; whitespace
// after the JSON is not.
func GzipRest(rd io.Reader, p string) error {
	br := bufio.NewReader(rd)
	var extra int64
	for {
		b, err := br.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return jsonx.ErrAtOffset(p, -1, "gzip: %v: the file is damaged, so what was read of it may be wrong", err)
		}
		if b != ' ' && b != '\n' && b != '\r' && b != '\t' {
			extra++
		}
	}
	if extra > 0 {
		return jsonx.ErrAtOffset(p, -1, "gzip: %d bytes of data after the trace's JSON", extra)
	}
	return nil
}
