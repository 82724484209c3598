package parser

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hcclprof/hcclprof/internal/jsonx"
	"github.com/hcclprof/hcclprof/internal/ranklist"
	"github.com/hcclprof/hcclprof/internal/table"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/internal/vfs"
	"github.com/hcclprof/hcclprof/profile"
)

// msprof-analyze's cluster output (`msprof-analyze -m all -d <cluster>` writes it to
// <out>/cluster_analysis_output/). Teams often keep only this of a big cluster, so
// its per-rank summaries are read as ranks of their own (profile.FormatMsprofAnalyze).
//
// Checked against msprof-analyze's source (profiler/msprof_analyze/cluster_analyse in
// the Ascend mstt repository): the file names; cluster_step_trace_time.csv's header
// (Step, Type, Index, then the per-rank step_trace_time.csv header without Step and
// Device_id, plus DP/PP/TP Index with distributed_args) and its "rank" rows, whose
// Index is the global rank, beside "stage" rows holding the element-wise max over a
// pipeline stage; cluster_communication.json's nesting {rank set: {step key:
// {"op@group": {global rank: the rank's own communication.json entry}}}} with p2p
// and collective ops of a step merged and a recomputed "Total Op Info@group" per
// rank (a bare "Total Op Info" per rank set before September 2025), never an op; cluster_communication_matrix.json's {rank set: {step key: {"op@group":
// {"src-dst": link}}}} whose links are summed over ranks and renamed from group-local
// to global ranks; communication_group.json's comm_group_parallel_info records (type,
// rank_set, group_name = the @hash, group_id = the raw HCCL name or "", pg_name);
// cluster_analysis.db's table and column names (ClusterStepTraceTime,
// ClusterCommAnalyzerTime/Bandwidth/Matrix with rank_set and elapsed_time, and the
// newer ClusterCommunicationTime/Bandwidth/Matrix and CommunicationGroupMapping).
//
// Unverified (no real file at hand): the 2023 variant whose top level has a "p2p" key
// beside the rank sets (read as a group set of unknown ranks whose ops are p2p); the
// legacy CommunicationGroup table (read when it has group_name); that a group's local
// rank is its member's position in the sorted global ranks, which converting the
// matrix back to per-rank local links assumes (msprof-analyze itself maps local to
// global through each rank's self link "k-k", which the merged file no longer shows).

// Files of msprof-analyze's cluster output that hcclprof reads.
const (
	clusterOutputDir        = "cluster_analysis_output"
	clusterStepTraceCSV     = "cluster_step_trace_time.csv"
	clusterCommJSON         = "cluster_communication.json"
	clusterCommMatrixJSON   = "cluster_communication_matrix.json"
	clusterCommGroupJSON    = "communication_group.json"
	clusterAnalysisDBName   = "cluster_analysis.db"
	clusterStepTraceRankRow = "rank"
)

// lowerBoundSource ends the Source of a group whose members are only the ranks seen
// using it: its size is a lower bound (analysis.IsLowerBound).
const lowerBoundSource = "(at least)"

// clusterSummaryFiles are the files of a cluster_analysis_output, in reading order.
var clusterSummaryFiles = []string{clusterStepTraceCSV, clusterCommJSON, clusterCommMatrixJSON, clusterCommGroupJSON, clusterAnalysisDBName}

func isClusterSummaryFile(name string) bool { return slices.Contains(clusterSummaryFiles, name) }

