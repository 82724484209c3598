// Package contract is the shape of hcclprof's JSON report, the contract that scripts
// and CI read (docs/outputs.md §6): the report's writer encodes these types, diff
// decodes a saved report into them, and the generator's ground_truth.json writes its
// steps with Step. Times are µs, shares fractions, bandwidths decimal GB/s, step the
// profiler's step number (-1 when the run has no step markers); a figure that is not
// known is null. testdata/report.schema.json (in package report) is the same
// contract as a JSON Schema.
package contract

// SchemaVersion is the version of the JSON report. It changes only when a field is
// removed, renamed or changes meaning; new fields may be added within a version.
// Version 2 calls a machine a server, HCCL's word: version 1's slow_nodes and node
// keys are slow_servers and server (Decode reads both). Version 3 writes null, not 0,
// for a figure that is not known: a size, bandwidth, utilisation, peak or group size
// (an op without a byte count, a transport without a peak), an op's time split where
// its source has none, an op's wait for the other ranks where no other profiled rank
// ran it, the overlap ratio without communication, a pipeline's micro-batches and
// bubbles where unknown, the AllReduce share of a step without a timeline or op
// records; Decode reads an older report's 0 there as null (the overlap ratio, the
// measured bubble and the AllReduce share excepted: 0 was also a measure).
const SchemaVersion = 3

// Report is the whole JSON report of analyze (and of advise's full form): what
// `hcclprof analyze --format json` writes and `hcclprof diff` reads back.
type Report struct {
	SchemaVersion int          `json:"schema_version"`
	Tool          Tool         `json:"tool"`
	Summary       Summary      `json:"summary"`
	Ranks         []Rank       `json:"ranks"`
	Collectives   []Collective `json:"collectives"`
	// CollectiveKinds roll the collectives up by parallel dimension and op type
	// (absent from reports before them).
	CollectiveKinds []CollectiveKind `json:"collective_kinds,omitempty"`
	Communication   Communication    `json:"communication"`
	Findings        []Finding        `json:"findings"`
	Recommendations []Recommendation `json:"recommendations"`
	Warnings        []string         `json:"warnings"`
	Notes           []string         `json:"notes"`
	Gates           []Gate           `json:"gates"`
}

// Tool names the program that wrote the report.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Command string `json:"command,omitempty"`
}

// Summary is the run's headline: shares are time-weighted over ranks and steps.
type Summary struct {
	Ranks          int      `json:"ranks"`
	Steps          int      `json:"steps"`
	StepTimeUs     float64  `json:"step_time_us"`
	CommShare      float64  `json:"comm_share"`
	CommTotalShare float64  `json:"comm_total_share"`
	AllReduceShare *float64 `json:"allreduce_share"` // null when a step's AllReduce time is not known
	OverlapRatio   *float64 `json:"overlap_ratio"`   // null without communication
	// ExposedTransferShare and ExposedWaitShare split comm_share (null unless every op
	// has its time split and op records cover all the exposed time); Diagnosis is the leading cause (null when not computed).
	ExposedTransferShare *float64   `json:"exposed_transfer_share"`
	ExposedWaitShare     *float64   `json:"exposed_wait_share"`
	Diagnosis            *Diagnosis `json:"diagnosis"`
	RanksProfiled        int        `json:"ranks_profiled"`
	RanksExpected        *int       `json:"ranks_expected"` // the world size the profiles state; null when unknown
	Incomplete           bool       `json:"incomplete"`
	Verdict              string     `json:"verdict"`
	// ParallelKinds is the communication per parallel dimension (absent from
	// reports before it; [] when no group's ops were seen).
	ParallelKinds []ParallelKind `json:"parallel_kinds,omitempty"`
}

// ParallelKind is one parallel dimension's communication: tp (tensor parallel), sp
// (tensor parallel with sequence parallelism), cp, ep, fsdp, dp, pp or unknown. Its
// shares are like the summary's, of the ops of its groups alone: where ops of two
// dimensions run at once the time counts for both. Its exposed share is measured on a
// timeline; where some rank has none it is bounded (comm_share_min, comm_share_max,
// written only then) and comm_share is null.
type ParallelKind struct {
	Kind           string   `json:"kind"`
	Title          string   `json:"title"`
	Groups         int      `json:"groups"`
	CommShare      *float64 `json:"comm_share"` // exposed: no compute kernel and no receive runs
	CommShareMin   *float64 `json:"comm_share_min,omitempty"`
	CommShareMax   *float64 `json:"comm_share_max,omitempty"`
	CommTotalShare float64  `json:"comm_total_share"` // all of it, of Stage + Bubble
	Sources        []string `json:"sources"`          // where the groups' kinds came from
}

