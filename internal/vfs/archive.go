package vfs

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// This file reads a profile shipped as an archive (.zip, .tar.gz, .tgz, .tar) in
// place, without unpacking it to disk. An archive is an fs.FS (Archive):
//
//   - a zip is read at random: the central directory is checked up front and a
//     member is decompressed when it is opened;
//   - a tar(.gz) is read once, front to back: the members hcclprof reads
//     (those its opener keeps) are kept in memory, the others are listed by name only.
//
// Limits guard against archive bombs: the total size of the members hcclprof reads,
// the number of members, and each member's compression ratio. Member names that are
// absolute or hold a ".." component, and links that point out of the archive, are
// refused. Any of these refuses the whole archive, with an error naming it and the
// member.
//
// A member is named by a path of the form ARCHIVE!/MEMBER
// (cluster.tar.gz!/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json); paths.go
// resolves such paths to the archives opened with OpenShared.

// ArchiveLimits bound what reading one archive may cost. A zero field takes its
// value from DefaultArchiveLimits.
type ArchiveLimits struct {
	// MaxBytes bounds the total unpacked size of the members hcclprof reads (a
	// tar's are held in memory).
	MaxBytes int64
	// MaxMembers bounds the number of entries (files, directories, links).
	MaxMembers int
	// MaxRatio bounds each member's unpacked:packed size ratio, for members
	// unpacked larger than RatioMinSize. Deflate cannot exceed about 1032:1, so the
	// default catches a run of zeros; the byte limit catches the rest.
	MaxRatio int64
}

// RatioMinSize is the unpacked size from which ArchiveLimits.MaxRatio applies: small
// members (an all-zero header file) may compress very well.
const RatioMinSize = 1 << 20

// DefaultArchiveLimits are the limits used unless LoadOptions or DiscoverOptions say
// otherwise.
var DefaultArchiveLimits = ArchiveLimits{
	MaxBytes:   8 << 30,
	MaxMembers: 200_000,
	MaxRatio:   1000,
}

func (l ArchiveLimits) orDefaults() ArchiveLimits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultArchiveLimits.MaxBytes
	}
	if l.MaxMembers <= 0 {
		l.MaxMembers = DefaultArchiveLimits.MaxMembers
	}
	if l.MaxRatio <= 0 {
		l.MaxRatio = DefaultArchiveLimits.MaxRatio
	}
	return l
}

// archiveSuffixes are the archive names recognised, longest first.
var archiveSuffixes = []string{".tar.gz", ".tgz", ".zip", ".tar"}

// IsArchiveName reports whether a file name is that of an archive hcclprof reads.
func IsArchiveName(name string) bool {
	return archiveSuffix(name) != ""
}

func archiveSuffix(name string) string {
	lower := strings.ToLower(name)
	for _, s := range archiveSuffixes {
		if strings.HasSuffix(lower, s) {
			return s
		}
	}
	return ""
}

// ArchiveError is an archive refused or unreadable: damaged, truncated, over a limit,
// or holding a member whose name escapes it.
type ArchiveError struct {
	Archive string // the archive's path
	Member  string // the member concerned, "" for the archive as a whole
	Msg     string
}

func (e *ArchiveError) Error() string {
	if e.Member == "" {
		return fmt.Sprintf("%s: %s", e.Archive, e.Msg)
	}
	return fmt.Sprintf("%s!/%s: %s", e.Archive, e.Member, e.Msg)
}

// errNotKept is opening a member of a tar that was listed but not kept: hcclprof
// does not read such files.
var errNotKept = errors.New("not read from the archive: hcclprof does not read this file")

// Archive is an archive opened for reading: an fs.FS whose names are the members'
// slash paths.
type Archive struct {
	path    string // as given
	limits  ArchiveLimits
	keep    KeepFunc
	size    int64
	modTime time.Time
	files   map[string]*archiveMember // by cleaned slash path; "." is the root
	zipFile *os.File
}

type archiveMember struct {
	name     string // full slash path
	dir      bool
	size     int64
	modTime  time.Time
	children []string // base names, sorted (directories)
	kept     bool     // readable (tar: data holds it)
	data     []byte   // tar
	zf       *zip.File
	db       bool // opened seekable in memory (SQLite reads at random)
	linkTo   string
	// special is the type of a member that is no file (a device, a FIFO, a socket):
	// listed as what it is, and refused when opened, as on disk.
	special fs.FileMode
}