// clusterSummaryFilesIn lists the summary files present in dir.
func clusterSummaryFilesIn(dir string) []string {
	var out []string
	for _, n := range clusterSummaryFiles {
		if vfs.IsFile(filepath.Join(dir, n)) {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out
}

// clusterSummary is what was read of one msprof-analyze cluster output: a rank per
// global rank it covers.
type clusterSummary struct {
	Dir       string
	FilesUsed []string // base names
	Ranks     map[int]*profile.Rank
	// Problems are errors met reading the files; every rank carries them too.
	Problems []string
}

// SortedRanks lists the ranks covered, ascending.
func (cs *clusterSummary) SortedRanks() []int {
	out := make([]int, 0, len(cs.Ranks))
	for r := range cs.Ranks {
		out = append(out, r)
	}
	sort.Ints(out)
	return out
}

// summaryStepRow is a rank row of cluster_step_trace_time.csv.
type summaryStepRow struct {
	Rank int
	Row  profile.StepTraceRow
	// Problem, when set, says why the row's figures could not be read: the row stands
	// for nothing but that problem of its rank (Rank -1 when its rank is unknown, a
	// problem of every rank). One bad cell dropped every later row, and the problem
	// went to every rank.
	Problem string
}

// summaryOp is one op (or one per-group total) of one rank in
// cluster_communication.json.
type summaryOp struct {
	Rank int
	// Total marks a "Total Op Info" entry: the rank's sums over its ops of the group
	// ("Total Op Info@group", msprof-analyze since September 2025) or of the rank set
	// (a bare "Total Op Info", and group_name "" in the db, before) in the step. It is
	// never an op: only a cross-check of the ops' sum (checkClusterTotals).
	Total bool
	Set   string // the rank-set key it was under ("" when the db has no rank_set)
	Op    profile.CommOpStats
}

// summaryLink is one link of cluster_communication_matrix.json, between global ranks.
type summaryLink struct {
	SrcRank, DstRank int
	Link             profile.MatrixLink // SrcLocal/DstLocal unset
}

// summaryGroup is one communicator: its @hash and global ranks.
type summaryGroup struct {
	Hash    string
	RawName string // the HCCL group name, "" when unknown
	PGName  string // dp, tp, pp, ... ("" when unknown)
	Ranks   []int  // sorted
	Source  string // the file it was read from
	P2P     bool   // a p2p (pipeline) group, as communication_group.json or the db types it
}

// summaryParts gathers what the files gave.
type summaryParts struct {
	steps  []summaryStepRow
	ops    []summaryOp
	links  []summaryLink
	groups map[string]summaryGroup // by hash
	// stepsFrom names the table the steps came from when not cluster_step_trace_time.csv.
	stepsFrom string
	// hcclSumNs is hccl_sum's communication time per rank (HcclPerRankStats).
	hcclSumNs map[int]int64
	// setGroups are groups known only from the rank sets of the cluster JSON files
	// (no name); communication_group.json's win.
	setGroups map[string]summaryGroup
}

// parseRankSet reads a rank set as msprof-analyze writes it: a Python tuple repr
// "(0, 1, 2)", "(0,)" or "(0,1,2)" (db), or a JSON-style list "[0, 1]". ok is false
// for anything else (the legacy "p2p" key).
func parseRankSet(s string) (ranks []int, ok bool) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || !((s[0] == '(' && s[len(s)-1] == ')') || (s[0] == '[' && s[len(s)-1] == ']')) {
		return nil, false
	}
	inner := strings.TrimSpace(s[1 : len(s)-1])
	if inner == "" {
		return []int{}, true
	}
	for _, f := range strings.Split(inner, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue // the trailing comma of "(0,)"
		}
		v, ok := parseLocalRank(f)
		if !ok {
			return nil, false
		}
		ranks = append(ranks, v)
	}
	slices.Sort(ranks)
	return slices.Compact(ranks), true
}

// parseClusterStepTraceCSV reads cluster_step_trace_time.csv: the rank rows (Type
// "rank", Index the global rank) with step_trace_time.csv's rules per row. Stage rows
// are maxima over a pipeline stage, not a rank's figures, and are skipped.
func parseClusterStepTraceCSV(r io.Reader, file string) ([]summaryStepRow, error) {
	t, err := table.OpenCSV(r, file)
	if err != nil {
		return nil, err
	}
	req, err := t.RequireCols("Type", "Index", stColStep, stColComputing, stColCommNotOvl, stColCommunication, stColFree, stColStage)
	if err != nil {
		return nil, err
	}
	iType, iIndex := req[0], req[1]
	cols := stepTraceCols{req[2], req[3], req[4], req[5], req[6], req[7],
		t.Col(stColOverlapped), t.Col(stColBubble), t.Col(stColExclReceive), t.Col(stColPreparing)}
	var rows []summaryStepRow
	for err := range table.Each(t) {
		if err != nil {
			return rows, err
		}
		if !strings.EqualFold(t.Field(iType), clusterStepTraceRankRow) {
			continue
		}
		rank, ok := parseLocalRank(t.Field(iIndex))
		if !ok {
			rows = append(rows, summaryStepRow{Rank: -1, Problem: errAtLine(file, t.LineOf(iIndex),
				"column \"Index\": %q is not a global rank: the row is not read, and whose it is is unknown", t.Field(iIndex)).Error()})
			continue
		}
		row, err := stepTraceRow(t, cols)
		if err != nil {
			rows = append(rows, summaryStepRow{Rank: rank, Problem: fmt.Sprintf("%v (rank %d's row, not read)", err, rank)})
			continue
		}
		rows = append(rows, summaryStepRow{Rank: rank, Row: row})
	}
	return rows, nil
}

// streamClusterEntries walks the {rank set: {step key: {"op@group": {key: value}}}}
// nesting the two cluster JSON files share, as a stream, calling fn for every inner
// member with the group's ranks (nil when the top key is not a rank set) and the
// step; only that member's value is held as a tree (until the next call), so memory
// follows what fn keeps, not the file (a large cluster's file is gigabytes).
func streamClusterEntries(r io.Reader, file, what string, fn func(set []int, setKey string, step int, op, entry jsonx.Member) error) error {
	return jsonx.ReadTreeStream(r, file, func(t *jsonx.TreeStream) error {
		c := &commStream{TreeStream: t, d: treeReader{jsonx.TreeReader{File: file}}}
		s := t.S
		if _, ok := s.Peek(); !ok {
			return errAtOffset(file, s.Offset(), "empty file: expected a JSON value")
		}
		notObject := func(what string) func(n *jsonx.Node) error {
			return func(n *jsonx.Node) error { return c.d.Object(n, what) }
		}
		err := c.Members(0, notObject(what), func(setKey string, _ int64) error {
			set, _ := parseRankSet(setKey)
			return c.Members(1, notObject(strconv.Quote(setKey)), func(stepKey string, stepOff int64) error {
				step, err := c.d.stepKey(jsonx.Member{Key: stepKey, KeyOff: stepOff})
				if err != nil {
					return err
				}
				return c.Members(2, notObject(strconv.Quote(setKey)+"."+strconv.Quote(stepKey)), func(opKey string, opOff int64) error {
					om := jsonx.Member{Key: opKey, KeyOff: opOff}
					return c.Members(3, notObject(strconv.Quote(opKey)), func(entryKey string, entryOff int64) error {
						n, err := c.Value(4)
						if err != nil {
							return err
						}
						return fn(set, setKey, step, om, jsonx.Member{Key: entryKey, KeyOff: entryOff, Val: n})
					})
				})
			})
		})
		return err
	})
}

