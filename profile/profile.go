// Package profile is hcclprof's one data model: what every parser produces and every
// analysis reads. A new input format only has to fill these types (in package parser);
// nothing downstream knows which file a value came from, except through the fields
// kept for the report (Rank.Format, Rank.CommOpsSource, Rank.FilesUsed): what a
// format makes true of its data is said by the rank's Traits and ClipToStepWindows,
// set by the parser, and nothing downstream branches on Rank.Format. A rank keeps
// apart the Timeline hcclprof recomputes from and what the profiler Reported of its
// own; every parsed rank goes through Rank.Normalize (check.go) before analysis.
//
// Conventions: times are int64 nanoseconds (real traces carry µs strings such as
// "1736408883732241.564" that float64 cannot hold exactly), durations end in Ns,
// sizes in bytes, bandwidths in decimal GB/s.
package profile

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Cluster is one profiled job: every rank found under the user's arguments.
type Cluster struct {
	Ranks []*Rank // sorted by global rank
	// Notes are discovery remarks: ignored files, duplicate ranks, and the like.
	Notes []string
}

// Format names the on-disk layout a rank was read from.
type Format string

// Formats known to the parser.
const (
	FormatTorchNPUText Format = "torch_npu-text"
	// FormatMsprof is the msprof command line's PROF_* directory (CANN 8 text export
	// or the older per-iteration device_N/timeline layout).
	FormatMsprof Format = "msprof"
	// FormatMsprofDB is the unified db msprof --type=db writes at a PROF directory's
	// root (msprof_{ts}.db), read instead of the text export beside it.
	FormatMsprofDB Format = "msprof-db"
	// FormatTorchNPUDB is torch_npu's db export: ascend_pytorch_profiler_{rank}.db
	// and analysis.db in ASCEND_PROFILER_OUTPUT.
	FormatTorchNPUDB Format = "torch_npu-db"
	// FormatKineto is a PyTorch profiler (Kineto) Chrome trace of a GPU rank with NCCL
	// (plain .json or .json.gz).
	FormatKineto Format = "kineto"
	// FormatMindSporeText and FormatMindSporeDB are MindSpore's *_ascend_ms rank
	// directories, which follow torch_npu's layout (docs/formats.md §1.2).
	FormatMindSporeText Format = "mindspore-text"
	FormatMindSporeDB   Format = "mindspore-db"
	// FormatMsprofAnalyze is a rank known only from msprof-analyze's cluster output
	// (cluster_analysis_output/: cluster_step_trace_time.csv, cluster_communication*.json,
	// communication_group.json or cluster_analysis.db): the profiler's per-rank
	// summaries as msprof-analyze gathered them, with no timeline.
	FormatMsprofAnalyze Format = "msprof-analyze"
	// FormatSummary is the file hcclprof summarize writes of one rank: what analysis
	// reads of it (analysis.Compact), in any of the formats above. A rank read from
	// one keeps the Format it was summarised from, so the reports match.
	FormatSummary Format = "hcclprof-summary"
)

// Rank holds what was kept of one rank's profile: the timeline hcclprof recomputes
// its figures from, and apart from it what the profiler reported of its own
// (Reported), which only cross-checks and stands in for a missing timeline.
type Rank struct {
	Rank   int    // global rank
	Dir    string // the rank directory (or the file, for single-file input)
	Format Format

	Info     Info
	Metadata Metadata

	// HasTimeline is false for Level0 output or when the timeline file is missing.
	HasTimeline bool
	Timeline
	// MicroBatchesByWindow, when set, is the micro-batch count of each device step
	// window in order, counted from Compute and BackwardCompute before the timeline was
	// compacted for a rank summary (the count needs every kernel); nil: counted from
	// them.
	MicroBatchesByWindow []int
	// CommOpsSource says where CommOps came from: "timeline", or, for a rank without
	// timeline ops, the profiler's per-op analysis ("communication.json",
	// "analysis.db", "communication_analyzer.db") or "kernel_details.csv"; "" when
	// the rank has no ops.
	CommOpsSource string
	// ClipToStepWindows says that device and host share a clock (Kineto: CUDA activity
	// timestamps are converted to the host clock), so a step is its host ProfilerStep#N
	// window itself: device intervals are clipped to it and Stage is its length, rather
	// than mapping steps to device windows through Flows (Ascend, whose device lags the
	// host and whose step time is the device span).
	ClipToStepWindows bool
	// Traits are what the rank's format makes true of its data.
	Traits

	Reported
	// matrixGroupSizes is what DropTimeline keeps of CommMatrix.
	matrixGroupSizes map[string]int

	// FilesUsed and FilesIgnored say what was read, relative to Dir.
	FilesUsed    []string
	FilesIgnored []string
	// Problems are non-fatal issues met while parsing (a truncated file, a bad row).
	// A rank with Problems is incomplete: its figures may be partial.
	Problems []string
	// Notes are remarks on what was read that leave its figures whole, for the report's
	// warnings: steps the profiler recorded that its export does not hold.
	Notes []string
}

