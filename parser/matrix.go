package parser

import (
	"cmp"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/internal/jsonx"
	"github.com/hcclprof/hcclprof/internal/order"
	"github.com/hcclprof/hcclprof/profile"
)

// Keys of communication_matrix.json links (docs/formats.md §4).
const (
	cmTransport = "Transport Type"
	cmOpName    = "Op Name"
)

// maxLocalRank bounds the group-local ranks of link keys. HCCL communicators have at
// most tens of thousands of members; the bound keeps a corrupt key from making
// profile.GroupSizeFromMatrix's callers allocate a huge group.
const maxLocalRank = 1 << 20

// parseCommMatrixJSON reads communication_matrix.json, the per-link traffic of each
// op (docs/formats.md §4): for every "src-dst" pair of group-local ranks, the transport
// (LOCAL, HCCS, PCIE, RDMA, SIO, ...), MB moved, ms taken and GB/s. Three layouts are
// read:
//
//   - aggregated torch_npu (§4.1, 2024+): {"step50": {"collective":
//     {"allreduce-top1@<hash>": {"0-1": Link, ...}}}}. Per op type and group, the
//     profiler keeps the top1/middle/bottom1..3 op by bandwidth and a "-total" sum:
//     these are statistics, not ops, so do not add the top1/middle/bottom entries to the
//     total. "reduce-*" keys are reduceScatter ops (a profiler quirk, §4.3).
//   - legacy torch_npu (§4.2, 2023): the same nesting with raw op names as keys.
//   - flat msprof CLI (§4.4): {"<op>@<hash>": {"0-1": Link}}, recognised because its
//     values' values hold "Transport Type"; Step -1, P2P from the op name.
//
// OpKey is the key before its last '@' and Group the hash after it. "Total Op Info"
// (keys starting with "total", any case) is skipped, as in communication.json. Link
// keys must be "<src>-<dst>" with non-negative integers: anything else is a
// *SyntaxError naming the key, since a link that cannot be placed would silently
// vanish from the matrix. Sizes become bytes (MB = 10^6 bytes), times ns; OpName is
// the link's "Op Name" (absent from "-total" and legacy entries). The result is
// sorted by (Step, P2P, OpKey, Group, SrcLocal, DstLocal).
func parseCommMatrixJSON(r io.Reader, file string) ([]profile.MatrixLink, error) {
	d := treeReader{jsonx.TreeReader{File: file}}
	var links []profile.MatrixLink
	err := jsonx.WithTree(r, file, func(root *jsonx.Node) error {
		if err := d.Object(root, "communication_matrix.json"); err != nil {
			return err
		}
		flat := isFlatMatrixJSON(root)
		// Counted first, so the links are allocated once at their length: grown by
		// append, they were a tenth of what a cluster's parse allocated.
		// A damaged file's error is left to the pass that reads the links, which
		// reports the first in the file.
		n := 0
		_ = d.forEachOp(root, flat, func(m jsonx.Member, _ int, _ bool) error {
			if m.Val != nil {
				n += len(m.Val.Members)
			}
			return nil
		})
		if n > 0 {
			links = make([]profile.MatrixLink, 0, n)
		}
		return d.forEachOp(root, flat, func(m jsonx.Member, step int, p2p bool) (err error) {
			links, err = d.matrixOp(links, m, step, p2p)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	sortMatrixLinks(links)
	return links, nil
}

// sortMatrixLinks sorts links by (Step, P2P, OpKey, Group, SrcLocal, DstLocal).
func sortMatrixLinks(links []profile.MatrixLink) {
	slices.SortFunc(links, func(a, b profile.MatrixLink) int {
		return cmp.Or(
			cmp.Compare(a.Step, b.Step),
			order.CompareBool(a.P2P, b.P2P),
			strings.Compare(a.OpKey, b.OpKey),
			strings.Compare(a.Group, b.Group),
			cmp.Compare(a.SrcLocal, b.SrcLocal),
			cmp.Compare(a.DstLocal, b.DstLocal),
		)
	})
}

// isFlatMatrixJSON reports whether a matrix root is the flat msprof layout: a
// top-level value is a link map (its values hold "Transport Type").
func isFlatMatrixJSON(root *jsonx.Node) bool {
	for _, m := range root.Members {
		if m.Val.Kind != jsonx.Object {
			continue
		}
		for _, lm := range m.Val.Members {
			if lm.Val.Get(cmTransport) != nil {
				return true
			}
		}
	}
	return false
}

// matrixOp appends the links of one op entry {"s-d": Link, ...}.
func (d treeReader) matrixOp(links []profile.MatrixLink, m jsonx.Member, step int, p2p bool) ([]profile.MatrixLink, error) {
	opKey, group := splitOpKey(m.Key)
	if m.Val == nil || m.Val.Kind != jsonx.Object {
		return links, d.Object(m.Val, strconv.Quote(m.Key))
	}
	for _, lm := range m.Val.Members {
		src, dst, ok := parseLinkKey(lm.Key)
		if !ok {
			return links, errAtOffset(d.File, lm.KeyOff, "%q: link key %q is not \"<src>-<dst>\" local ranks", m.Key, lm.Key)
		}
		if lm.Val == nil || lm.Val.Kind != jsonx.Object { // the name is quoted only for the error
			return links, d.Object(lm.Val, strconv.Quote(m.Key)+" link "+strconv.Quote(lm.Key))
		}
		l := profile.MatrixLink{Step: step, P2P: p2p, OpKey: opKey, Group: group, SrcLocal: src, DstLocal: dst}
		var err error
		if l.Transport, err = d.Text(lm.Val.Get(cmTransport), cmTransport); err != nil {
			return links, err
		}
		if l.Bytes, err = d.MbBytes(lm.Val.Get(cjSizeMB), cjSizeMB); err != nil {
			return links, err
		}
		if l.TimeNs, err = d.MsNs(lm.Val.Get(cjTransit), cjTransit); err != nil {
			return links, err
		}
		if l.BandwidthGBps, err = d.Float(lm.Val.Get(cjBandwidth), cjBandwidth); err != nil {
			return links, err
		}
		if l.OpName, err = d.Text(lm.Val.Get(cmOpName), cmOpName); err != nil {
			return links, err
		}
		links = append(links, l)
	}
	return links, nil
}

// parseLinkKey parses "src-dst" (plain decimal digits, each at most maxLocalRank).
func parseLinkKey(key string) (src, dst int, ok bool) {
	a, b, found := strings.Cut(key, "-")
	if !found {
		return 0, 0, false
	}
	src, ok1 := parseLocalRank(a)
	dst, ok2 := parseLocalRank(b)
	return src, dst, ok1 && ok2
}

func parseLocalRank(s string) (int, bool) {
	if len(s) > 8 || !isDigits(s) {
		return 0, false
	}
	v, err := strconv.Atoi(s)
	if err != nil || v > maxLocalRank {
		return 0, false
	}
	return v, true
}