// addSetGroup records a group known from a rank-set key.
func (p *summaryParts) addSetGroup(hash string, set []int, source string) {
	if set == nil || hash == "" {
		return
	}
	if p.setGroups == nil {
		p.setGroups = map[string]summaryGroup{}
	}
	if g, ok := p.setGroups[hash]; !ok || len(set) > len(g.Ranks) {
		p.setGroups[hash] = summaryGroup{Hash: hash, Ranks: set, Source: source}
	}
}

// parseClusterCommJSON reads cluster_communication.json: each rank's entry of each op
// is that rank's communication.json entry, read as parseCommunicationJSON reads it.
// P2P comes from the op name, as msprof-analyze merges a step's p2p and collective
// ops (ops under a legacy top-level "p2p" key are p2p too). "Total Op Info@group"
// entries are the rank's sums over the group in the step, kept apart (Total).
func parseClusterCommJSON(r io.Reader, file string, p *summaryParts) error {
	d := treeReader{jsonx.TreeReader{File: file}}
	return streamClusterEntries(r, file, clusterCommJSON, func(set []int, setKey string, step int, om, em jsonx.Member) error {
		rank, ok := parseLocalRank(strings.TrimSpace(em.Key))
		if !ok {
			return errAtOffset(file, em.KeyOff, "%q: key %q is not a global rank", om.Key, em.Key)
		}
		name, group := splitOpKey(om.Key)
		p2p := profile.IsP2P(name) || setKey == cjP2P
		op, err := d.commOp(jsonx.Member{Key: om.Key, KeyOff: om.KeyOff, Val: em.Val}, step, p2p)
		if err != nil {
			return err
		}
		total := isTotalKey(name)
		if !total {
			p.addSetGroup(group, set, clusterCommJSON)
		}
		p.ops = append(p.ops, summaryOp{Rank: rank, Total: total, Set: setKey, Op: op})
		return nil
	})
}

// parseClusterMatrixJSON reads cluster_communication_matrix.json: links between
// global ranks, summed over the ranks that reported them. "Total Op Info@group"
// (msprof-analyze's sum of the "-total" entries) is skipped.
func parseClusterMatrixJSON(r io.Reader, file string, p *summaryParts) error {
	d := treeReader{jsonx.TreeReader{File: file}}
	return streamClusterEntries(r, file, clusterCommMatrixJSON, func(set []int, setKey string, step int, om, em jsonx.Member) error {
		opKey, group := splitOpKey(om.Key)
		if isTotalKey(opKey) {
			return nil
		}
		p2p := profile.IsP2P(opKey) || setKey == cjP2P
		links, err := d.matrixOp(nil, jsonx.Member{Key: om.Key, KeyOff: om.KeyOff, Val: &jsonx.Node{Kind: jsonx.Object, Members: []jsonx.Member{em}}}, step, p2p)
		if err != nil {
			return err
		}
		p.addSetGroup(group, set, clusterCommMatrixJSON)
		for _, l := range links {
			src, dst := l.SrcLocal, l.DstLocal
			l.SrcLocal, l.DstLocal = 0, 0
			p.links = append(p.links, summaryLink{SrcRank: src, DstRank: dst, Link: l})
		}
		return nil
	})
}

// parseCommGroupJSON reads communication_group.json's comm_group_parallel_info: per
// group its hash, raw HCCL name, framework name and ranks. The plain "collective"
// and "p2p" rank lists name no group and are not used.
func parseCommGroupJSON(r io.Reader, file string, p *summaryParts) error {
	root, err := jsonx.ReadTree(r, file)
	if err != nil {
		return err
	}
	d := treeReader{jsonx.TreeReader{File: file}}
	if err := d.Object(root, clusterCommGroupJSON); err != nil {
		return err
	}
	info := root.Get("comm_group_parallel_info")
	if info.IsNull() {
		return nil
	}
	if info.Kind != jsonx.Array {
		return d.ErrAt(info, "comm_group_parallel_info: expected an array, found %s", info.Kind)
	}
	for _, e := range info.Elems {
		if err := d.Object(e, "comm_group_parallel_info entry"); err != nil {
			return err
		}
		g := summaryGroup{Source: clusterCommGroupJSON}
		var err error
		if g.Hash, err = d.Text(e.Get("group_name"), "group_name"); err != nil {
			return err
		}
		if g.RawName, err = d.Text(e.Get("group_id"), "group_id"); err != nil {
			return err
		}
		if g.PGName, err = d.Text(e.Get("pg_name"), "pg_name"); err != nil {
			return err
		}
		if g.Ranks, err = d.rankList(e.Get("rank_set")); err != nil {
			return err
		}
		if typ := e.Get("type"); typ != nil && typ.Kind == jsonx.String { // an entry may have none
			kind, _ := d.Text(typ, "type")
			g.P2P = strings.EqualFold(kind, "p2p")
		}
		if g.Hash == "" {
			continue
		}
		if p.groups == nil {
			p.groups = map[string]summaryGroup{}
		}
		p.groups[g.Hash] = g
	}
	return nil
}