// Traits are what a rank's format makes true of its data, whatever its files hold.
// The parser sets them (each format's in parser/traits.go; a rank summary's from the
// format it was summarised from), so that the analysis asks what a rank can tell
// rather than which format it came from.
type Traits struct {
	// Framework is the training framework when the format itself names it
	// (FrameworkMindSpore: MindSpore's *_ascend_ms directories); "" when it does not.
	Framework string
	// EpochClock says op start times are ns since the Unix epoch, alike on every rank
	// (torch_npu's and MindSpore's exports), so that ranks of two runs gathered in one
	// directory show as apart in time. msprof's older timelines use each device's
	// monotonic clock, and Kineto's may be relative to the process.
	EpochClock bool
	// NCCL says the collectives are NCCL's on NVIDIA GPUs (a PyTorch profiler trace),
	// not HCCL's on Ascend NPUs: HCCL's settings and checks (HCCL_BUFFSIZE's rounds) do
	// not apply, and the devices are GPUs.
	NCCL bool
	// OpaqueOps says the format never holds what happens inside a collective: NCCL's
	// kernels have no task rows and no per-link figures in any profile, so whether a
	// kernel moved data or waited is read from the ranks' arrivals.
	OpaqueOps bool
	// OwnBreakdown says the profiler writes a step breakdown of its own
	// (step_trace_time.csv, the timeline's Overlap Analysis rows) to check hcclprof's
	// recomputation against; Kineto writes none.
	OwnBreakdown bool
	// ClusterOutput says the rank is known only from msprof-analyze's cluster output:
	// the profiler's per-rank summaries as it gathered them, its step figures from
	// cluster_step_trace_time.csv.
	ClusterOutput bool
	// What inspect says of the format: StepMarkers is what marks its steps
	// ("ProfilerStep#N markers", "STEP_TIME rows"), MarkSteps how a profile of it gets
	// its steps marked when they are not, GroupsFrom where its communicators' names
	// are read.
	StepMarkers, MarkSteps, GroupsFrom string
}

// FrameworkMindSpore is Traits.Framework of MindSpore's profiler output.
const FrameworkMindSpore = "mindspore"

// Timeline is a rank's events as the timeline gives them (trace_view.json, the
// profiler db, msprof's timelines, a Kineto trace): what hcclprof recomputes the step
// breakdown from. Times are int64 ns; every list is sorted by start time (Flows by
// device time), which Rank.Normalize ensures.
type Timeline struct {
	Steps   []StepMarker // host-side ProfilerStep#N windows
	Compute []Interval   // device compute tasks (Ascend Hardware; Kineto: non-NCCL GPU kernels)
	// BackwardCompute are the compute tasks whose kernel names mark a backward pass
	// (IsBackwardKernel): from the Ascend timelines (trace_view.json, msprof
	// timelines, the db export); none from Kineto.
	BackwardCompute []Interval
	// CommOps are the HCCL op rows (Kineto: NCCL kernels); for a rank without them,
	// the ops its profiler analysis lists (see Rank.CommOpsSource).
	CommOps   []CommOp
	CommTasks []CommTask   // HCCL plane rows
	Flows     []DeviceFlow // host→device flow ends (for step mapping)
}

// Reported is what the profiler computed itself, kept to cross-check hcclprof's
// recomputation and to stand in for a timeline the rank lacks. Each is nil (or empty)
// when the profile does not have it.
type Reported struct {
	// Overlap is the timeline's Overlap Analysis layer.
	Overlap OverlapLayer
	// StepTrace is step_trace_time.csv (or analysis.db's StepTraceTime, or
	// msprof-analyze's cluster step table), in ns.
	StepTrace []StepTraceRow
	// StepTraceFrom names the file or table StepTrace was read from when it is not
	// the format's usual one (msprof-analyze's cluster_analysis.db tables); "" else.
	StepTraceFrom string
	// CommStats is communication.json (or analysis.db's CommAnalyzer tables).
	CommStats []CommOpStats
	// CommMatrix is communication_matrix.json (or analysis.db's CommAnalyzerMatrix).
	CommMatrix []MatrixLink
	// KernelCommOps holds the communication rows of kernel_details.csv (msprof:
	// op_summary_*.csv), the only comm ops a Level0 profile has.
	KernelCommOps []CommOp
	// ComputeDTypeNs is the compute kernels' time by their first input's data type
	// (BF16, FP16, FP32, ...), from kernel_details.csv's Input Data Types over its
	// first rows: what the model computes in. Nil when the profile does not say.
	ComputeDTypeNs map[string]int64
}

