package jsonx

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// encoderBytes is what json.Encoder writes of v, the reference.
func encoderBytes(t *testing.T, v any) []byte {
	t.Helper()
	var want bytes.Buffer
	require.NoError(t, json.NewEncoder(&want).Encode(v))
	return want.Bytes()
}

// TestEncodeMembersRules: omitempty as encoding/json reads it (-0 is empty, a nil
// pointer written as null without it), names from tags, "-" left out, nested structs
// and pointers to them, HTML escaped; tags it does not know are refused.
func TestEncodeMembersRules(t *testing.T) {
	type inner struct {
		A int
		B []int `json:"b,omitempty"`
	}
	type outer struct {
		F      float64        `json:",omitempty"`
		G      float64        `json:",omitempty"`
		P      *inner         `json:",omitempty"`
		Q      *inner         // null
		R      *inner         `json:"r"`
		S      inner          `json:"s,omitempty"` // a struct is never empty
		Skip   int            `json:"-"`
		Text   string         `json:"t,omitempty"`
		HTML   string         // escaped as Encode escapes it
		Map    map[string]int `json:",omitempty"`
		Iface  any            `json:",omitempty"`
		Bools  []bool
		hidden int
	}
	for _, v := range []any{
		outer{F: math.Copysign(0, -1), G: 1.5, R: &inner{A: 1, B: []int{2}}, HTML: "<a href=x>&</a>", hidden: 3, Skip: 4},
		outer{P: &inner{}, Map: map[string]int{"b": 1, "a": 2}, Iface: []int{1}, Bools: []bool{}},
		&outer{Text: "x"},
		struct{}{},
		[]int{1, 2},
		nil,
	} {
		var got bytes.Buffer
		require.NoError(t, EncodeMembers(&got, v))
		assert.Equal(t, string(encoderBytes(t, v)), got.String())
	}
	var got bytes.Buffer
	assert.ErrorContains(t, EncodeMembers(&got, struct {
		N int `json:",string"`
	}{}), "not supported")
	type Embedded struct{ X int }
	assert.ErrorContains(t, EncodeMembers(&got, struct{ Embedded }{}), "not supported")
}