// rankList reads a rank_set: a JSON array of ranks, or a rank-set string.
func (d treeReader) rankList(n *jsonx.Node) ([]int, error) {
	switch {
	case n.IsNull():
		return nil, nil
	case n.Kind == jsonx.String:
		if set, ok := parseRankSet(n.Text); ok {
			return set, nil
		}
		return nil, d.ErrAt(n, "rank_set: %q is not a rank set", n.Text)
	case n.Kind != jsonx.Array:
		return nil, d.ErrAt(n, "rank_set: expected an array, found %s", n.Kind)
	}
	out := make([]int, 0, len(n.Elems))
	for _, e := range n.Elems {
		v, err := d.IntVal(e, -1, "rank_set")
		if err != nil {
			return nil, err
		}
		if v < 0 || v > maxLocalRank {
			return nil, d.ErrAt(e, "rank_set: %d is not a rank", v)
		}
		out = append(out, v)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// readClusterSummary reads the msprof-analyze output files named (any of
// cluster_step_trace_time.csv, cluster_communication.json,
// cluster_communication_matrix.json, communication_group.json, cluster_analysis.db,
// all in dir). The text files are read first; cluster_analysis.db fills only what
// they did not give (msprof-analyze writes one or the other, by its input's type).
// What cannot be read is recorded in Problems; what was read is kept.
func readClusterSummary(dir string, files []string) *clusterSummary {
	cs := &clusterSummary{Dir: dir, Ranks: map[int]*profile.Rank{}}
	var p summaryParts
	open := func(path string, parse func(io.Reader, string) error) {
		f, err := vfs.Open(path)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				cs.Problems = append(cs.Problems, err.Error())
			}
			return
		}
		defer f.Close()
		cs.FilesUsed = append(cs.FilesUsed, filepath.Base(path))
		if err := parse(f, path); err != nil {
			cs.Problems = append(cs.Problems, err.Error())
		}
	}
	var dbPath string
	for _, path := range files {
		switch filepath.Base(path) {
		case clusterStepTraceCSV:
			open(path, func(r io.Reader, name string) (err error) {
				p.steps, err = parseClusterStepTraceCSV(r, name)
				return err
			})
		case clusterCommJSON:
			open(path, func(r io.Reader, name string) error { return parseClusterCommJSON(r, name, &p) })
		case clusterCommMatrixJSON:
			open(path, func(r io.Reader, name string) error { return parseClusterMatrixJSON(r, name, &p) })
		case clusterCommGroupJSON:
			open(path, func(r io.Reader, name string) error { return parseCommGroupJSON(r, name, &p) })
		case clusterAnalysisDBName:
			dbPath = path
		}
	}
	if dbPath != "" {
		cs.FilesUsed = append(cs.FilesUsed, filepath.Base(dbPath))
		if err := readClusterAnalysisDB(dbPath, &p); err != nil {
			cs.Problems = append(cs.Problems, err.Error())
		}
	}
	cs.assemble(&p)
	return cs
}

// assemble builds one rank per global rank the steps, ops or links cover.
func (cs *clusterSummary) assemble(p *summaryParts) {
	groups := mergedGroups(p)
	rank := cs.rankEntry
	for _, s := range p.steps {
		if s.Rank < 0 { // a row of no known rank: every rank may lack it
			cs.Problems = append(cs.Problems, s.Problem)
		}
	}
	for _, s := range p.steps {
		if s.Rank < 0 {
			continue
		}
		pr := rank(s.Rank)
		if s.Problem != "" {
			pr.Problems = append(pr.Problems, s.Problem)
			continue
		}
		pr.StepTrace = append(pr.StepTrace, s.Row)
	}
	// Ops only: a "Total Op Info" entry sums ops already here (counted, it doubled
	// every collective's total), and checks their sum.
	for _, o := range p.ops {
		if !o.Total {
			pr := rank(o.Rank)
			pr.CommStats = append(pr.CommStats, o.Op)
		}
	}
	checkClusterTotals(p.ops, rank)
	checkHcclSum(p, rank)
	if p.stepsFrom != "" {
		for _, pr := range cs.Ranks {
			pr.StepTraceFrom = clusterAnalysisDBName + " " + p.stepsFrom
		}
	}
	cs.placeLinks(p, groups, rank)
	cs.nameGroups(groups)
	for _, pr := range cs.Ranks {
		sortCommOps(pr.CommStats)
		sortMatrixLinks(pr.CommMatrix)
	}
}

// mergedGroups are the groups by hash: parallel_group_info's sets, named and sized
// by communication_group.json where it has them.
func mergedGroups(p *summaryParts) map[string]summaryGroup {
	groups := map[string]summaryGroup{}
	for h, g := range p.setGroups {
		groups[h] = g
	}
	for h, g := range p.groups { // communication_group.json names the groups
		if len(g.Ranks) == 0 {
			g.Ranks = groups[h].Ranks
			g.RawName = "" // not the members parallel_group_info gave
		}
		groups[h] = g
	}
	return groups
}

