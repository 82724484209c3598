package benchtrace

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRepeatRenumbersSteps: each copy's steps follow the previous copy's, its events
// are shifted past the previous copy's end, and process names are written once.
func TestRepeatRenumbersSteps(t *testing.T) {
	src := filepath.Join(t.TempDir(), "trace_view.json")
	require.NoError(t, os.WriteFile(src, []byte(`[
{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "Python"}},
{"ph": "X", "name": "ProfilerStep#5", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": "1000.000", "dur": 10},
{"ph": "X", "name": "ProfilerStep#6", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": "1010.000", "dur": 10}
]`), 0o644))
	p, err := Repeat(src, t.TempDir(), 3)
	require.NoError(t, err)
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	var events []struct {
		Name string `json:"name"`
		Ph   string `json:"ph"`
		Ts   string `json:"ts"`
	}
	require.NoError(t, json.Unmarshal(data, &events))
	var names, starts []string
	for _, e := range events {
		names = append(names, e.Name)
		starts = append(starts, e.Ts)
	}
	assert.Equal(t, []string{"process_name", "ProfilerStep#5", "ProfilerStep#6", "ProfilerStep#7", "ProfilerStep#8", "ProfilerStep#9", "ProfilerStep#10"}, names)
	// The source spans 20 µs; each copy starts 20 µs + 1 ms after the previous.
	assert.Equal(t, []string{"", "1000.000", "1010.000", "2020.000", "2030.000", "3040.000", "3050.000"}, starts)
}