// Incomplete reports whether something in this rank could not be read in full.
func (r *Rank) Incomplete() bool { return len(r.Problems) > 0 }

// Info is profiler_info_N.json: how the profile was collected.
type Info struct {
	ProfilerLevel   string // Level0, Level1, Level2, Level_none
	ExportType      string // text, db
	TorchNPUVersion string
	CANNVersion     string
	RankID          int // -1 when absent
	// CollectionEndNs is profiler_info's end_info.collectionTimeEnd, when the
	// collection ended in ns since the epoch; 0 when absent. It tells two processes'
	// claims of one rank from a re-run (parser's rankClaim).
	CollectionEndNs int64
	// Host and HostUID name the server the rank ran on where the profile says it
	// (msprof's info.json: hostname, hostUid); "" otherwise. A torch_npu rank
	// directory's name carries its host instead.
	Host, HostUID string
	// HostSource says where Host was read when the format can tell it in more than
	// one way (Kineto: the trace's host_name, else its file name); "" otherwise.
	HostSource string
	// ChipName is the NPU as the profile names it (NPU_INFO: "Ascend910B"), "" when
	// it does not say; it selects the hardware profile.
	ChipName string
	// Device is what CANN's device_N/info.json.N says of the NPU (msprof's PROF_*
	// directory, or the one torch_npu keeps in its rank directory); nil when none was read.
	Device *DeviceInfo
}

// DeviceInfo is the chip description of CANN's info.json.N: its DeviceInfo entry and
// platform_version.
type DeviceInfo struct {
	File string // the info.json.N it was read from, relative to the rank's directory
	// AICoreNum and AIVNum are the device's AI Cores and AI Vector cores (ai_core_num,
	// aiv_num); -1 when absent. The first-generation Ascend 910 has no separate vector
	// cores (aiv_num 0); 910B and later have two per AI Core.
	AICoreNum, AIVNum int
	// PlatformVersion is msprof's chip id ("1" Ascend910A, "5" Ascend910B); "" when absent.
	PlatformVersion string
}

// Metadata is profiler_metadata.json.
type Metadata struct {
	Env             map[string]string // ENV_VARIABLES
	ParallelGroups  []ParallelGroup   // parallel_group_info
	DistributedArgs map[string]any    // distributed_args, as written
}

// ParallelGroup is one communicator of parallel_group_info.
type ParallelGroup struct {
	HCCLName    string // the raw HCCL group name (key of parallel_group_info)
	Name        string // the framework's name: dp, tp, pp, ...
	GroupRank   int
	GlobalRanks []int

	// Key, when set, is the CommOp.Group of this group's ops (Kineto: the PyTorch
	// process group name, "0" for the default group); when empty the ops name the
	// group by DoubleHash(HCCLName), as Ascend's do.
	Key string
	// Size is the communicator's size when GlobalRanks is not the full list (Kineto
	// may record only the size); 0 means len(GlobalRanks).
	Size int
	// Source says where the group was read, for the collectives table; "" means
	// parallel_group_info.
	Source string
}

// GroupSize is the communicator's size: Size when set, else len(GlobalRanks).
func (g ParallelGroup) GroupSize() int {
	if g.Size > 0 {
		return g.Size
	}
	return len(g.GlobalRanks)
}

// OpsKey is the group key its ops carry (CommOp.Group): Key when set, else the
// double hash of its HCCL name in decimal.
func (g ParallelGroup) OpsKey() string {
	if g.Key != "" {
		return g.Key
	}
	return strconv.FormatUint(DoubleHash(g.HCCLName), 10)
}

// Interval is a half-open [StartNs, EndNs) span of device time.
type Interval struct {
	StartNs int64
	EndNs   int64
}

// DurNs is the interval's length.
func (iv Interval) DurNs() int64 { return iv.EndNs - iv.StartNs }

