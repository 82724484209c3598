package profile

// BenchPoint is one timing of a collective benchmark sweep (nccl-tests, hccl_test,
// or a table of op, ranks, bytes and time): what a team measures of its own
// cluster to make the cost model theirs.
type BenchPoint struct {
	// Op is the collective, normalised: allreduce, allgather, reducescatter,
	// broadcast, reduce, alltoall.
	Op    string
	Ranks int
	// Bytes is the op's n as the cost model counts it: the vector for AllReduce,
	// Broadcast and Reduce, the total (every rank's piece) for AllGather,
	// ReduceScatter and AlltoAll.
	Bytes int64
	// TimeUs is the benchmark's time for one op (nccl-tests: out-of-place).
	TimeUs float64
	// Source is the file and line the point was read from.
	Source string
}

// BenchSizeSemantics says how a benchmark counts an AllGather's, ReduceScatter's or
// AlltoAll's size: SizeTotal (nccl-tests: every rank's piece) or SizePerRank
// (hccl_test's data_size on one NPU: the piece).
type BenchSizeSemantics string

const (
	SizeTotal   BenchSizeSemantics = "total"
	SizePerRank BenchSizeSemantics = "per-rank"
)