// rankEntry is the rank r, made (with the files' problems) on first use.
func (cs *clusterSummary) rankEntry(r int) *profile.Rank {
	if pr, ok := cs.Ranks[r]; ok {
		return pr
	}
	pr := &profile.Rank{Rank: r, Dir: cs.Dir, Format: profile.FormatMsprofAnalyze, Info: profile.Info{RankID: r},
		FilesUsed: cs.FilesUsed, Problems: slices.Clone(cs.Problems)}
	cs.Ranks[r] = pr
	return pr
}

// placeLinks gives each link of the communication matrix to its source rank, with
// its ends as group-local ranks; a link whose group's members are unknown is left
// out with a note on the rank.
func (cs *clusterSummary) placeLinks(p *summaryParts, groups map[string]summaryGroup, rank func(int) *profile.Rank) {
	unmapped := map[int]int{}
	for _, l := range p.links {
		g, ok := groups[l.Link.Group]
		src, okS := slices.BinarySearch(g.Ranks, l.SrcRank)
		dst, okD := slices.BinarySearch(g.Ranks, l.DstRank)
		if !ok || !okS || !okD {
			unmapped[l.SrcRank]++
			continue
		}
		link := l.Link
		link.SrcLocal, link.DstLocal = src, dst
		pr := rank(l.SrcRank)
		pr.CommMatrix = append(pr.CommMatrix, link)
	}
	for r, n := range unmapped {
		if pr, ok := cs.Ranks[r]; ok {
			// No step figure, share or diagnosis rests on a link: a detail that cannot
			// be attributed is a note (docs/exit-codes.md), not an incomplete rank.
			pr.Notes = append(pr.Notes, fmt.Sprintf("%d links of msprof-analyze's communication matrix from this rank are not shown: their group's members are unknown, so their ranks cannot be named", n))
		}
	}
}

// nameGroups gives every rank its groups' names and members (a lower bound where
// msprof-analyze does not name the members).
func (cs *clusterSummary) nameGroups(groups map[string]summaryGroup) {
	hashes := make([]string, 0, len(groups))
	for h := range groups {
		hashes = append(hashes, h)
	}
	sort.Strings(hashes)
	for _, h := range hashes {
		g := groups[h]
		source := g.Source
		if g.RawName == "" {
			// msprof-analyze names a group's members only with parallel_group_info
			// (then its group_id is the HCCL name); else its rank set is the ranks
			// whose files used the group, which may be fewer.
			source += " " + lowerBoundSource
		}
		for i, r := range g.Ranks {
			pr, ok := cs.Ranks[r]
			if !ok {
				continue
			}
			pr.Metadata.ParallelGroups = append(pr.Metadata.ParallelGroups, profile.ParallelGroup{
				HCCLName: g.RawName, Name: g.PGName, GroupRank: i, GlobalRanks: g.Ranks, Key: g.Hash, Source: source,
			})
		}
	}
}

// checkClusterTotals holds each "Total Op Info" entry against the sum of the ops it
// covers: the rank's ops of the step under the same rank set, of its group when the
// key names one (a set "" covers every set). A total with none of its ops is a
// problem (those ops are missing, and a total is not counted in their place); a sum
// that differs is a note, as the ops are what is counted.
func checkClusterTotals(ops []summaryOp, rank func(int) *profile.Rank) {
	type rankStep struct{ rank, step int }
	byRankStep := map[rankStep][]int{}
	for i, o := range ops {
		if !o.Total {
			k := rankStep{o.Rank, o.Op.Step}
			byRankStep[k] = append(byRankStep[k], i)
		}
	}
	type finding struct{ missing, differ []string }
	found := map[int]*finding{}
	for _, t := range ops {
		if !t.Total {
			continue
		}
		var sum int64
		n := 0
		for _, i := range byRankStep[rankStep{t.Rank, t.Op.Step}] {
			o := ops[i]
			if (t.Set == "" || o.Set == t.Set) && (t.Op.Group == "" || o.Op.Group == t.Op.Group) {
				sum += o.Op.ElapseNs
				n++
			}
		}
		f := found[t.Rank]
		if f == nil {
			f = &finding{}
			found[t.Rank] = f
		}
		where := totalWhere(t)
		// Each op's figure is rounded to the ns apart: allow 1 µs per op.
		if n == 0 {
			f.missing = append(f.missing, fmt.Sprintf("%s (%s ms)", where, units.FormatMs(float64(t.Op.ElapseNs))))
		} else if d := sum - t.Op.ElapseNs; d > int64(n+1)*1000 || -d > int64(n+1)*1000 {
			f.differ = append(f.differ, fmt.Sprintf("%s: total %s ms, its %d ops %s ms", where, units.FormatMs(float64(t.Op.ElapseNs)), n, units.FormatMs(float64(sum))))
		}
	}
	for r, f := range found {
		pr := rank(r)
		if len(f.missing) > 0 {
			pr.Problems = append(pr.Problems, fmt.Sprintf("msprof-analyze's communication summary gives only a total (\"Total Op Info\"), not the ops, for %s: those ops are not counted", limitList(f.missing)))
		}
		if len(f.differ) > 0 {
			pr.Notes = append(pr.Notes, fmt.Sprintf("msprof-analyze's communication summary disagrees with itself: its \"Total Op Info\" is not the sum of the rank's ops for %s; the ops are counted", limitList(f.differ)))
		}
	}
}