// StepMarker is a host-side ProfilerStep#N window.
type StepMarker struct {
	Step int // the profiler's step number (N of ProfilerStep#N)
	Interval
}

// DeviceFlow ties a device event (its start time) to the host time that launched it.
type DeviceFlow struct {
	DeviceNs int64
	HostNs   int64
}

// CommOp is one HCCL operation (a collective or p2p op) on one rank.
type CommOp struct {
	Name     string // hcom_allReduce__586_0_1
	Type     string // normalised op type: allreduce, allgather, reducescatter, broadcast, send, receive, ...
	Group    string // the group key: the @hash from communication.json when known, else the op-name group id
	GroupRow string // the timeline row the op sits on ("Group 0 Communication")
	Interval
	// Step is the step the profiler assigned the op to (kernel_details.csv's Step Id);
	// -1 when the source does not say (timeline ops are assigned by analysis).
	Step     int
	DataType string // FP32, BF16, ... ("" when unknown)
	Count    int64  // number of elements (0 when unknown)
	AlgType  string // MESH-RING, ...
}

// SortOpsByStart sorts ops by start time, then name, so the order does not depend on
// the source's.
func SortOpsByStart(ops []CommOp) {
	slices.SortStableFunc(ops, func(a, b CommOp) int {
		if a.StartNs != b.StartNs {
			return cmp.Compare(a.StartNs, b.StartNs)
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// Bytes is the op's message size (count × element size), 0 when unknown.
func (op CommOp) Bytes() int64 { return op.Count * int64(DataTypeSize(op.DataType)) }

// CommTask is one HCCL task on a plane row. Its strings are TaskLabels, read as its
// own fields (t.Name) and shared with the tasks that have the same: a big trace has
// hundreds of thousands of tasks and a few dozen sets of labels, and as four strings
// in each task they were half its size. Every task has labels (never nil); a task's
// labels are changed by giving it others (TaskLabelSet.Of), never in place.
type CommTask struct {
	Plane int
	*TaskLabels
	Interval
	SrcRank   int // group-local; -1 for none
	DstRank   int
	SizeBytes int64
}

// TaskLabels are the strings of a CommTask.
type TaskLabels struct {
	// GroupRow is the op row (CommOp.GroupRow) whose planes this task's row belongs
	// to, "" when the source does not say.
	GroupRow      string
	Name          string // Memcpy, Reduce_Inline, Notify_Wait, RDMASend, ...
	TransportType string // SDMA, RDMA, LOCAL
	LinkType      string // ON_CHIP, HCCS, PCIE, ROCE, SIO, ...
}

// TaskLabelSet hands out one shared *TaskLabels for each distinct set of labels. The
// zero value is ready to use; it is not safe for concurrent use.
type TaskLabelSet struct {
	byValue map[TaskLabels]*TaskLabels
}

// Of is the shared copy of l.
func (s *TaskLabelSet) Of(l TaskLabels) *TaskLabels {
	if p, ok := s.byValue[l]; ok {
		return p
	}
	if s.byValue == nil {
		s.byValue = map[TaskLabels]*TaskLabels{}
	}
	p := &l
	s.byValue[l] = p
	return p
}

// OverlapLayer holds the profiler's Overlap Analysis rows, kept to cross-check the
// breakdown hcclprof recomputes.
type OverlapLayer struct {
	Computing, Communication, CommNotOverlapped, Free []Interval
}

// Present reports whether the trace had an Overlap Analysis layer.
func (o OverlapLayer) Present() bool {
	return len(o.Computing)+len(o.Communication)+len(o.CommNotOverlapped)+len(o.Free) > 0
}

// StepTraceRow is one step of the profiler's own breakdown (step_trace_time.csv,
// analysis.db's StepTraceTime, msprof-analyze's cluster tables), converted to ns: the
// files write µs with up to 3 decimals, which the parsers convert from the decimal
// text, so every figure is the one written.
type StepTraceRow struct {
	Step    int  // -1 when the column is empty
	HasStep bool // false for runs without step markers
	ComputingNs, CommNotOverlappedNs, OverlappedNs, CommunicationNs,
	FreeNs, StageNs, BubbleNs, CommNotOverlappedExclRecvNs, PreparingNs int64
	HasPreparing bool
	// OutOfRange is the first figure of the row that int64 ns cannot hold, as the
	// file wrote it ("Stage = 1e300"); its ns field then saturates and Impossible
	// names it. "" when every figure fits.
	OutOfRange string
}

// CommOpStats is one op of communication.json, converted to ns and bytes.
type CommOpStats struct {
	Step       int // -1 for the "step" key without a number
	P2P        bool
	Name       string // op name without the @group suffix
	Group      string // the @group hash
	StartNs    int64
	ElapseNs   int64
	TransitNs  int64
	WaitNs     int64
	SyncNs     int64
	IdleNs     int64
	Transports map[string]TransportStats
}

// TransportStats is one "Communication Bandwidth Info" entry.
type TransportStats struct {
	Bytes            int64
	TimeNs           int64
	BandwidthGBps    float64
	LargePacketRatio float64
	SizeDistribution []PacketBin
}

// PacketBin is one Size Distribution entry: Count packets of SizeBytes taking TimeNs in all.
type PacketBin struct {
	SizeBytes int64
	Count     int64
	TimeNs    int64
}

// MatrixLink is one link entry of communication_matrix.json.
type MatrixLink struct {
	Step          int
	P2P           bool
	OpKey         string // "allreduce-top1" (aggregated layout) or the raw op name (legacy)
	Group         string
	SrcLocal      int
	DstLocal      int
	Transport     string
	Bytes         int64
	TimeNs        int64
	BandwidthGBps float64
	OpName        string
}

// GroupSizeFromMatrix returns, per group hash, 1 + the largest group-local rank seen
// as the source or destination of any link. It is a lower bound on the
// communicator's size, exact when some link reaches the last member: with mesh
// algorithms every rank links to every other, and in a ring rank 0's neighbour is the
// last rank; merge the links of several ranks for the best bound. Links without a
// group are ignored.
func GroupSizeFromMatrix(links []MatrixLink) map[string]int {
	sizes := make(map[string]int)
	for _, l := range links {
		if l.Group == "" {
			continue
		}
		if n := max(l.SrcLocal, l.DstLocal) + 1; n > sizes[l.Group] {
			sizes[l.Group] = n
		}
	}
	return sizes
}

// DropTimeline releases what only the per-rank analysis reads (device tasks, HCCL
// ops and plane tasks, flows, the Overlap layer, the profiler's per-op statistics and
// its communication matrix, of which the group sizes are kept), once the rank has been
// summarised, so a large cluster's memory holds summaries rather than traces.
// Metadata, steps and the step trace stay: cross-rank analyses read them.
func (r *Rank) DropTimeline() {
	r.CommOps = nil
	r.Compute = nil
	r.BackwardCompute = nil
	r.CommTasks = nil
	r.Flows = nil
	r.Overlap = OverlapLayer{}
	r.CommStats = nil
	if r.CommMatrix != nil {
		r.matrixGroupSizes = GroupSizeFromMatrix(r.CommMatrix)
		r.CommMatrix = nil
	}
}

// MatrixGroupSizes is GroupSizeFromMatrix of the rank's communication matrix, also
// after DropTimeline released the matrix itself.
func (r *Rank) MatrixGroupSizes() map[string]int {
	if r.CommMatrix != nil {
		return GroupSizeFromMatrix(r.CommMatrix)
	}
	return r.matrixGroupSizes
}

// RankListInterner shares identical GlobalRanks lists between ranks: in a large job
// every rank's parallel_group_info repeats the same world and data-parallel groups,
// which would otherwise cost ranks × group size integers. Safe for concurrent use.
type RankListInterner struct {
	mu   sync.Mutex
	seen map[string][][]int // by HCCL group name
}

// Intern replaces r's group rank lists by equal ones already seen.
func (in *RankListInterner) Intern(r *Rank) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.seen == nil {
		in.seen = map[string][][]int{}
	}
	for i := range r.Metadata.ParallelGroups {
		g := &r.Metadata.ParallelGroups[i]
		if len(g.GlobalRanks) == 0 {
			continue
		}
		found := false
		for _, cand := range in.seen[g.HCCLName] {
			if slices.Equal(cand, g.GlobalRanks) {
				g.GlobalRanks = cand
				found = true
				break
			}
		}
		if !found {
			in.seen[g.HCCLName] = append(in.seen[g.HCCLName], g.GlobalRanks)
		}
	}
}

// IsBackwardKernel says whether a device kernel's name marks a backward pass:
// torch_npu's aclnn kernels of autograd carry "Backward" or "Grad"
// (aclnnThresholdBackward_ReluGrad_ReluGrad, RmsNormGrad). A backward pass has many
// of them; a forward pass has none.
func IsBackwardKernel(name string) bool {
	return strings.Contains(name, "Backward") || strings.Contains(name, "Grad")
}