// CollectiveKind is one op type over every group of one parallel dimension, the
// group with the longest mean op named.
type CollectiveKind struct {
	Kind                 string   `json:"kind"`
	Op                   string   `json:"op"`
	Groups               int      `json:"groups"`
	GroupSize            *int     `json:"group_size"` // null when the groups differ or it is unknown
	Count                int      `json:"count"`
	Bytes                *int64   `json:"bytes"` // null when an op's size is unknown
	TotalUs              float64  `json:"total_us"`
	MeanUs               float64  `json:"mean_us"`
	MaxUs                float64  `json:"max_us"`
	MedianGroupMeanUs    float64  `json:"median_group_mean_us"`
	MedianGroupBusBwGBps *float64 `json:"median_group_busbw_gbps"`
	WorstGroup           string   `json:"worst_group"`
	WorstGroupName       string   `json:"worst_group_name,omitempty"`
	WorstGroupMeanUs     float64  `json:"worst_group_mean_us"`
	WorstGroupBusBwGBps  *float64 `json:"worst_group_busbw_gbps"`
}

// Diagnosis is the leading cause of the lost time, as the advisor found it.
type Diagnosis struct {
	Cause    string  `json:"cause"`
	Share    float64 `json:"share"`
	Title    string  `json:"title"`
	Evidence string  `json:"evidence"`
	// Candidates are the causes the profile leaves open (cause is then "unknown"):
	// present only then.
	Candidates []string `json:"candidates,omitempty"`
}

// Rank is one rank's input and its steps.
type Rank struct {
	Rank       int     `json:"rank"`
	Source     string  `json:"source"`
	OpsSource  *string `json:"ops_source"` // where the per-op records came from; null when the rank has none
	Format     string  `json:"format"`
	Dir        string  `json:"dir"`
	Incomplete bool    `json:"incomplete"`
	Steps      []Step  `json:"steps"`
}

// Step is one step of one rank as the profiler's step_trace_time.csv splits it, in µs.
// ground_truth.json (hcclprof gen) writes its steps with this type too.
type Step struct {
	Step                         int      `json:"step"`
	StageUs                      float64  `json:"stage_us"`
	ComputingUs                  float64  `json:"computing_us"`
	CommunicationUs              float64  `json:"communication_us"`
	CommunicationNotOverlappedUs float64  `json:"communication_not_overlapped_us"`
	OverlappedUs                 float64  `json:"overlapped_us"`
	FreeUs                       float64  `json:"free_us"`
	BubbleUs                     float64  `json:"bubble_us"`
	PreparingUs                  *float64 `json:"preparing_us"` // null when the profile does not say
	CommShare                    float64  `json:"comm_share"`
	CommTotalShare               float64  `json:"comm_total_share"`
	AllReduceShare               *float64 `json:"allreduce_share"` // null without op records for the step
}

// Collective is one op type in one communicator over all ranks and steps.
type Collective struct {
	Op              string   `json:"op"`
	Group           string   `json:"group"`
	GroupName       string   `json:"group_name,omitempty"`
	GroupSize       *int     `json:"group_size"` // null when unknown
	GroupSizeSource string   `json:"group_size_source"`
	ParallelKind    string   `json:"parallel_kind,omitempty"` // the group's parallel dimension
	Count           int      `json:"count"`
	Bytes           *int64   `json:"bytes"` // null when an op's size is unknown
	TotalUs         float64  `json:"total_us"`
	MeanUs          float64  `json:"mean_us"`
	P50Us           float64  `json:"p50_us"`
	P95Us           float64  `json:"p95_us"`
	MaxUs           float64  `json:"max_us"`
	AlgBwGBps       *float64 `json:"algbw_gbps"` // null without bytes
	BusBwGBps       *float64 `json:"busbw_gbps"` // null without bytes or group size
}