// totalWhere names what a "Total Op Info" entry sums: "step 40, group …123456".
func totalWhere(t summaryOp) string {
	w := "step " + strconv.Itoa(t.Op.Step)
	switch {
	case t.Op.Group != "":
		w += ", group …" + t.Op.Group[max(0, len(t.Op.Group)-6):]
	case t.Set != "":
		w += ", rank set " + t.Set
	}
	if t.Op.P2P {
		w += " (p2p)"
	}
	return w
}

// limitList joins the first three items and counts the rest.
func limitList(items []string) string {
	sort.Strings(items)
	if len(items) <= 3 {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:3], "; ") + fmt.Sprintf(" (and %d more)", len(items)-3)
}

// Table names of cluster_analysis.db: msprof-analyze's current ("simplified") names
// first, then the older ones, whose tables also carry rank_set.
var (
	clusterDBStepTables      = []string{"ClusterStepTraceTime"}
	clusterDBTimeTables      = []string{"ClusterCommunicationTime", "ClusterCommAnalyzerTime"}
	clusterDBBandwidthTables = []string{"ClusterCommunicationBandwidth", "ClusterCommAnalyzerBandwidth"}
	clusterDBMatrixTables    = []string{"ClusterCommunicationMatrix", "ClusterCommAnalyzerMatrix"}
	clusterDBGroupTables     = []string{"CommunicationGroupMapping", "CommunicationGroup"}
)

// firstTable returns the first of names the db has, "" if none.
func firstTable(d *table.DB, names []string) string {
	for _, n := range names {
		if d.Has(n) {
			return n
		}
	}
	return ""
}

// readClusterAnalysisDB reads cluster_analysis.db's tables into p, each only when the
// text files did not give its part. Units are those of the JSON files (µs start, ms
// times, MB sizes); step is "step40" in the communication tables and "40" in
// ClusterStepTraceTime; rank_id is the global rank; matrix ranks are global.
func readClusterAnalysisDB(path string, p *summaryParts) error {
	d, err := table.OpenSQLite(path)
	if err != nil {
		return err
	}
	defer d.Close()
	if len(p.steps) == 0 {
		if err := readClusterDBSteps(d, p); err != nil {
			return err
		}
	}
	if len(p.ops) == 0 {
		if err := readClusterDBComm(d, p); err != nil {
			return err
		}
	}
	if len(p.groups) == 0 {
		if err := readClusterDBGroups(d, p); err != nil {
			return err
		}
	}
	if len(p.links) == 0 {
		if err := readClusterDBMatrix(d, p); err != nil {
			return err
		}
	}
	if len(p.steps) == 0 && firstTable(d, clusterDBStepTables) == "" {
		if err := readClusterDBTimeSummary(d, p); err != nil {
			return err
		}
		if p.stepsFrom != "" && p.hasP2PGroups() {
			// torch_npu counts a pipeline's receive time as Bubble, outside Stage;
			// ClusterTimeSummary drops Bubble, so the exposed communication of a
			// pipelined job cannot be told from its bubble.
			p.steps = append(p.steps, summaryStepRow{Rank: -1, Problem: fmt.Sprintf("%s: %s has no Bubble column and this job has pipeline (p2p) groups: the pipeline's receive time cannot be told from exposed communication; run `msprof-analyze -m all` for cluster_step_trace_time.csv or ClusterStepTraceTime, which carry it",
				filepath.Base(path), clusterTimeSummaryTable)})
		}
	}
	if err := readClusterDBHcclSum(d, p); err != nil {
		return err
	}
	if len(p.steps) == 0 && firstTable(d, clusterDBStepTables) == "" {
		if recipes := clusterDBRecipes(d); len(recipes) > 0 {
			return fmt.Errorf("%s has no step breakdown (no ClusterStepTraceTime table): it holds %s, summaries hcclprof does not read as ranks' steps; "+
				"a step breakdown is what `msprof-analyze -m all -d CLUSTER` writes (cluster_step_trace_time.csv, or ClusterStepTraceTime in cluster_analysis.db) or the cluster_time_summary recipe (`-m cluster_time_summary`, into the same output directory), or the rank directories themselves",
				filepath.Base(path), strings.Join(recipes, "; "))
		}
	}
	return nil
}

// clusterDBRecipes names the msprof-analyze recipes whose tables cluster_analysis.db
// holds (its recipes write their results there: cluster_time_summary ClusterTimeSummary,
// hccl_sum the Hccl*Stats tables, communication_time_sum ClusterCommunicationTime and
// ClusterCommunicationBandwidth, communication_matrix_sum ClusterCommunicationMatrix,
// all with CommunicationGroupMapping), for a db without a step table.
func clusterDBRecipes(d *table.DB) []string {
	var out []string
	if d.Has("ClusterTimeSummary") {
		out = append(out, "the cluster_time_summary recipe's ClusterTimeSummary with no row hcclprof could read")
	}
	if d.Has("HcclAllRankStats") || d.Has("HcclPerRankStats") || d.Has("HcclTopOpStats") {
		out = append(out, "the hccl_sum recipe's HcclAllRankStats/HcclPerRankStats/HcclTopOpStats (statistics per op type, not per op)")
	}
	if d.Has("ClusterCommunicationTime") {
		out = append(out, "ClusterCommunicationTime (the communication_time_sum recipe's, or msprof-analyze -m communication_time's: per-op communication, read, but no step)")
	} else if d.Has("ClusterCommunicationMatrix") {
		out = append(out, "ClusterCommunicationMatrix (the communication_matrix_sum recipe's, or -m communication_matrix's: links only)")
	}
	if len(out) == 0 && d.Has("CommunicationGroupMapping") {
		out = append(out, "only the communication_group_map recipe's CommunicationGroupMapping (groups, no figures)")
	}
	return out
}

