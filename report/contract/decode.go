package contract

import (
	"bytes"
	"encoding/json"
	"io"
)

// reportV1 is what schema_version 1 named differently: a server was a "node".
type reportV1 struct {
	Communication struct {
		SlowLinks []struct {
			Node int `json:"node"`
		} `json:"slow_links"`
		SlowNodes []struct {
			Node      int     `json:"node"`
			Host      string  `json:"host"`
			Transport string  `json:"transport"`
			Fraction  float64 `json:"fraction"`
			Evidence  string  `json:"evidence"`
		} `json:"slow_nodes"`
	} `json:"communication"`
}

// Decode reads a JSON report. A schema_version 1 report's slow_nodes and node keys
// are read as slow_servers and server; a version 1 or 2 report's 0 for a size,
// bandwidth, utilisation, peak or group size it did not know is read as null, as
// version 3 writes it. Any other version is decoded as it is (the caller decides
// which versions it reads).
func Decode(r io.Reader) (*Report, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	// A decoder, not Unmarshal: what follows the report is not read, as before.
	var rep Report
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&rep); err != nil {
		return nil, err
	}
	if rep.SchemaVersion == 1 || rep.SchemaVersion == 2 {
		rep.nullUnknown()
	}
	if rep.SchemaVersion != 1 {
		return &rep, nil
	}
	var v1 reportV1
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&v1); err != nil {
		return nil, err
	}
	for i, l := range v1.Communication.SlowLinks {
		if i < len(rep.Communication.SlowLinks) {
			rep.Communication.SlowLinks[i].Server = l.Node
		}
	}
	if v1.Communication.SlowNodes != nil {
		rep.Communication.SlowServers = make([]SlowServer, len(v1.Communication.SlowNodes))
		for i, n := range v1.Communication.SlowNodes {
			rep.Communication.SlowServers[i] = SlowServer{Server: n.Node, Host: n.Host, Transport: n.Transport, Fraction: n.Fraction, Evidence: n.Evidence}
		}
	}
	return &rep, nil
}

// nullUnknown sets to null what versions 1 and 2 wrote as 0 for "not known".
func (rep *Report) nullUnknown() {
	for i := range rep.Collectives {
		c := &rep.Collectives[i]
		c.GroupSize, c.Bytes = nilIfZero(c.GroupSize), nilIfZero(c.Bytes)
		c.AlgBwGBps, c.BusBwGBps = nilIfZero(c.AlgBwGBps), nilIfZero(c.BusBwGBps)
	}
	for i := range rep.Communication.Ops {
		o := &rep.Communication.Ops[i]
		o.Bytes, o.BusBwGBps, o.Util = nilIfZero(o.Bytes), nilIfZero(o.BusBwGBps), nilIfZero(o.Util)
		if o.Source == "none" {
			o.TransitUs, o.WaitUs, o.SyncUs, o.IdleUs, o.WaitRatio, o.SyncRatio = nil, nil, nil, nil, nil, nil
		}
	}
	for i := range rep.Communication.Links {
		l := &rep.Communication.Links[i]
		l.PeakGBps, l.Utilisation = nilIfZero(l.PeakGBps), nilIfZero(l.Utilisation)
	}
	for i := range rep.Communication.Pipelines {
		p := &rep.Communication.Pipelines[i]
		p.Microbatches, p.TheoryBubble = nilIfZero(p.Microbatches), nilIfZero(p.TheoryBubble)
	}
}

func nilIfZero[T int | int64 | float64](p *T) *T {
	if p != nil && *p == 0 {
		return nil
	}
	return p
}
