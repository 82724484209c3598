package sanitize

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"allreduce", "allreduce"},
		{"hcom_allReduce__123_0_1", "hcom_allReduce__123_0_1"},
		{"µs ×", "µs ×"},
		{"a\xff\xfe\x80b", "a\uFFFD\uFFFD\uFFFDb"},
		{"op\n::warning::INJECTED", "op ::warning::INJECTED"},
		{"a\r\nb\tc\vd\fe", "a  b c d e"},
		{"a\x00b\x1bc\x7fd\u009be", "a\uFFFDb\uFFFDc\uFFFDd\uFFFDe"},
		{"a\u0085b\u2028c\u2029d", "a b c d"},
		{"a\uFFFDb", "a\uFFFDb"},                     // already clean: idempotent
		{"op\u202eevil\u202c", "op\uFFFDevil\uFFFD"}, // bidi override and pop
		{"a\u2066b\u2069c\u200ed\u200fe\u061cf", "a\uFFFDb\uFFFDc\uFFFDd\uFFFDe\uFFFDf"},
		{"", ""},
	}
	for _, tc := range tests {
		got := String(tc.in)
		assert.Equal(t, tc.want, got, "%q", tc.in)
		assert.True(t, utf8.ValidString(got))
		assert.Equal(t, got, String(got), "idempotent")
	}
	assert.Equal(t, "export A=1\nexport B=\uFFFD ", Lines("export A=1\nexport B=\xff\r"))
}

type inner struct {
	Name string
	Tags []string
}

type kind string

type doc struct {
	Title   string
	Kind    kind
	Apply   string
	Ptr     *inner
	Same    *inner // the same pointer as Ptr
	Items   []inner
	ByName  map[string]inner
	Any     map[string]any
	Numbers []float64
	hidden  string
	Self    *doc
}

func TestValue(t *testing.T) {
	bad := "x\xff\n::warning::y"
	want := "x\uFFFD ::warning::y"
	in := &inner{Name: bad, Tags: []string{bad}}
	d := &doc{Title: bad, Kind: kind(bad), Apply: "line one\nline \xff", Ptr: in, Same: in,
		Items: []inner{{Name: bad}}, ByName: map[string]inner{bad: {Name: bad}},
		Any: map[string]any{"k": bad, "n": 3, "list": []string{bad}}, Numbers: []float64{1}, hidden: bad}
	d.Self = d
	Value(d)
	assert.Equal(t, want, d.Title)
	assert.Equal(t, kind(want), d.Kind)
	assert.Equal(t, "line one\nline \uFFFD", d.Apply, "multi-line text keeps its line breaks")
	assert.Equal(t, want, d.Ptr.Name)
	assert.Equal(t, []string{want}, d.Ptr.Tags)
	assert.Equal(t, want, d.Items[0].Name)
	assert.Equal(t, map[string]inner{want: {Name: want}}, d.ByName)
	assert.Equal(t, want, d.Any["k"])
	assert.Equal(t, 3, d.Any["n"])
	assert.Equal(t, []string{want}, d.Any["list"])
	assert.Equal(t, bad, d.hidden, "unexported fields are not touched")
	Value((*doc)(nil)) // no panic
	Value(doc{})       // not a pointer: nothing to do
}
