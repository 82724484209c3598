// Package config reads hcclprof's configuration file (--config FILE, YAML) once, for
// the driver, and hands each package its typed section: analysis.Options (where the
// measurements cut, the hardware and its link peaks) and advisor.Options (the
// exposed-communication budget, the detectors' and the findings' thresholds). The
// names and defaults stay with the packages that use them (the findings' thresholds
// beside their rules, advisor.Thresholds.Keys); every key's range is checked here, by
// one rule (bounds.check). A key left out keeps its default; an unknown key is an
// error, so a typo cannot silently keep a default. Errors name the file and line.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hcclprof/hcclprof/advisor"
	"github.com/hcclprof/hcclprof/analysis"
	"github.com/hcclprof/hcclprof/analysis/hardware"
)

// File is the configuration file as written (hcclprof.example.yaml lists every key).
type File struct {
	// Hardware names the product (910A, A2, A3); "" detects it from the data.
	Hardware string `yaml:"hardware"`
	// PeaksGBps overrides link peaks by transport (HCCS, SIO, PCIE, SDMA, RDMA).
	PeaksGBps map[string]float64 `yaml:"peaks_gbps"`
	// CommBudget is the exposed-communication share above which communication is the
	// bottleneck (advisor.Options.CommBudget).
	CommBudget *float64 `yaml:"comm_budget"`

	SlowRank struct {
		Method   *string  `yaml:"method"` // mad or dixon
		Z        *float64 `yaml:"z"`
		MinShare *float64 `yaml:"min_share"`
		Persist  *float64 `yaml:"persist"`
	} `yaml:"slow_rank"`
	SlowLink struct {
		Fraction      *float64 `yaml:"fraction"`
		GroupFraction *float64 `yaml:"group_fraction"`
	} `yaml:"slow_link"`
	RetransmissionS *float64 `yaml:"retransmission_s"`

	Checks struct {
		SmallSDMAMB     *float64 `yaml:"small_sdma_mb"`
		SmallRDMAMB     *float64 `yaml:"small_rdma_mb"`
		SmallShare      *float64 `yaml:"small_share"`
		ContentionGBps  *float64 `yaml:"contention_gbps"`
		ContentionMinMB *float64 `yaml:"contention_min_mb"`
		AlignmentBytes  *int64   `yaml:"alignment_bytes"`
		// DefaultBuffsizeMB is HCCL_BUFFSIZE when the run does not set it
		// (analysis.Limits.DefaultBuffsizeMB, which the advisor reads back).
		DefaultBuffsizeMB *int `yaml:"default_buffsize_mb"`
	} `yaml:"checks"`

	// Findings are the advisor's thresholds by finding id (findings.<id>.<key>),
	// named by advisor.Thresholds.Keys.
	Findings yaml.Node `yaml:"findings"`
}

// Sections are the file's keys handed to the packages that use them, over their
// defaults.
type Sections struct {
	Analysis analysis.Options
	Advisor  advisor.Options
}

// Defaults are the sections when no file is given.
func Defaults() Sections {
	return Sections{Analysis: analysis.Options{}, Advisor: advisor.DefaultOptions}
}

// Load reads a configuration file.
func Load(path string) (Sections, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Sections{}, err
	}
	return Parse(bytes.NewReader(b), path)
}

// Parse reads a configuration document; name labels errors.
func Parse(r io.Reader, name string) (Sections, error) {
	f, err := decode(r, name)
	if err != nil {
		return Sections{}, err
	}
	s, err := f.sections()
	if err != nil {
		return Sections{}, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// decode parses the YAML, refusing unknown keys and non-finite numbers.
func decode(r io.Reader, name string) (File, error) {
	var c File
	text, err := io.ReadAll(r)
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := nonFinite(text); err != nil {
		return File{}, fmt.Errorf("%s: %w", name, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(text))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			// "line 2: field zz not found in type struct {...}": the Go type means
			// nothing to the user.
			msgs := make([]string, len(te.Errors))
			for i, m := range te.Errors {
				if j := strings.Index(m, " in type "); j > 0 {
					m = m[:j]
				}
				if j := strings.Index(m, " into struct"); j > 0 {
					m = m[:j] + " into a mapping"
				}
				msgs[i] = name + ": " + m
			}
			return File{}, errors.New(strings.Join(msgs, "; "))
		}
		return File{}, fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return c, nil
}

// nonFinite refuses a number that is NaN or infinite (YAML's .nan, .inf) anywhere in
// the file: every comparison with NaN is false, so a range check let it through to
// the thresholds and the report (a JSON report cannot hold it).
func nonFinite(text []byte) error {
	var root yaml.Node
	if err := yaml.Unmarshal(text, &root); err != nil {
		return nil // the decoder reports it
	}
	var walk func(n *yaml.Node, path string) error
	walk = func(n *yaml.Node, path string) error {
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for _, c := range n.Content {
				if err := walk(c, path); err != nil {
					return err
				}
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				key := n.Content[i].Value
				if path != "" {
					key = path + "." + key
				}
				if err := walk(n.Content[i+1], key); err != nil {
					return err
				}
			}
		case yaml.ScalarNode:
			if n.ShortTag() != "!!float" {
				return nil
			}
			var f float64
			if err := n.Decode(&f); err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
				return fmt.Errorf("line %d: %s = %s: want a finite number", n.Line, path, n.Value)
			}
		}
		return nil
	}
	return walk(&root, "")
}