// KeepFunc says of an archive's member (its slash path) whether its opener reads it
// (keep: a tar's kept members are held in memory, the others only listed, and only
// kept members count against ArchiveLimits.MaxBytes) and, of those, whether it reads
// it at random (seekable: a zip's member is then unpacked whole into memory when
// opened, as SQLite wants).
type KeepFunc func(member string) (keep, seekable bool)

// OpenArchive opens an archive, checking it against limits (zero fields default).
func OpenArchive(p string, limits ArchiveLimits, keep KeepFunc) (*Archive, error) {
	limits = limits.orDefaults()
	f, err := OpenRegular(p)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	a := &Archive{path: filepath.Clean(p), limits: limits, keep: keep, size: st.Size(), modTime: st.ModTime(),
		files: map[string]*archiveMember{".": {name: ".", dir: true, modTime: st.ModTime()}}}
	switch archiveSuffix(p) {
	case ".zip":
		err = a.readZip(f, st.Size())
		if err == nil {
			a.zipFile = f
		}
	case ".tar":
		err = a.readTar(bufio.NewReaderSize(f, 1<<16), nil)
	case ".tar.gz", ".tgz":
		cr := &CountingReader{r: bufio.NewReaderSize(f, 1<<16)}
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(cr); err != nil {
			err = a.errf("", "not a gzip file (%v)", err)
		} else if err = a.readTar(zr, cr); err == nil {
			// gzip checks its CRC and length only at its end, which the tar reader
			// stops short of (the blocks after the end-of-archive marker): read to it,
			// or a damaged archive was read as whole.
			if _, derr := io.Copy(io.Discard, io.LimitReader(zr, a.limits.MaxBytes)); derr != nil {
				err = a.errf("", "damaged archive: gzip: %v (the data read from it may be wrong)", derr)
			}
		}
	default:
		err = a.errf("", "not an archive hcclprof reads (%s)", strings.Join(archiveSuffixes, ", "))
	}
	if a.zipFile == nil {
		f.Close()
	}
	if err != nil {
		return nil, err
	}
	a.resolveLinks()
	a.buildDirs()
	return a, nil
}

// Close releases the archive (a zip's open file).
func (a *Archive) Close() error {
	if a.zipFile != nil {
		return a.zipFile.Close()
	}
	return nil
}

// Path is the archive's path as given to OpenArchive.
func (a *Archive) Path() string { return a.path }

func (a *Archive) errf(member, format string, args ...any) error {
	return &ArchiveError{Archive: a.path, Member: member, Msg: fmt.Sprintf(format, args...)}
}