func readClusterDBSteps(d *table.DB, p *summaryParts) error {
	name := firstTable(d, clusterDBStepTables)
	if name == "" {
		return nil
	}
	t, err := d.SelectAll(name, "type", "index", sttStep, sttComputing, sttCommNotOvl, sttCommunication, sttFree, sttStage)
	if err != nil {
		return err
	}
	defer t.Close()
	p.stepsFrom = name
	for err := range table.Each(t) {
		if err != nil {
			return err
		}
		if !strings.EqualFold(strings.TrimSpace(t.Text("type")), clusterStepTraceRankRow) {
			continue
		}
		rank, ok := parseLocalRank(strings.TrimSpace(t.Text("index")))
		if !ok {
			p.steps = append(p.steps, summaryStepRow{Rank: -1, Problem: t.Errf("index %q is not a global rank: the row is not read, and whose it is is unknown", t.Text("index")).Error()})
			continue
		}
		row, err := stepTraceRowOf(t)
		if err != nil {
			p.steps = append(p.steps, summaryStepRow{Rank: rank, Problem: fmt.Sprintf("%v (rank %d's row, not read)", err, rank)})
			continue
		}
		p.steps = append(p.steps, summaryStepRow{Rank: rank, Row: row})
	}
	return nil
}

// clusterDBRank reads a row's rank_id.
func clusterDBRank(t *table.Rows) (int, error) {
	n, err := t.Int("rank_id")
	if err != nil {
		return 0, err
	}
	if n < 0 || n > maxLocalRank {
		return 0, t.Errf("rank_id %d is not a global rank", n)
	}
	return int(n), nil
}

func readClusterDBComm(d *table.DB, p *summaryParts) error {
	name := firstTable(d, clusterDBTimeTables)
	if name == "" {
		return nil
	}
	t, err := d.SelectAll(name, "rank_id", "hccl_op_name", "group_name")
	if err != nil {
		return err
	}
	defer t.Close()
	type key struct {
		rank, step  int
		name, group string
	}
	index := map[key]int{}
	for err := range table.Each(t) {
		if err != nil {
			return err
		}
		rank, err := clusterDBRank(t)
		if err != nil {
			return err
		}
		op, err := commOpOf(t)
		if err != nil {
			return err
		}
		if err := commTimesOf(t, &op, "elapsed_time"); err != nil {
			return err
		}
		if set, ok := parseRankSet(t.Text("rank_set")); ok && !isTotalKey(op.Name) {
			p.addSetGroup(op.Group, set, clusterAnalysisDBName)
		}
		index[key{rank, op.Step, op.Name, op.Group}] = len(p.ops)
		p.ops = append(p.ops, summaryOp{Rank: rank, Total: isTotalKey(op.Name), Set: strings.TrimSpace(t.Text("rank_set")), Op: op})
	}
	name = firstTable(d, clusterDBBandwidthTables)
	if name == "" {
		return nil
	}
	b, err := d.SelectAll(name, "rank_id", "hccl_op_name", "group_name", "band_type")
	if err != nil {
		return err
	}
	defer b.Close()
	for err := range table.Each(b) {
		if err != nil {
			return err
		}
		rank, err := clusterDBRank(b)
		if err != nil {
			return err
		}
		k, err := commOpOf(b)
		if err != nil {
			return err
		}
		i, found := index[key{rank, k.Step, k.Name, k.Group}]
		if !found {
			i = len(p.ops)
			index[key{rank, k.Step, k.Name, k.Group}] = i
			p.ops = append(p.ops, summaryOp{Rank: rank, Total: isTotalKey(k.Name), Set: strings.TrimSpace(b.Text("rank_set")), Op: k})
		}
		if err := addBandwidthRow(&p.ops[i].Op, b.Text("band_type"), b); err != nil {
			return err
		}
	}
	for i := range p.ops {
		sortSizeDistributions(&p.ops[i].Op)
	}
	return nil
}

func readClusterDBGroups(d *table.DB, p *summaryParts) error {
	name := firstTable(d, clusterDBGroupTables)
	if name == "" {
		return nil
	}
	t, err := d.SelectAll(name, "rank_set")
	if err != nil {
		return err
	}
	defer t.Close()
	if !t.Has("group_name") { // the 2023 table: rank sets without their group
		return nil
	}
	for err := range table.Each(t) {
		if err != nil {
			return err
		}
		set, ok := parseRankSet(t.Text("rank_set"))
		if !ok {
			return t.Errf("rank_set %q is not a rank set", t.Text("rank_set"))
		}
		g := summaryGroup{Hash: strings.TrimSpace(t.Text("group_name")), RawName: t.Text("group_id"), PGName: t.Text("pg_name"),
			Ranks: set, Source: clusterAnalysisDBName, P2P: strings.EqualFold(strings.TrimSpace(t.Text("type")), "p2p")}
		if g.Hash == "" {
			continue
		}
		if p.groups == nil {
			p.groups = map[string]summaryGroup{}
		}
		p.groups[g.Hash] = g
	}
	return nil
}