// bounds is the range a key's value must lie in, and what the error says when it
// does not ("" : "want a value in [lo, hi]").
type bounds struct {
	lo, hi         float64
	loOpen, hiOpen bool
	want           string
}

func closed(lo, hi float64) bounds { return bounds{lo: lo, hi: hi} }

var (
	// share is a share of the step strictly between none and all of it.
	share = bounds{lo: 0, hi: 1, loOpen: true, hiOpen: true, want: "want a share in (0, 1)"}
	// atLeastOne is a count or size of at least one.
	atLeastOne = bounds{lo: 1, hi: math.Inf(1), want: "want ≥ 1"}
	// positiveBandwidth is a link's bandwidth.
	positiveBandwidth = bounds{lo: 0, hi: math.Inf(1), loOpen: true, want: "want a positive bandwidth"}
)

// check is the one range check of every key: name = shown is refused when v lies
// outside b (NaN always does).
func (b bounds) check(name string, v float64, shown string) error {
	above := v > b.lo || (!b.loOpen && v == b.lo)
	below := v < b.hi || (!b.hiOpen && v == b.hi)
	if above && below {
		return nil
	}
	want := b.want
	if want == "" {
		want = fmt.Sprintf("want a value in [%v, %v]", b.lo, b.hi)
	}
	return fmt.Errorf("%s = %s: %s", name, shown, want)
}

// number is a float key: checked, then stored in *dst.
type number struct {
	name string
	dst  *float64
	src  *float64
	b    bounds
}

func (k number) apply() error {
	if k.src == nil {
		return nil
	}
	if err := k.b.check(k.name, *k.src, fmt.Sprint(*k.src)); err != nil {
		return err
	}
	*k.dst = *k.src
	return nil
}

// sections checks every key and sets it on the defaults.
func (c File) sections() (Sections, error) {
	s := Defaults()
	if err := c.analysis(&s.Analysis); err != nil {
		return Sections{}, err
	}
	if err := c.advisor(&s.Advisor); err != nil {
		return Sections{}, err
	}
	return s, nil
}

// analysis sets the measurement keys: retransmission_s and the checks' sizes
// (analysis.Limits), the hardware and its peaks.
func (c File) analysis(o *analysis.Options) error {
	o.Limits = analysis.DefaultLimits
	lim := &o.Limits
	retransS := float64(lim.RetransmissionNs) / 1e9
	smallSDMA, smallRDMA := float64(lim.SmallSDMABytes)/1e6, float64(lim.SmallRDMABytes)/1e6
	contentionMin := float64(lim.ContentionMinBytes) / 1e6
	for _, k := range []number{
		{"retransmission_s", &retransS, c.RetransmissionS, closed(0.001, 3600)},
		{"checks.small_sdma_mb", &smallSDMA, c.Checks.SmallSDMAMB, closed(0, 1e6)},
		{"checks.small_rdma_mb", &smallRDMA, c.Checks.SmallRDMAMB, closed(0, 1e6)},
		{"checks.contention_min_mb", &contentionMin, c.Checks.ContentionMinMB, closed(0, 1e6)},
	} {
		if err := k.apply(); err != nil {
			return err
		}
	}
	lim.RetransmissionNs = int64(retransS * 1e9)
	lim.SmallSDMABytes, lim.SmallRDMABytes = int64(smallSDMA*1e6), int64(smallRDMA*1e6)
	lim.ContentionMinBytes = int64(contentionMin * 1e6)
	if a := c.Checks.AlignmentBytes; a != nil {
		if err := atLeastOne.check("checks.alignment_bytes", float64(*a), strconv.FormatInt(*a, 10)); err != nil {
			return err
		}
		lim.AlignmentBytes = *a
	}
	if b := c.Checks.DefaultBuffsizeMB; b != nil {
		if err := atLeastOne.check("checks.default_buffsize_mb", float64(*b), strconv.Itoa(*b)); err != nil {
			return err
		}
		lim.DefaultBuffsizeMB = *b
	}
	if b := c.CommBudget; b != nil {
		// The advisor's (advisor sets it), checked here in the file's order.
		if err := share.check("comm_budget", *b, fmt.Sprint(*b)); err != nil {
			return err
		}
	}
	if c.Hardware != "" {
		hw, err := hardware.Lookup(c.Hardware)
		if err != nil {
			return err
		}
		hw.Source = "config file hardware: " + c.Hardware
		o.Hardware = &hw
	}
	for k, v := range c.PeaksGBps {
		if err := positiveBandwidth.check("peaks_gbps."+k, v, fmt.Sprint(v)); err != nil {
			return err
		}
		if err := hardware.CheckPeakTransport(k); err != nil {
			return fmt.Errorf("peaks_gbps.%s: %w", k, err)
		}
	}
	o.PeaksGBps = c.PeaksGBps
	return nil
}