// Communication is the per-op records, the links between ranks and what was found in them.
type Communication struct {
	Ops         []Op         `json:"ops"`
	Groups      []Group      `json:"groups"`
	Links       []Link       `json:"links"`
	SlowRanks   []SlowRank   `json:"slow_ranks"`
	SlowLinks   []SlowLink   `json:"slow_links"`
	SlowServers []SlowServer `json:"slow_servers"`
	// SlowGroups are slow groups whose slow link could not be named (absent without
	// one, and from reports before them).
	SlowGroups      []SlowGroup      `json:"slow_groups,omitempty"`
	Retransmissions []Retransmission `json:"retransmissions"`
	Checks          []Check          `json:"checks"`
	GroupSteps      []GroupStep      `json:"group_steps"`
	Pipelines       []Pipeline       `json:"pipelines"`
	// ExpertGroups is each expert-parallel group's AlltoAll(v) per rank (absent
	// without one, and from reports before it).
	ExpertGroups []ExpertGroup `json:"expert_groups,omitempty"`
	Hardware     Hardware      `json:"hardware"`
}

// Op is one collective on one rank.
type Op struct {
	Rank     int     `json:"rank"`
	Step     int     `json:"step"`
	Group    string  `json:"group"`
	Name     string  `json:"name"`
	Type     string  `json:"type"`
	StartUs  float64 `json:"start_us"`
	ElapseUs float64 `json:"elapse_us"`
	// The op's time split and its ratios are null when its source has none
	// (source "none": kernel_details.csv rows, NCCL kernels).
	TransitUs *float64 `json:"transit_us"`
	WaitUs    *float64 `json:"wait_us"`
	SyncUs    *float64 `json:"sync_us"`
	IdleUs    *float64 `json:"idle_us"`
	WaitRatio *float64 `json:"wait_ratio"`
	SyncRatio *float64 `json:"sync_ratio"`
	// MovingUs is the time the op moved data as the analysis counts it, and
	// MovingSource where it was read: "transit" (the profiler's Transit), "transports"
	// (the busiest transport's time, where the profiler's op-level Transit is 0 while
	// its transports carry times: CANN 8.3 at Level2), "transit+rdma", "transit (RDMA plane)",
	// "planes" (the union of the HCCL tasks' transfers), "cross-rank arrival (Kineto:
	// no NCCL task rows)" (an NCCL kernel's elapse less its cross-rank wait, where every
	// member of its group was profiled). Null when nothing moved or the source has no
	// split.
	MovingUs     *float64             `json:"moving_us"`
	MovingSource *string              `json:"moving_source"`
	CrossWait    *float64             `json:"cross_rank_wait_us"` // null when no other profiled rank ran the op
	Bytes        *int64               `json:"bytes"`              // null when unknown
	BusBwGBps    *float64             `json:"busbw_gbps"`         // null without bytes, transit or group size
	Util         *float64             `json:"utilisation"`        // null without a size or the transport's peak
	Source       string               `json:"source"`
	Transports   map[string]Transport `json:"transports"`
}

// Transport is an op's traffic over one transport (HCCS, RDMA, ...).
type Transport struct {
	Bytes            int64     `json:"bytes"`
	TimeUs           float64   `json:"time_us"`
	BandwidthGBps    float64   `json:"bandwidth_gbps"`
	LargePacketRatio float64   `json:"large_packet_ratio"`
	SizeDistribution []SizeBin `json:"size_distribution"`
}

// SizeBin is the transfers of one size within a Transport.
type SizeBin struct {
	SizeBytes int64   `json:"size_bytes"`
	Count     int64   `json:"count"`
	TimeUs    float64 `json:"time_us"`
}

// Group is one communicator.
type Group struct {
	Group string `json:"group"`
	Name  string `json:"name"`
	Ranks []int  `json:"ranks"`
	Kind  string `json:"kind"`
	// ParallelKind is the group's parallel dimension (tp, sp, cp, dp, pp, ep, fsdp,
	// unknown) and ParallelKindSource where it came from: "profile (…)" or
	// "inferred from …". Absent from reports before them.
	ParallelKind       string `json:"parallel_kind,omitempty"`
	ParallelKindSource string `json:"parallel_kind_source,omitempty"`
}