func readClusterDBMatrix(d *table.DB, p *summaryParts) error {
	name := firstTable(d, clusterDBMatrixTables)
	if name == "" {
		return nil
	}
	t, err := d.SelectAll(name, "hccl_op_name", "group_name", "src_rank", "dst_rank")
	if err != nil {
		return err
	}
	defer t.Close()
	for err := range table.Each(t) {
		if err != nil {
			return err
		}
		k, err := commOpOf(t)
		if err != nil {
			return err
		}
		if isTotalKey(k.Name) {
			continue
		}
		src, okS := parseLocalRank(strings.TrimSpace(t.Text("src_rank")))
		dst, okD := parseLocalRank(strings.TrimSpace(t.Text("dst_rank")))
		if !okS || !okD {
			return t.Errf("link %q-%q is not a pair of global ranks", t.Text("src_rank"), t.Text("dst_rank"))
		}
		l := profile.MatrixLink{Step: k.Step, P2P: k.P2P, OpKey: k.Name, Group: k.Group,
			Transport: t.Text("transport_type"), OpName: t.Text("op_name")}
		if l.Bytes, l.TimeNs, l.BandwidthGBps, err = transitOf(t); err != nil {
			return err
		}
		if set, ok := parseRankSet(t.Text("rank_set")); ok {
			p.addSetGroup(k.Group, set, clusterAnalysisDBName)
		}
		p.links = append(p.links, summaryLink{SrcRank: src, DstRank: dst, Link: l})
	}
	return nil
}

// skippedSummaryNote begins the note on an msprof-analyze output that gave no rank.
const skippedSummaryNote = "skipped msprof-analyze's output"

// summaryInput is an msprof-analyze output found by discovery: its directory and the
// files of it to read.
type summaryInput struct {
	dir   string
	files []string
}

// probeSummaryRanks returns the ranks a summary covers when a small file says so
// (cluster_step_trace_time.csv's rank rows), without reading the large ones; ok is
// false when it cannot tell.
func probeSummaryRanks(s summaryInput) (ranks []int, ok bool) {
	for _, f := range s.files {
		if filepath.Base(f) != clusterStepTraceCSV {
			continue
		}
		fh, err := vfs.Open(f)
		if err != nil {
			return nil, false
		}
		rows, err := parseClusterStepTraceCSV(fh, f)
		fh.Close()
		if err != nil || len(rows) == 0 {
			return nil, false
		}
		for _, r := range rows {
			if r.Rank < 0 {
				return nil, false // a row of no known rank
			}
			ranks = append(ranks, r.Rank)
		}
		slices.Sort(ranks)
		return slices.Compact(ranks), true
	}
	return nil, false
}

// summaryRanks are the rank inputs of msprof-analyze's outputs (held by discovery)
// that no raw rank directory gave: raw data win over summaries of them, and the
// summary's ranks left out are named in a note with the reason. A summary whose ranks
// all have raw directories (told from its step trace file) is not read further.
func summaryRanks(held []any, ranks []RankInput, notes *[]string) []RankInput {
	have := map[int]string{} // rank → what gave it
	for _, ri := range ranks {
		have[ri.Rank] = "raw"
	}
	var added []RankInput
	for _, h := range held {
		s := h.(summaryInput)
		where := s.dir
		if len(s.files) == 1 {
			where = s.files[0]
		}
		if probe, ok := probeSummaryRanks(s); ok && len(ranks)+len(added) > 0 {
			covered := true
			for _, r := range probe {
				if have[r] != "raw" {
					covered = false
					break
				}
			}
			if covered {
				*notes = append(*notes, fmt.Sprintf("ignored msprof-analyze's output %s (ranks %s): every rank it summarises was read from its raw rank directory, which wins over the summary", where, ranklist.Format(probe)))
				continue
			}
		}
		cs := readClusterSummary(s.dir, s.files)
		if len(cs.Ranks) == 0 {
			reason := "no rank rows, ops or links in it"
			if len(cs.Problems) > 0 {
				reason = strings.Join(cs.Problems, "; ")
			}
			*notes = append(*notes, fmt.Sprintf("%s %s: %s", skippedSummaryNote, where, reason))
			continue
		}
		var used, raw, dup []int
		for _, r := range cs.SortedRanks() {
			switch have[r] {
			case "":
				have[r] = where
				used = append(used, r)
				added = append(added, RankInput{Rank: r, Dir: s.dir, source: cs})
			case "raw":
				raw = append(raw, r)
			default:
				dup = append(dup, r)
			}
		}
		if len(raw) > 0 {
			*notes = append(*notes, fmt.Sprintf("ignored msprof-analyze's summaries in %s for ranks %s: read from their raw rank directories, which win over the summary", where, ranklist.Format(raw)))
		}
		if len(dup) > 0 {
			*notes = append(*notes, fmt.Sprintf("ignored msprof-analyze's summaries in %s for ranks %s: already read from another msprof-analyze output", where, ranklist.Format(dup)))
		}
		if len(used) > 0 {
			*notes = append(*notes, fmt.Sprintf("ranks %s read from msprof-analyze's output %s (%s): msprof-analyze's summaries of the profiler's per-rank files, not the profiler's raw output; no timeline",
				ranklist.Format(used), where, strings.Join(cs.FilesUsed, ", ")))
		}
	}
	return added
}