// advisor sets the advisor's keys: comm_budget, the detectors' slow_rank, slow_link
// and checks sections, and the findings section's thresholds.
func (c File) advisor(o *advisor.Options) error {
	if c.CommBudget != nil {
		o.CommBudget = *c.CommBudget
	}
	th := &o.Detect
	for _, k := range []number{
		{"slow_rank.z", &th.SlowRank.Z, c.SlowRank.Z, closed(0, 1e3)},
		{"slow_rank.min_share", &th.SlowRank.MinShare, c.SlowRank.MinShare, closed(0, 1)},
		{"slow_rank.persist", &th.SlowRank.Persist, c.SlowRank.Persist, closed(0, 1)},
		{"slow_link.fraction", &th.SlowLink.Fraction, c.SlowLink.Fraction, closed(0, 1)},
		{"slow_link.group_fraction", &th.SlowLink.GroupFraction, c.SlowLink.GroupFraction, closed(0, 1)},
		{"checks.small_share", &th.Checks.SmallShare, c.Checks.SmallShare, closed(0, 1)},
		{"checks.contention_gbps", &th.Checks.ContentionGBps, c.Checks.ContentionGBps, closed(0, 1e4)},
	} {
		if err := k.apply(); err != nil {
			return err
		}
	}
	if m := c.SlowRank.Method; m != nil {
		if *m != "mad" && *m != "dixon" {
			return fmt.Errorf("slow_rank.method = %q: want mad or dixon", *m)
		}
		th.SlowRank.Method = *m
	}
	return findings(&c.Findings, &o.Thresholds)
}

// findings reads the findings section, a mapping of finding ids to mappings of
// threshold names to numbers, onto th.
func findings(n *yaml.Node, th *advisor.Thresholds) error {
	if n.Kind == 0 {
		return nil // no findings section
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: findings: want a mapping of finding ids to thresholds", n.Line)
	}
	known := th.Keys()
	for i := 0; i+1 < len(n.Content); i += 2 {
		id, body := n.Content[i], n.Content[i+1]
		keys, ok := known[id.Value]
		if !ok {
			return fmt.Errorf("line %d: findings.%s: no such finding with thresholds (known: %s)", id.Line, id.Value, strings.Join(slices.Sorted(maps.Keys(known)), ", "))
		}
		if body.Kind != yaml.MappingNode {
			return fmt.Errorf("line %d: findings.%s: want a mapping of thresholds", body.Line, id.Value)
		}
		for j := 0; j+1 < len(body.Content); j += 2 {
			name, val := body.Content[j], body.Content[j+1]
			k := slices.IndexFunc(keys, func(k advisor.ThresholdKey) bool { return k.Name == name.Value })
			if k < 0 {
				names := make([]string, len(keys))
				for x, k := range keys {
					names[x] = k.Name
				}
				return fmt.Errorf("line %d: findings.%s.%s: unknown threshold (known: %s)", name.Line, id.Value, name.Value, strings.Join(names, ", "))
			}
			v, err := strconv.ParseFloat(val.Value, 64)
			if val.Kind != yaml.ScalarNode || err != nil {
				return fmt.Errorf("line %d: findings.%s.%s = %q: want a number", val.Line, id.Value, name.Value, val.Value)
			}
			key := fmt.Sprintf("findings.%s.%s", id.Value, name.Value)
			if err := closed(keys[k].Lo, keys[k].Hi).check(key, v, fmt.Sprint(v)); err != nil {
				return fmt.Errorf("line %d: %w", val.Line, err)
			}
			*keys[k].Value = v
		}
	}
	return nil
}
