package profile

import (
	"strconv"
	"strings"
)

// DataTypeSize is the element size in bytes of an HCCL data type name as the
// profiler writes it (FP32, BFP16, INT8, ...); 0 when unknown.
func DataTypeSize(dataType string) int {
	switch strings.ToUpper(strings.TrimSpace(dataType)) {
	case "INT8", "UINT8", "FP8", "HIF8", "FP8E4M3", "FP8E5M2", "BOOL": // BOOL: PyTorch's, in Kineto traces
		return 1
	case "INT16", "UINT16", "FP16", "BFP16", "BF16":
		return 2
	case "INT32", "UINT32", "FP32", "FLOAT", "FLOAT32":
		return 4
	case "INT64", "UINT64", "FP64", "DOUBLE":
		return 8
	case "INT128":
		return 16
	}
	return 0
}

// OpType normalises an HCCL op name to its lower-case type, msprof-analyze's rule:
// "hcom_allReduce__586_0_1" → "allreduce"; a name not starting with hcom gives its
// first token ("Default/AllReduce-op534_0" → "default/allreduce-op534").
func OpType(name string) string {
	tokens := strings.Split(strings.ToLower(name), "_")
	if len(tokens) > 1 && tokens[0] == "hcom" {
		return tokens[1]
	}
	// Graph-mode names such as "Default/AllReduce-op534_0": take the op after the scope.
	t := tokens[0]
	if i := strings.LastIndexByte(t, '/'); i >= 0 {
		t = t[i+1:]
	}
	if i := strings.IndexByte(t, '-'); i >= 0 {
		t = t[:i]
	}
	return t
}

// IsP2P reports whether an op is point-to-point (send, receive, batchSendRecv): the
// union of the rules torch_npu and msprof-analyze use.
func IsP2P(name string) bool {
	l := strings.ToLower(name)
	return strings.Contains(l, "send") || strings.Contains(l, "receive") || strings.Contains(l, "recv")
}

// isReceive reports whether an op counts toward Bubble: ops whose name starts with
// hcom_receive (batchSendRecv does not count, as in torch_npu).
func isReceive(name string) bool { return strings.HasPrefix(name, "hcom_receive") }

// IsReceiveOp is isReceive for an op of either library: HCCL's by its name, an NCCL
// kernel's by its type. NCCL runs a send, a receive and an all-to-all alike as
// ncclDevKernel_SendRecv; PyTorch's "Collective name" (recv), which the Kineto reader
// makes the op's type, says which it is. A receive kernel waits on the GPU for its
// peer's data as hcom_receive does, so its time is the pipeline's Bubble too. A
// batch_isend_irecv's kernel (a send and a receive at once) holding a receive is typed
// "receive" by the Kineto reader and counts alike; HCCL's batchSendRecv does not, as
// torch_npu does not count it.
func IsReceiveOp(name, typ string) bool {
	return isReceive(name) || typ == "receive" && strings.HasPrefix(name, "nccl")
}

// GroupIDFromName returns the 3-digit group id inside an op name
// ("hcom_allReduce__586_0_1" → "586"), or "" when the name has none.
func GroupIDFromName(name string) string {
	i := strings.Index(name, "__")
	if i < 0 {
		return ""
	}
	rest := name[i+2:]
	if j := strings.IndexByte(rest, '_'); j >= 0 {
		rest = rest[:j]
	}
	if _, err := strconv.Atoi(rest); err != nil {
		return ""
	}
	return rest
}

// DoubleHash is msprof's group hash: the @suffix of op keys in communication.json is
// DoubleHash(raw HCCL group name) in decimal. Characters are Unicode code points.
func DoubleHash(s string) uint64 {
	var h0, h1 uint32
	for _, r := range s {
		h0 = h0*29 + uint32(r)
		h1 = h1*131 + uint32(r)
	}
	return uint64(h0)<<32 | uint64(h1)
}

// BusBandwidthFactor is the nccl-tests factor turning algorithm bandwidth into bus
// bandwidth for an op type over p ranks.
func BusBandwidthFactor(opType string, p int) float64 {
	if p <= 1 {
		return 0
	}
	fp := float64(p)
	switch opType {
	case "allreduce":
		return 2 * (fp - 1) / fp
	case "allgather", "reducescatter", "alltoall", "alltoallv", "alltoallvc":
		return (fp - 1) / fp
	default: // broadcast, reduce, send, receive, batchsendrecv
		return 1
	}
}
