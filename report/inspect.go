package report

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/report/contract"
	"github.com/hcclprof/hcclprof/report/internal/sanitize"
)

// InspectDocument is what `hcclprof inspect` shows.
type InspectDocument struct {
	Ranks   []analysis.Inspection
	Notes   []string
	Command string
	Version string
	// Width is the text output's width in display columns (the terminal's); 0 is no
	// limit. Other formats ignore it.
	Width int
}

// writeInspectText writes, per rank, what was found and which analyses it supports,
// with the collection setting that would enable each missing one.
func writeInspectText(w io.Writer, d *InspectDocument) error {
	sanitize.Value(d) // names come from untrusted profiles
	p := newPrinter(w, d.Width)
	p.printf("hcclprof inspect: %d rank(s)\n", len(d.Ranks))
	t := newTextTable(col("Rank"), col("Format"), column{name: "Level", drop: 4}, column{name: "Export", drop: 5},
		column{name: "Versions", drop: 1, cut: true}, column{name: "Steps", cut: true}, column{name: "Ops", drop: 6}, column{name: "Tasks", drop: 7},
		column{name: "Files used", short: "Files\nused", drop: 2}, column{name: "Ignored", drop: 3}, col("Problems"))
	for _, in := range d.Ranks {
		t.Append(strconv.Itoa(in.Rank), string(in.Format), dash(in.ProfilerLevel), dash(in.ExportType), dash(in.Versions),
			stepRange(in.Steps), strconv.Itoa(in.Ops), strconv.Itoa(in.Tasks), strconv.Itoa(len(in.FilesUsed)),
			strconv.Itoa(len(in.FilesIgnored)), strconv.Itoa(len(in.Problems)))
	}
	p.table(t)
	// Capabilities are usually the same on every rank: print each distinct set once.
	groups := map[string][]int{}
	var order []string
	for _, in := range d.Ranks {
		var lines []string
		for _, c := range in.Capabilities {
			lines = append(lines, capabilityLine(c))
		}
		key := strings.Join(lines, "\n")
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], in.Rank)
	}
	for _, key := range order {
		p.printf("\nWhat the data supports (%s):\n%s\n", ranksNoun(groups[key]), key)
	}
	for _, in := range d.Ranks {
		if len(in.Problems) > 0 || len(in.FilesIgnored) > 0 || len(in.FilesUsed) > 0 {
			p.printf("\nRank %d (%s)\n", in.Rank, in.Dir)
			if len(in.FilesUsed) > 0 {
				p.printf("  used: %s\n", strings.Join(in.FilesUsed, ", "))
			}
			if len(in.FilesIgnored) > 0 {
				p.printf("  ignored: %s\n", strings.Join(in.FilesIgnored, ", "))
			}
			for _, pr := range in.Problems {
				p.printf("  problem: %s\n", pr)
			}
		}
	}
	if len(d.Notes) > 0 {
		p.printf("\nNotes\n")
		for _, n := range d.Notes {
			p.printf("  - %s\n", n)
		}
	}
	return p.done()
}

func capabilityLine(c analysis.Capability) string {
	if c.Available {
		return "  [yes] " + c.Name + ": " + c.Source
	}
	return "  [no]  " + c.Name + ": " + c.Enable
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// stepRange prints step numbers compactly: "10-12", "1, 3", "-" for none.
func stepRange(steps []int) string {
	if len(steps) == 0 {
		return "-"
	}
	if len(steps) > 2 && steps[len(steps)-1]-steps[0] == len(steps)-1 {
		return strconv.Itoa(steps[0]) + "-" + strconv.Itoa(steps[len(steps)-1])
	}
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = strconv.Itoa(s)
	}
	return strings.Join(parts, ", ")
}

type jsonInspect struct {
	SchemaVersion int               `json:"schema_version"`
	Tool          contract.Tool     `json:"tool"`
	Ranks         []jsonInspectRank `json:"ranks"`
	Notes         []string          `json:"notes"`
}

type jsonInspectRank struct {
	Rank          int              `json:"rank"`
	Dir           string           `json:"dir"`
	Format        string           `json:"format"`
	ProfilerLevel string           `json:"profiler_level"`
	ExportType    string           `json:"export_type"`
	Versions      string           `json:"versions"`
	Steps         []int            `json:"steps"`
	Ops           int              `json:"ops"`
	Tasks         int              `json:"tasks"`
	FilesUsed     []string         `json:"files_used"`
	FilesIgnored  []string         `json:"files_ignored"`
	Problems      []string         `json:"problems"`
	Capabilities  []jsonCapability `json:"capabilities"`
}

type jsonCapability struct {
	Name      string `json:"name"`
	Available bool   `json:"available"`
	Source    string `json:"source,omitempty"`
	Enable    string `json:"enable,omitempty"`
}

// writeInspectJSON writes the inspection as JSON (same schema_version rules as the report).
func writeInspectJSON(w io.Writer, d *InspectDocument) error {
	sanitize.Value(d) // names come from untrusted profiles
	out := jsonInspect{SchemaVersion: SchemaVersion, Tool: contract.Tool{Name: "hcclprof", Version: d.Version, Command: d.Command},
		Ranks: []jsonInspectRank{}, Notes: nonNil(d.Notes)}
	for _, in := range d.Ranks {
		jr := jsonInspectRank{Rank: in.Rank, Dir: in.Dir, Format: string(in.Format), ProfilerLevel: in.ProfilerLevel,
			ExportType: in.ExportType, Versions: in.Versions, Steps: in.Steps, Ops: in.Ops, Tasks: in.Tasks,
			FilesUsed: nonNil(in.FilesUsed), FilesIgnored: nonNil(in.FilesIgnored), Problems: nonNil(in.Problems)}
		if jr.Steps == nil {
			jr.Steps = []int{}
		}
		for _, c := range in.Capabilities {
			jr.Capabilities = append(jr.Capabilities, jsonCapability{Name: c.Name, Available: c.Available, Source: c.Source, Enable: c.Enable})
		}
		out.Ranks = append(out.Ranks, jr)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return namedJSONError(out, enc.Encode(out))
}