// Link is the traffic from one rank to another over one transport.
type Link struct {
	Src           int      `json:"src"`
	Dst           int      `json:"dst"`
	Transport     string   `json:"transport"`
	Bytes         int64    `json:"bytes"`
	TimeUs        float64  `json:"time_us"`
	BandwidthGBps float64  `json:"bandwidth_gbps"`
	PeakGBps      *float64 `json:"peak_gbps"`   // null when the hardware profile has none
	Utilisation   *float64 `json:"utilisation"` // null without a peak
}

// SlowRank is a rank the others waited for.
type SlowRank struct {
	Rank     int     `json:"rank"`
	Score    float64 `json:"score"`
	Steps    []int   `json:"steps"`
	Cause    string  `json:"cause"`
	Evidence string  `json:"evidence"`
	// ShareOfStep is what the rank costs the others per flagged step, over Stage;
	// StepsSeen the steps whose waits could be compared.
	ShareOfStep float64 `json:"share_of_step"`
	StepsSeen   int     `json:"steps_seen"`
}

// SlowLink is a link slower than its peers.
type SlowLink struct {
	Src            int     `json:"src"`
	Dst            int     `json:"dst"`
	Transport      string  `json:"transport"`
	BandwidthGBps  float64 `json:"bandwidth_gbps"`
	PeerMedianGBps float64 `json:"peer_median_gbps"`
	Server         int     `json:"server"` // the server of Src; -1 when unknown
	Evidence       string  `json:"evidence"`
}

// SlowServer is a server whose links are slower than the others'.
type SlowServer struct {
	Server    int     `json:"server"`
	Host      string  `json:"host"`
	Transport string  `json:"transport"`
	Fraction  float64 `json:"fraction"`
	Evidence  string  `json:"evidence"`
}

// SlowGroup is a group whose collectives run slower than its peer groups' over
// links that cannot be told apart (a ring over several servers of NCCL's opaque
// kernels). Fraction is the peers' transfer time over the group's.
type SlowGroup struct {
	Parallel string  `json:"parallel"`
	Group    string  `json:"group"`
	Ranks    []int   `json:"ranks"`
	Servers  []int   `json:"servers"`
	Fraction float64 `json:"fraction"`
	Evidence string  `json:"evidence"`
}

// Retransmission is an RDMA transfer that timed out and was sent again. Source
// "task" is one HCCL task row (time_us its time); "op_rdma_time" an op of a rank
// without task rows whose RDMA total passed the limit while the op took at least the
// limit on every profiled rank (msprof-analyze's rule): dst is then null and time_us
// the op's RDMA time. dst is null too for a task whose peer is in a group no
// profiled rank maps. Reports before the field have only task rows.
type Retransmission struct {
	Src    int     `json:"src"`
	Dst    *int    `json:"dst"`
	Step   int     `json:"step"`
	Op     string  `json:"op"`
	TimeUs float64 `json:"time_us"`
	Source string  `json:"source"`
}

// Check is one peer check and whether it fired.
type Check struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Fired     *bool  `json:"fired"`  // null when the check had nothing to examine
	Status    string `json:"status"` // fired, not fired, not evaluated
	Count     int    `json:"count"`
	Total     int    `json:"total"`
	Threshold string `json:"threshold"`
	Evidence  string `json:"evidence"`
	Rank      int    `json:"rank"`
	Step      int    `json:"step"`
	Op        string `json:"op"`
}

// GroupStep is one communicator's communication in one step, summed over its ranks.
type GroupStep struct {
	Group                        string  `json:"group"`
	Kind                         string  `json:"kind"`
	Step                         int     `json:"step"`
	Ranks                        int     `json:"ranks"`
	CommunicationUs              float64 `json:"communication_us"`
	CommunicationNotOverlappedUs float64 `json:"communication_not_overlapped_us"`
	StageUs                      float64 `json:"stage_us"`
	ExposedShare                 float64 `json:"exposed_share"`
}

