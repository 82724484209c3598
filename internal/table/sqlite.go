package table

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"modernc.org/sqlite"
	sqlitevfs "modernc.org/sqlite/vfs"

	"github.com/hcclprof/hcclprof/internal/jsonx"
	"github.com/hcclprof/hcclprof/internal/vfs"
)

// This file holds what the SQLite readers (the torch_npu db export, docs/formats.md §7)
// share: opening a database strictly read-only, checking its schema before querying
// it, and scanning the loosely typed values SQLite stores (a NUMERIC column holds
// integers or reals, PYTORCH_API.startNs is TEXT) without going through float64 where
// a value is an integer.

// DB is one database opened read-only on a single connection.
type DB struct {
	File string
	db   *sql.DB
	conn *sql.Conn
	vfs  *sqlitevfs.FS // the archive a database is read from, nil for a file
	// tmpDir holds the private copy of a database read with its -wal (walCopy),
	// removed on close; "" when the input itself is read.
	tmpDir string
	ctx    context.Context
	// tables maps each table's upper-cased name (SQLite names are case-insensitive)
	// to its name as declared.
	tables map[string]string
}

// sqliteURI is the URI that opens path read-only and immutable: SQLite then takes
// no lock and creates no journal, WAL or shared-memory file beside the input, and
// never writes to it (the directories of real profiles are often read-only). The
// path is made absolute and the characters a URI reserves are escaped.
func sqliteURI(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return sqliteURIQuery(filepath.ToSlash(abs), ""), nil
}

// sqliteURIQuery is the read-only URI of a slash path, with extra query
// parameters (e.g. "&vfs=NAME").
func sqliteURIQuery(abs, extra string) string {
	return sqliteFileURI(abs, "?mode=ro&immutable=1"+extra)
}

// sqliteFileURI is the URI of a slash path, the characters a URI reserves escaped,
// with query.
func sqliteFileURI(abs, query string) string {
	var b strings.Builder
	b.WriteString("file:")
	for i := 0; i < len(abs); i++ {
		switch c := abs[i]; c {
		case '%', '?', '#':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString(query)
	return b.String()
}

// OpenSQLite opens a database for reading and lists its tables. A file that is not
// a database (or whose first page is damaged) fails here, with an error naming it.
func OpenSQLite(path string) (*DB, error) {
	st, err := vfs.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, dbErr(path, "is a directory, not a SQLite database")
	}
	if st.Size() == 0 {
		return nil, dbErr(path, "empty file: not a SQLite database")
	}
	if err := checkSQLiteHeader(path, st.Size()); err != nil {
		return nil, err
	}
	var uri, tmpDir string
	var fsvfs *sqlitevfs.FS
	if a, member, ok := vfs.Resolve(path); ok {
		// A db inside an archive is read through a VFS over the archive (the member
		// is held in memory), not unpacked to disk.
		name, v, err := sqlitevfs.New(a)
		if err != nil {
			return nil, dbErr(path, "reading the database from the archive: %v", err)
		}
		fsvfs, uri = v, sqliteURIQuery(member, "&vfs="+name)
	} else if walDB, dir, err := walCopy(path); err != nil {
		return nil, dbErr(path, "%v", err)
	} else if walDB != "" {
		// Committed rows in its -wal: read a private copy with it (sqlitewal.go).
		tmpDir, uri = dir, sqliteCopyURI(walDB)
	} else if uri, err = sqliteURI(path); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		if fsvfs != nil {
			fsvfs.Close()
		}
		if tmpDir != "" {
			os.RemoveAll(tmpDir)
		}
		return nil, dbErr(path, "%v", err)
	}
	db.SetMaxOpenConns(1)
	d := &DB{File: path, db: db, vfs: fsvfs, tmpDir: tmpDir, ctx: context.Background()}
	if d.conn, err = db.Conn(d.ctx); err != nil {
		d.conn = nil
		d.Close()
		return nil, d.Wrap("opening the database", err)
	}
	rows, err := d.conn.QueryContext(d.ctx, "SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		d.Close()
		return nil, d.Wrap("reading the schema", err)
	}
	d.tables = map[string]string{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			d.Close()
			return nil, d.Wrap("reading the schema", err)
		}
		d.tables[strings.ToUpper(name)] = name
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		d.Close()
		return nil, d.Wrap("reading the schema", err)
	}
	return d, nil
}

