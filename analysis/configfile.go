package analysis

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hcclprof/hcclprof/analysis/hardware"
)

// Config is hcclprof's configuration file (--config FILE, YAML): every threshold of
// the detectors and checks, the hardware and its link peaks, and the exposed-
// communication budget, in one place. A key left out keeps its default; an unknown
// key is an error, so a typo cannot silently keep a default.
type Config struct {
	// Hardware names the product (910A, A2, A3); "" detects it from the data.
	Hardware string `yaml:"hardware"`
	// PeaksGBps overrides link peaks by transport (HCCS, SIO, PCIE, SDMA, RDMA).
	PeaksGBps map[string]float64 `yaml:"peaks_gbps"`
	// CommBudget is the exposed-communication share above which communication is the
	// bottleneck (the advisor's budget).
	CommBudget *float64 `yaml:"comm_budget"`

	SlowRank struct {
		Method   *string  `yaml:"method"` // mad or dixon
		Z        *float64 `yaml:"z"`
		MinShare *float64 `yaml:"min_share"`
		Persist  *float64 `yaml:"persist"`
	} `yaml:"slow_rank"`
	SlowLink struct {
		Fraction *float64 `yaml:"fraction"`
	} `yaml:"slow_link"`
	RetransmissionS *float64 `yaml:"retransmission_s"`

	Checks struct {
		SmallSDMAMB       *float64 `yaml:"small_sdma_mb"`
		SmallRDMAMB       *float64 `yaml:"small_rdma_mb"`
		SmallShare        *float64 `yaml:"small_share"`
		ContentionGBps    *float64 `yaml:"contention_gbps"`
		ContentionMinMB   *float64 `yaml:"contention_min_mb"`
		AlignmentBytes    *int64   `yaml:"alignment_bytes"`
		DefaultBuffsizeMB *int     `yaml:"default_buffsize_mb"`
	} `yaml:"checks"`

	// Findings are the advisor's thresholds by finding id (findings.<id>.<key>):
	// the advisor owns their names and checks them (advisor.ApplyConfig).
	Findings yaml.Node `yaml:"findings"`
}

// LoadConfig reads a configuration file. Errors name the file and line.
func LoadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	return ParseConfig(bytes.NewReader(b), path)
}

// ParseConfig parses a configuration document; name labels errors.
func ParseConfig(r io.Reader, name string) (Config, error) {
	var c Config
	text, err := io.ReadAll(r)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	if err := nonFinite(text); err != nil {
		return Config{}, fmt.Errorf("%s: %w", name, err)
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
			return Config{}, errors.New(strings.Join(msgs, "; "))
		}
		return Config{}, fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if _, err := c.Options(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", name, err)
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

// Options applies the file's measurement keys to the defaults: retransmission_s and
// the checks' sizes (Limits), the hardware and its peaks; it checks comm_budget. The
// detectors' thresholds (slow_rank, slow_link, checks.small_share,
// checks.contention_gbps) and the findings' are the advisor's (advisor.ApplyConfig).
func (c Config) Options() (Options, error) {
	o := Options{Limits: DefaultLimits}
	setF := func(dst *float64, src *float64, name string, lo, hi float64) error {
		if src == nil {
			return nil
		}
		if !(*src >= lo && *src <= hi) { // NaN fails both
			return fmt.Errorf("%s = %v: want a value in [%v, %v]", name, *src, lo, hi)
		}
		*dst = *src
		return nil
	}
	ch := &o.Limits
	var retransS = float64(ch.RetransmissionNs) / 1e9
	smallSDMA, smallRDMA := float64(ch.SmallSDMABytes)/1e6, float64(ch.SmallRDMABytes)/1e6
	contentionMin := float64(ch.ContentionMinBytes) / 1e6
	for _, e := range []error{
		setF(&retransS, c.RetransmissionS, "retransmission_s", 0.001, 3600),
		setF(&smallSDMA, c.Checks.SmallSDMAMB, "checks.small_sdma_mb", 0, 1e6),
		setF(&smallRDMA, c.Checks.SmallRDMAMB, "checks.small_rdma_mb", 0, 1e6),
		setF(&contentionMin, c.Checks.ContentionMinMB, "checks.contention_min_mb", 0, 1e6),
	} {
		if e != nil {
			return Options{}, e
		}
	}
	ch.RetransmissionNs = int64(retransS * 1e9)
	ch.SmallSDMABytes, ch.SmallRDMABytes = int64(smallSDMA*1e6), int64(smallRDMA*1e6)
	ch.ContentionMinBytes = int64(contentionMin * 1e6)
	if a := c.Checks.AlignmentBytes; a != nil {
		if *a < 1 {
			return Options{}, fmt.Errorf("checks.alignment_bytes = %d: want ≥ 1", *a)
		}
		ch.AlignmentBytes = *a
	}
	if b := c.Checks.DefaultBuffsizeMB; b != nil {
		if *b < 1 {
			return Options{}, fmt.Errorf("checks.default_buffsize_mb = %d: want ≥ 1", *b)
		}
		ch.DefaultBuffsizeMB = *b
	}
	if c.CommBudget != nil && (*c.CommBudget <= 0 || *c.CommBudget >= 1) {
		return Options{}, fmt.Errorf("comm_budget = %v: want a share in (0, 1)", *c.CommBudget)
	}
	if c.Hardware != "" {
		hw, err := hardware.Lookup(c.Hardware)
		if err != nil {
			return Options{}, err
		}
		hw.Source = "config file hardware: " + c.Hardware
		o.Hardware = &hw
	}
	for k, v := range c.PeaksGBps {
		if v <= 0 {
			return Options{}, fmt.Errorf("peaks_gbps.%s = %v: want a positive bandwidth", k, v)
		}
		if err := hardware.CheckPeakTransport(k); err != nil {
			return Options{}, fmt.Errorf("peaks_gbps.%s: %w", k, err)
		}
	}
	o.PeaksGBps = c.PeaksGBps
	return o, nil
}