// Pipeline is one pipeline-parallel group: its bubble against theory.
type Pipeline struct {
	Group  string `json:"group"`
	Ranks  []int  `json:"ranks"`
	Stages int    `json:"stages"`
	// StagesAtLeast says Stages is a lower bound: one stage was profiled and the
	// profile names no other member, so its place is read from its transfers
	// (docs/diagnosis.md §8.7); the theoretical bubble is then null.
	StagesAtLeast      bool     `json:"stages_at_least"`
	Microbatches       *int     `json:"microbatches"` // null when not known
	MicrobatchesSource string   `json:"microbatches_source"`
	TheoryBubble       *float64 `json:"theory_bubble"`   // null without micro-batches
	MeasuredBubble     *float64 `json:"measured_bubble"` // null when the profile does not measure it
	// StageComputingUs is each stage's mean Computing per step, null for a stage
	// not profiled; Imbalance (slowest over fastest, less 1) is null unless two
	// stages or more were profiled.
	StageComputingUs []*float64 `json:"stage_computing_us"`
	ProfiledStages   int        `json:"profiled_stages"`
	Imbalance        *float64   `json:"imbalance"`
	Note             string     `json:"note"`
}

// Hardware is the product whose peaks the links are measured against.
type Hardware struct {
	Name    string `json:"name"`
	Assumed bool   `json:"assumed"`
	// Source says what the product was taken from (a profile fact, an option, or
	// "assumed: ...").
	Source    string             `json:"source"`
	PeaksGBps map[string]float64 `json:"peaks_gbps"`
}

// Finding is a finding in the JSON contract.
type Finding struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Title    string `json:"title"`
	Evidence string `json:"evidence"`
	Refs     []Ref  `json:"refs"`
}

// Ref points a finding at a rank, a step and, when it has one, an op.
type Ref struct {
	Rank    int     `json:"rank"`
	Step    int     `json:"step"`
	Op      string  `json:"op,omitempty"`
	StartUs float64 `json:"start_us,omitempty"`
	DurUs   float64 `json:"dur_us,omitempty"`
}

// Recommendation is a change to make, with its predicted effect.
type Recommendation struct {
	ID          string    `json:"id"`
	Knob        string    `json:"knob"`
	Value       string    `json:"value"`
	Apply       string    `json:"apply"`
	Predicted   Predicted `json:"predicted"`
	GainUs      float64   `json:"gain_us"`
	Confidence  string    `json:"confidence"`
	Hypothesis  bool      `json:"hypothesis"`
	Assumptions []string  `json:"assumptions"`
	Risks       []string  `json:"risks"`
}

// Predicted is a recommendation's predicted step (µs) and comm_share.
type Predicted struct {
	StepTimeUs float64 `json:"step_time_us"`
	CommShare  float64 `json:"comm_share"`
	Low        float64 `json:"low"`
	High       float64 `json:"high"`
}

// Gate is one --fail-on gate and its outcome.
type Gate struct {
	Expr      string   `json:"expr"`
	Metric    string   `json:"metric"`
	Op        string   `json:"op"`
	Value     *float64 `json:"value"` // null when the run has no value for the metric
	Threshold float64  `json:"threshold"`
	Passed    bool     `json:"passed"`
}

// Advice is the JSON of `hcclprof advise`: the diagnosis, every finding and the
// recommendations, without the rest of the report.
type Advice struct {
	SchemaVersion   int              `json:"schema_version"`
	Diagnosis       *Diagnosis       `json:"diagnosis"` // null when no advice was computed
	Findings        []Finding        `json:"findings"`
	Recommendations []Recommendation `json:"recommendations"`
}

// ExpertGroup is one expert-parallel group's AlltoAll(v) traffic per rank: the rank
// moving the most bytes (the slowest expert's), its bytes and its time moving data
// over the group's median, and whether it waits least (the others wait for it).
type ExpertGroup struct {
	Group         string       `json:"group"`
	HotRank       *int         `json:"hot_rank"` // null when no rank's bytes are known
	BytesSkew     float64      `json:"bytes_skew"`
	MovingSkew    float64      `json:"moving_skew"`
	HotWaitsLeast bool         `json:"hot_waits_least"`
	Ranks         []ExpertRank `json:"ranks"`
}

// ExpertRank is one rank's AlltoAll(v) in an expert-parallel group, over the steps.
type ExpertRank struct {
	Rank     int     `json:"rank"`
	Ops      int     `json:"ops"`
	Bytes    int64   `json:"bytes"`
	ElapseUs float64 `json:"elapse_us"`
	MovingUs float64 `json:"moving_us"`
	WaitUs   float64 `json:"wait_us"`
}