// sqliteMagic opens every SQLite 3 database file.
const sqliteMagic = "SQLite format 3\x00"

// checkSQLiteHeader reads the 100-byte database header and checks the file against
// it. SQLite itself does not always notice a truncated file: a page past the end
// reads as zeros, and a query can then return fewer rows without an error (seen on a
// generated db cut short by 1%). The header records the page size and, in every file
// written by SQLite 3.7.0 (2010) or later, the page count (valid when its
// version-valid-for number equals the change counter); a file shorter than that is
// truncated. Without a valid count, a size that is not a whole number of pages is.
func checkSQLiteHeader(path string, size int64) error {
	f, err := vfs.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var h [100]byte
	if n, _ := io.ReadFull(f, h[:]); n < len(h) || string(h[:16]) != sqliteMagic {
		return dbErr(path, "not a SQLite database (no %q header): the file is damaged or of another kind", strings.TrimSuffix(sqliteMagic, "\x00"))
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize&(pageSize-1) != 0 {
		return dbErr(path, "damaged SQLite header: page size %d", pageSize)
	}
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	changes, validFor := binary.BigEndian.Uint32(h[24:28]), binary.BigEndian.Uint32(h[92:96])
	if pages > 0 && changes == validFor {
		if want := pages * pageSize; size < want {
			return dbErr(path, "truncated: the SQLite header says %d bytes (%d pages of %d), the file has %d", want, pages, pageSize, size)
		}
		return nil
	}
	if size%pageSize != 0 {
		return dbErr(path, "truncated: %d bytes is not a whole number of %d-byte SQLite pages", size, pageSize)
	}
	return nil
}

// Close closes the database and removes its private copy, if any.
func (d *DB) Close() {
	if d.conn != nil {
		d.conn.Close()
	}
	d.db.Close()
	if d.vfs != nil {
		d.vfs.Close()
	}
	if d.tmpDir != "" {
		os.RemoveAll(d.tmpDir)
	}
}

// dbErr is an error about a database file (no position: SQLite files have none a
// user could use).
func dbErr(file, format string, args ...any) error {
	return &jsonx.SyntaxError{File: file, Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

// Wrap names the file and what was being read, and says what SQLite's corruption
// codes mean for the user.
func (d *DB) Wrap(what string, err error) error {
	msg := err.Error()
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case 26: // SQLITE_NOTADB
			msg += ": the file is not a SQLite database (or its header is damaged)"
		case 11: // SQLITE_CORRUPT
			msg += ": the file is corrupt or truncated"
		case 10: // SQLITE_IOERR (a short read past the end of a truncated file)
			msg += ": the file could not be read in full (truncated?)"
		}
	}
	return dbErr(d.File, "%s: %s", what, msg)
}

// Has reports whether the database has a table (any case).
func (d *DB) Has(table string) bool {
	_, ok := d.tables[strings.ToUpper(table)]
	return ok
}

// Columns returns a table's columns, upper-cased, as a set.
func (d *DB) Columns(table string) (map[string]bool, error) {
	rows, err := d.conn.QueryContext(d.ctx, "SELECT name FROM pragma_table_info(?)", d.tables[strings.ToUpper(table)])
	if err != nil {
		return nil, d.Wrap("reading the columns of "+table, err)
	}
	defer rows.Close()
	cols := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, d.Wrap("reading the columns of "+table, err)
		}
		cols[strings.ToUpper(name)] = true
	}
	if err := rows.Err(); err != nil {
		return nil, d.Wrap("reading the columns of "+table, err)
	}
	return cols, nil
}

