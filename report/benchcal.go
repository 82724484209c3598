package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

// BenchCalibrationDoc is hcclprof calibrate --bench's output: the sweeps read, the
// calibration made of them and where it was written.
type BenchCalibrationDoc struct {
	Calibration *costmodel.BenchCalibration
	// Inputs are the files read, each with its format and notes.
	Inputs []BenchInput
	// Written is the calibration file's path, "" when none was written.
	Written string
	Width   int
}

// BenchInput is one benchmark file read.
type BenchInput struct {
	File   string   `json:"file"`
	Format string   `json:"format"`
	Points int      `json:"points"`
	Notes  []string `json:"notes"`
}

// writeBenchCalibrationText writes the sweeps per (op, ranks) with their
// out-of-sample error per size band.
func writeBenchCalibrationText(w io.Writer, d BenchCalibrationDoc) error {
	sanitize.Value(&d) // file names and notes come from the inputs
	p := newPrinter(w, d.Width)
	for _, in := range d.Inputs {
		p.printf("read %s: %s, %d timings\n", in.File, in.Format, in.Points)
		for _, n := range in.Notes {
			p.printf("  note: %s\n", n)
		}
	}
	p.printf("\nCalibration (each (op, ranks) sweep priced between its sizes in the log-log plot; error: each size left out and priced from the others, median / 80th percentile per size band)\n")
	cols := []column{col("Op"), col("Ranks"), col("Sizes"), column{name: "Range", drop: 1}}
	for _, b := range costmodel.SizeBands {
		cols = append(cols, column{name: b, drop: 2})
	}
	t := newTextTable(cols...)
	for _, f := range d.Calibration.Families {
		row := []string{f.Op, fmt.Sprint(f.Ranks), fmt.Sprint(len(f.Bytes)), units.FormatBytes(f.Bytes[0]) + "–" + units.FormatBytes(f.Bytes[len(f.Bytes)-1])}
		for _, b := range costmodel.SizeBands {
			cell := "–"
			for _, e := range f.Error {
				if e.Band == b {
					cell = fmt.Sprintf("%s / %s (%d)", pct(e.MedianAbs), pct(e.P80Abs), e.N)
				}
			}
			row = append(row, cell)
		}
		t.Append(row...)
	}
	p.table(t)
	if d.Written != "" {
		p.printf("\nwrote %s: give it to analyze, advise, whatif or model with --calibration\n", d.Written)
	}
	return p.done()
}

// writeBenchCalibrationJSON writes the inputs and the calibration.
func writeBenchCalibrationJSON(w io.Writer, d BenchCalibrationDoc) error {
	out := struct {
		SchemaVersion int                         `json:"schema_version"`
		Inputs        []BenchInput                `json:"inputs"`
		Calibration   *costmodel.BenchCalibration `json:"calibration"`
		Written       *string                     `json:"written"`
	}{SchemaVersion, d.Inputs, d.Calibration, nil}
	if d.Written != "" {
		out.Written = &d.Written
	}
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return namedJSONError(out, e.Encode(out))
}