// memberName checks and cleans a member's name: relative, no "..", "\" read as "/".
// It returns "" for the root ("./").
func (a *Archive) memberName(raw string) (string, error) {
	n := strings.ReplaceAll(raw, `\`, "/")
	if strings.HasPrefix(n, "/") || (len(n) >= 2 && n[1] == ':') {
		return "", a.errf(raw, "absolute member path: refusing the archive (it would escape the directory it is read as)")
	}
	var parts []string
	for _, c := range strings.Split(n, "/") {
		switch c {
		case "", ".":
		case "..":
			return "", a.errf(raw, "member path with a \"..\" component: refusing the archive (it would escape the directory it is read as)")
		default:
			parts = append(parts, c)
		}
	}
	return strings.Join(parts, "/"), nil
}

func (a *Archive) countMember(n int, raw string) error {
	if n > a.limits.MaxMembers {
		return a.errf("", "more than %d members (at %s): refusing the archive (MaxMembers limit against archive bombs)", a.limits.MaxMembers, raw)
	}
	return nil
}

// add records a member (a directory listed twice once).
func (a *Archive) add(m *archiveMember) {
	if old, ok := a.files[m.name]; ok && old.dir && m.dir {
		return
	}
	a.files[m.name] = m
}

func (a *Archive) readZip(f *os.File, size int64) error {
	zr, err := zip.NewReader(f, size)
	if err != nil {
		return a.errf("", "damaged or truncated zip: %v", err)
	}
	var total int64
	for i, zf := range zr.File {
		if err := a.countMember(i+1, zf.Name); err != nil {
			return err
		}
		name, err := a.memberName(zf.Name)
		if err != nil {
			return err
		}
		if name == "" {
			continue
		}
		mode := zf.Mode()
		switch {
		case mode.IsDir():
			a.add(&archiveMember{name: name, dir: true, modTime: zf.Modified})
			continue
		case mode&fs.ModeSymlink != 0:
			target, err := readSmall(zf)
			if err != nil {
				return a.errf(zf.Name, "reading the link: %v", err)
			}
			if err := a.checkLink(name, target, false); err != nil {
				return err
			}
			a.add(&archiveMember{name: name, linkTo: path.Join(path.Dir(name), target)})
			continue
		case !mode.IsRegular():
			if t := mode.Type() &^ fs.ModeDir; t != 0 {
				a.add(&archiveMember{name: name, special: t, modTime: zf.Modified})
			}
			continue
		}
		un, packed := zf.UncompressedSize64, zf.CompressedSize64
		if un > RatioMinSize && un > uint64(a.limits.MaxRatio)*max(packed, 1) {
			return a.errf(zf.Name, "compression ratio %d:1 over the limit of %d:1: refusing the archive (MaxRatio limit against archive bombs)",
				un/max(packed, 1), a.limits.MaxRatio)
		}
		kept, seekable := a.keep(name)
		m := &archiveMember{name: name, size: int64(un), modTime: zf.Modified, zf: zf, kept: kept}
		if m.kept {
			if total += int64(un); un > uint64(a.limits.MaxBytes) || total > a.limits.MaxBytes {
				return a.errf(zf.Name, "the files hcclprof reads unpack to more than %d bytes: refusing the archive (MaxBytes limit against archive bombs)", a.limits.MaxBytes)
			}
			m.db = seekable
		}
		a.add(m)
	}
	return nil
}

func readSmall(zf *zip.File) (string, error) {
	rc, err := zf.Open()
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 4096))
	return string(b), err
}

// readTar reads a tar stream once; cr counts the compressed bytes consumed (nil for
// a plain tar).
func (a *Archive) readTar(r io.Reader, cr *CountingReader) error {
	tr := tar.NewReader(r)
	var total int64
	for n := 1; ; n++ {
		hdr, err := tr.Next()
		if err == io.EOF {
			if n == 1 {
				return a.errf("", "empty archive")
			}
			return nil
		}
		if err != nil {
			return a.errf("", "damaged or truncated archive: %v", err)
		}
		if err := a.countMember(n, hdr.Name); err != nil {
			return err
		}
		name, err := a.memberName(hdr.Name)
		if err != nil {
			return err
		}
		if name == "" {
			continue
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			a.add(&archiveMember{name: name, dir: true, modTime: hdr.ModTime})
			continue
		case tar.TypeSymlink, tar.TypeLink:
			hard := hdr.Typeflag == tar.TypeLink
			if err := a.checkLink(name, hdr.Linkname, hard); err != nil {
				return err
			}
			target := path.Join(path.Dir(name), hdr.Linkname)
			if hard { // a hard link's target is named from the archive's root
				target, _ = a.memberName(hdr.Linkname)
			}
			a.add(&archiveMember{name: name, linkTo: target})
			continue
		case tar.TypeReg, tar.TypeRegA, tar.TypeGNUSparse:
		case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
			// Nothing to read, but listed: where hcclprof reads a file, the member is
			// refused as on disk ("not a regular file"), not silently absent.
			kind := map[byte]fs.FileMode{tar.TypeChar: fs.ModeDevice | fs.ModeCharDevice, tar.TypeBlock: fs.ModeDevice, tar.TypeFifo: fs.ModeNamedPipe}[hdr.Typeflag]
			a.add(&archiveMember{name: name, special: kind, modTime: hdr.ModTime})
			continue
		default: // extended headers and the like: no entry
			continue
		}
		kept, _ := a.keep(name)
		m := &archiveMember{name: name, size: hdr.Size, modTime: hdr.ModTime, kept: kept}
		if m.kept {
			if total += hdr.Size; hdr.Size > a.limits.MaxBytes || total > a.limits.MaxBytes {
				return a.errf(hdr.Name, "the files hcclprof reads unpack to more than %d bytes: refusing the archive (MaxBytes limit against archive bombs)", a.limits.MaxBytes)
			}
		}
		rd := io.Reader(tr)
		if cr != nil {
			rd = &RatioReader{r: tr, cr: cr, start: cr.n, max: a.limits.MaxRatio}
		}
		if m.kept {
			buf := bytes.NewBuffer(make([]byte, 0, hdr.Size))
			_, err = io.Copy(buf, rd)
			m.data = buf.Bytes()
		} else {
			_, err = io.Copy(io.Discard, rd)
		}
		if err != nil {
			var re *RatioError
			if errors.As(err, &re) {
				return a.errf(hdr.Name, "compression ratio over %d:1 (%d bytes unpacked from %d): refusing the archive (MaxRatio limit against archive bombs)", a.limits.MaxRatio, re.Out, re.In)
			}
			return a.errf(hdr.Name, "damaged or truncated archive: %v", err)
		}
		a.add(m)
	}
}

// checkLink refuses a link whose target lies outside the archive.
func (a *Archive) checkLink(name, target string, hard bool) error {
	t := strings.ReplaceAll(target, `\`, "/")
	if !hard {
		t = path.Join(path.Dir(name), t)
	}
	if strings.HasPrefix(target, "/") || strings.HasPrefix(target, `\`) || !fs.ValidPath(path.Clean(t)) || path.Clean(t) == ".." || strings.HasPrefix(path.Clean(t), "../") {
		return a.errf(name, "link to %q points out of the archive: refusing the archive", target)
	}
	return nil
}

// resolveLinks makes each link a copy of the file it names (a link to a directory,
// or to nothing, is dropped).
func (a *Archive) resolveLinks() {
	for name, m := range a.files {
		if m.linkTo == "" {
			continue
		}
		t := a.files[path.Clean(m.linkTo)]
		for hops := 0; t != nil && t.linkTo != "" && hops < 40; hops++ {
			t = a.files[path.Clean(t.linkTo)]
		}
		if t == nil || t.dir || t.linkTo != "" {
			delete(a.files, name)
			continue
		}
		c := *t
		c.name = name
		a.files[name] = &c
	}
}

// buildDirs adds the directories that members imply and lists each one's children.
func (a *Archive) buildDirs() {
	names := make([]string, 0, len(a.files))
	for n := range a.files {
		names = append(names, n)
	}
	for _, n := range names {
		for n != "." {
			parent := path.Dir(n)
			p, ok := a.files[parent]
			if !ok {
				p = &archiveMember{name: parent, dir: true, modTime: a.modTime}
				a.files[parent] = p
			}
			if !p.dir { // a file and a directory of the same name: the directory wins
				p.dir, p.kept, p.data, p.zf = true, false, nil, nil
			}
			p.children = append(p.children, path.Base(n))
			if ok {
				break
			}
			n = parent
		}
	}
	for _, m := range a.files {
		if m.dir {
			sort.Strings(m.children)
			m.children = compactStrings(m.children)
		}
	}
}

func compactStrings(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func (a *Archive) lookup(op, name string) (*archiveMember, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: a.display(name), Err: fs.ErrInvalid}
	}
	m, ok := a.files[name]
	if !ok {
		return nil, &fs.PathError{Op: op, Path: a.display(name), Err: fs.ErrNotExist}
	}
	return m, nil
}

// Root is the path that names the archive's root directory (ARCHIVE!), under which
// its members' paths are.
func (a *Archive) Root() string { return a.display(".") }

// display is the ARCHIVE!/MEMBER path of a member.
func (a *Archive) display(name string) string {
	if name == "." {
		return a.path + sep
	}
	return a.path + sep + "/" + name
}

// Open opens a member (fs.FS).
func (a *Archive) Open(name string) (fs.File, error) {
	m, err := a.lookup("open", name)
	if err != nil {
		return nil, err
	}
	switch {
	case m.dir:
		return &archiveDir{m: m, a: a}, nil
	case m.special != 0:
		return nil, fmt.Errorf("%s: not a regular file (%s)", a.display(name), fileKind(m.special))
	case !m.kept:
		return nil, &fs.PathError{Op: "open", Path: a.display(name), Err: errNotKept}
	case m.data != nil || m.zf == nil:
		return &archiveFile{m: m, r: bytes.NewReader(m.data)}, nil
	}
	rc, err := m.zf.Open()
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: a.display(name), Err: err}
	}
	if !m.db {
		return &archiveFile{m: m, rc: rc}, nil
	}
	// SQLite reads at random: hold the db in memory (counted in MaxBytes).
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: a.display(name), Err: err}
	}
	return &archiveFile{m: m, r: bytes.NewReader(data)}, nil
}

// Stat describes a member (fs.StatFS).
func (a *Archive) Stat(name string) (fs.FileInfo, error) {
	m, err := a.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return memberInfo{m}, nil
}

// ReadDir lists a directory of the archive, sorted by name (fs.ReadDirFS).
func (a *Archive) ReadDir(name string) ([]fs.DirEntry, error) {
	m, err := a.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if !m.dir {
		return nil, &fs.PathError{Op: "readdir", Path: a.display(name), Err: errors.New("not a directory")}
	}
	out := make([]fs.DirEntry, len(m.children))
	for i, c := range m.children {
		out[i] = fs.FileInfoToDirEntry(memberInfo{a.files[path.Join(name, c)]})
	}
	return out, nil
}

type memberInfo struct{ m *archiveMember }

func (i memberInfo) Name() string       { return path.Base(i.m.name) }
func (i memberInfo) Size() int64        { return i.m.size }
func (i memberInfo) ModTime() time.Time { return i.m.modTime }
func (i memberInfo) IsDir() bool        { return i.m.dir }
func (i memberInfo) Sys() any           { return nil }
func (i memberInfo) Mode() fs.FileMode {
	if i.m.dir {
		return fs.ModeDir | 0o555
	}
	return i.m.special | 0o444
}

// archiveFile is an open member: in memory (seekable), or streamed from a zip.
type archiveFile struct {
	m  *archiveMember
	r  *bytes.Reader
	rc io.ReadCloser
}

func (f *archiveFile) Stat() (fs.FileInfo, error) { return memberInfo{f.m}, nil }
func (f *archiveFile) Read(p []byte) (int, error) {
	if f.r != nil {
		return f.r.Read(p)
	}
	return f.rc.Read(p)
}
func (f *archiveFile) Close() error {
	if f.rc != nil {
		return f.rc.Close()
	}
	return nil
}

// Seek and ReadAt work on members held in memory (SQLite's VFS needs them).
func (f *archiveFile) Seek(off int64, whence int) (int64, error) {
	if f.r == nil {
		return 0, errors.New("seek on a streamed archive member")
	}
	return f.r.Seek(off, whence)
}

func (f *archiveFile) ReadAt(p []byte, off int64) (int, error) {
	if f.r == nil {
		return 0, errors.New("ReadAt on a streamed archive member")
	}
	return f.r.ReadAt(p, off)
}

type archiveDir struct {
	m   *archiveMember
	a   *Archive
	pos int
}

func (d *archiveDir) Stat() (fs.FileInfo, error) { return memberInfo{d.m}, nil }
func (d *archiveDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.a.display(d.m.name), Err: errors.New("is a directory")}
}
func (d *archiveDir) Close() error { return nil }
func (d *archiveDir) ReadDir(n int) ([]fs.DirEntry, error) {
	all, _ := d.a.ReadDir(d.m.name)
	rest := all[d.pos:]
	if n <= 0 {
		d.pos = len(all)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	rest = rest[:min(n, len(rest))]
	d.pos += len(rest)
	return rest, nil
}

// CountingReader counts the bytes read through it. It is an io.ByteReader, so
// gzip reads through it without a buffer of its own and the count is the compressed
// bytes consumed so far.
// CountingReader counts the bytes read through it.
type CountingReader struct {
	r *bufio.Reader
	n int64
}

func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *CountingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// RatioReader reads one tar member (or a compressed file) and fails once it has unpacked more than
// RatioMinSize bytes at a ratio over max to the compressed bytes consumed.
type RatioReader struct {
	r     io.Reader
	cr    *CountingReader
	start int64
	max   int64
	out   int64
}

// RatioError is a stream that unpacked Out bytes from In compressed ones, over its
// ratio limit.
type RatioError struct{ Out, In int64 }

func (e *RatioError) Error() string { return "compression ratio over the limit" }

// newCountingReader counts the bytes read from r, a decompressor's input, for a
// RatioReader.
func newCountingReader(r *bufio.Reader) *CountingReader { return &CountingReader{r: r} }

// newRatioReader reads r, the output of a decompressor reading cr, and fails with a
// *RatioError once it has unpacked more than RatioMinSize bytes at a ratio over
// maxRatio to the compressed bytes consumed.
func newRatioReader(r io.Reader, cr *CountingReader, maxRatio int64) *RatioReader {
	return &RatioReader{r: r, cr: cr, max: maxRatio}
}

func (r *RatioReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.out += int64(n)
	if in := r.cr.n - r.start; r.out > RatioMinSize && r.out > r.max*max(in, 1) {
		return n, &RatioError{Out: r.out, In: in}
	}
	return n, err
}