// Require checks that a table exists with the named columns; the error says what is
// missing, so a db of another schema fails clearly instead of in a query.
func (d *DB) Require(table string, cols ...string) error {
	if !d.Has(table) {
		return dbErr(d.File, "no table %s: not a torch_npu profiler db, or one written by an unsupported version", table)
	}
	have, err := d.Columns(table)
	if err != nil {
		return err
	}
	var missing []string
	for _, c := range cols {
		if !have[strings.ToUpper(c)] {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return dbErr(d.File, "table %s has no column %s (an unsupported schema)", table, strings.Join(missing, ", "))
	}
	return nil
}

// HasColumns reports whether a table exists with all the named columns.
func (d *DB) HasColumns(table string, cols ...string) (bool, error) {
	if !d.Has(table) {
		return false, nil
	}
	have, err := d.Columns(table)
	if err != nil {
		return false, err
	}
	for _, c := range cols {
		if !have[strings.ToUpper(c)] {
			return false, nil
		}
	}
	return true, nil
}

// query runs a query; what names it in errors.
func (d *DB) query(what, q string) (*sql.Rows, error) {
	rows, err := d.conn.QueryContext(d.ctx, q)
	if err != nil {
		return nil, d.Wrap(what, err)
	}
	return rows, nil
}

// Int scans an integer stored as an INTEGER, an integral REAL, or decimal TEXT
// (PYTORCH_API.startNs). NULL leaves Valid false.
type Int struct {
	V     int64
	Valid bool
}

// Scan implements sql.Scanner.
func (n *Int) Scan(src any) error {
	n.V, n.Valid = 0, false
	switch x := src.(type) {
	case nil:
		return nil
	case int64:
		n.V = x
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 9e18 {
			return fmt.Errorf("%v is not an integer", x)
		}
		n.V = int64(x)
	case string:
		return n.Parse(x)
	case []byte:
		return n.Parse(string(x))
	case bool:
		if x {
			n.V = 1
		}
	default:
		return fmt.Errorf("unexpected %T value", src)
	}
	n.Valid = true
	return nil
}

// Parse reads s, an integer written as text, as Scan reads a TEXT value.
func (n *Int) Parse(s string) error {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil // an empty text is no value
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 9e18 {
			return fmt.Errorf("%q is not an integer", s)
		}
		v = int64(f)
	}
	n.V, n.Valid = v, true
	return nil
}

// dbFloat scans a number stored as INTEGER, REAL or numeric TEXT. NULL, empty text
// and N/A leave Valid false. NaN and infinities read as absent.
type dbFloat struct {
	V     float64
	Valid bool
}

// Scan implements sql.Scanner.
func (f *dbFloat) Scan(src any) error {
	f.V, f.Valid = 0, false
	switch x := src.(type) {
	case nil:
		return nil
	case int64:
		f.V = float64(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		f.V = x
	case string:
		return f.parse(x)
	case []byte:
		return f.parse(string(x))
	default:
		return fmt.Errorf("unexpected %T value", src)
	}
	f.Valid = true
	return nil
}

func (f *dbFloat) parse(s string) error {
	s = strings.TrimSpace(s)
	if NullText(s) {
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", s)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	f.V, f.Valid = v, true
	return nil
}

// Text scans any value as text: TEXT as it is, numbers formatted, NULL as "".
type Text struct {
	V     string
	Valid bool
}

// Scan implements sql.Scanner.
func (t *Text) Scan(src any) error {
	t.V, t.Valid = "", src != nil
	switch x := src.(type) {
	case nil:
	case string:
		t.V = x
	case []byte:
		t.V = string(x)
	case int64:
		t.V = strconv.FormatInt(x, 10)
	case float64:
		t.V = strconv.FormatFloat(x, 'f', -1, 64)
	default:
		t.V = fmt.Sprint(x)
	}
	return nil
}

// scaledOf converts a float in ms (or MB) to ns (or bytes), rounding to nearest.
func scaledOf(f float64) (int64, error) {
	x := math.Round(f * 1e6)
	if math.IsNaN(x) || math.Abs(x) > jsonx.MaxScaled {
		return 0, fmt.Errorf("%v out of range", f)
	}
	return int64(x), nil
}
