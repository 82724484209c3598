package parser

import (
	"bytes"
	"cmp"
	"slices"
	"strconv"

	"github.com/hcclprof/hcclprof/internal/jsonx"
)

// A batch of sends and receives issued by torch.distributed.batch_isend_irecv (as
// Megatron's default non-interleaved 1F1B schedule issues its pipeline traffic) is
// traced by the PyTorch profiler apart from its kernel:
//
//   - each send and recv of the batch records its record_param_comms cpu_op
//     ("Collective name" send or recv, the process group, the message size), but its
//     scope ends once the op is registered with NCCL (ProcessGroupNCCL::send/recv,
//     inside startCoalescing);
//   - NCCL runs the whole batch as one grouped kernel (ncclDevKernel_SendRecv),
//     launched by ncclGroupEnd in ProcessGroupNCCL::endCoalescing under the
//     "nccl:coalesced" user annotation, with no cpu_op around the launch;
//   - Kineto copies collective arguments onto a kernel only from a linked
//     record_param_comms, so the kernel has none; an unlinked kernel's (and its
//     launch's) External id is its own correlation id.
//
// The batch's records are found from the kernel's launch: the CUDA launch call with
// the kernel's correlation id, on the thread that recorded them; its records are the
// thread's sends and receives that no kernel is linked to, recorded after the
// previous such launch and before this one.

// p2pRecord is one send's or receive's record_param_comms.
type p2pRecord struct {
	tid, tsNs, extID int64
	params           commParams
}

// kinetoLaunch is one CUDA launch call (cudaLaunchKernel, cudaLaunchKernelExC,
// cuLaunchKernelEx, ...); seq is its number among the trace's events: of two launches
// with one correlation id, the later is taken.
type kinetoLaunch struct {
	tid, tsNs, corr int64
	seq             int
}

// launchSet holds the launch calls that may be a batched kernel's. A trace has a
// launch call per kernel, nearly all of them compute kernels': held to the end of the
// parse, they doubled what a 100 MB trace's parse allocated. A launch call other than
// a graph's launches one kernel, linked to it by the correlation id, and the two
// stand next to each other in the file (Kineto writes the kernel, then its launch, as
// in the real sample; hcclprof gen the launch, then its kernel). So a launch whose
// kernel is read within launchWindow launches or kernels of it is held only when that
// kernel may be a batch's (mayBeBatched), and one that meets its kernel no sooner is
// held anyway: the order of the events changes what is held, never the result. A
// graph launch (cudaGraphLaunch) is held: the graph's kernels share its correlation id.
type launchSet struct {
	kept   []kinetoLaunch
	open   []kinetoLaunch               // the last launches read whose kernel was not, oldest first
	recent [launchWindow]launchedKernel // the last kernels read, a ring
	n      int                          // kernels read
}

// launchWindow is how many launches wait for their kernel, and how many kernels for
// their launch.
const launchWindow = 8

// launchedKernel is a kernel as launchSet needs it: its correlation id, and whether it
// may be a batch's.
type launchedKernel struct {
	corr    int64
	batched bool
}

// addLaunch takes a launch call read; graph is a graph launch's.
func (s *launchSet) addLaunch(l kinetoLaunch, graph bool) {
	if graph {
		s.kept = append(s.kept, l)
		return
	}
	for _, k := range s.recent[:min(s.n, launchWindow)] {
		if k.corr == l.corr {
			if k.batched {
				s.kept = append(s.kept, l)
			}
			return
		}
	}
	if len(s.open) == launchWindow {
		s.kept = append(s.kept, s.open[0])
		s.open = slices.Delete(s.open, 0, 1)
	}
	s.open = append(s.open, l)
}

// addKernel takes a kernel read: the launch waiting for it is kept or dropped.
func (s *launchSet) addKernel(corr int64, batched bool) {
	if corr < 0 {
		return
	}
	for i := len(s.open) - 1; i >= 0; i-- {
		if s.open[i].corr == corr {
			if batched {
				s.kept = append(s.kept, s.open[i])
			}
			s.open = slices.Delete(s.open, i, i+1)
			break
		}
	}
	s.recent[s.n%launchWindow] = launchedKernel{corr: corr, batched: batched}
	s.n++
}

// all are the launches kept and those still waiting.
func (s *launchSet) all() []kinetoLaunch { return append(s.kept, s.open...) }

// mayBeBatched reports whether a kernel may be a batch_isend_irecv's: an NCCL
// SendRecv kernel with a correlation id and no collective arguments of its own
// (batchedP2P then also asks that no record_param_comms be linked to it).
func (k *kinetoKernel) mayBeBatched() bool {
	if k.corr < 0 || k.params.collective != "" || k.params.pgName != "" {
		return false
	}
	t, _, _ := ncclKernelInfo(k.name)
	return t == "sendrecv"
}

// correlationMember walks the members of an event's args, from after its '{' to
// after its '}', and returns the first "correlation" (-1 when absent or not an
// integer), the CUPTI id that links a kernel to its launch call.
func correlationMember(it *jsonx.ObjIter) int64 {
	corr, found := int64(-1), false
	for {
		k, v, ok := it.Next()
		if !ok {
			return corr
		}
		if !found && string(k) == "correlation" {
			found = true
			if n, ok := jsonx.OptInt(v); ok {
				corr = n
			}
		}
	}
}

func (st *kinetoState) p2pRecord(tid, ts []byte, ext int64, p commParams) error {
	t, err := timeNs(ts)
	if err != nil {
		return err
	}
	st.p2pRecords = append(st.p2pRecords, p2pRecord{tid: tidNumber(tid), tsNs: t, extID: ext, params: p})
	return nil
}

func (st *kinetoState) launch(tid, ts, name []byte, corr int64) error {
	if corr < 0 {
		return nil
	}
	t, err := timeNs(ts)
	if err != nil {
		return err
	}
	st.launches.addLaunch(kinetoLaunch{tid: tidNumber(tid), tsNs: t, corr: corr, seq: st.events}, bytes.Contains(name, []byte("Graph")))
	return nil
}

// tidNumber is a thread id written as a number or a string; -1 otherwise (one
// anonymous thread).
func tidNumber(v []byte) int64 {
	n, err := strconv.ParseInt(string(bytes.TrimSpace(jsonx.RawStringBody(v))), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// batchedP2P gives the arguments of each batch_isend_irecv kernel (by its index in
// st.kernels) from its batch's records. A batch holding a receive is a receive: NCCL
// runs its sends and receives together and the kernel ends when the last transfer
// does, so the time it spends waiting on the GPU is the wait for the peer's data, as
// a lone receive's is (a stage of the 1F1B schedule waits there for its neighbour).
// Its size is what the batch receives. A batch of sends only is a send.
func (st *kinetoState) batchedP2P() map[int]commParams {
	launches := st.launches.all()
	if len(st.p2pRecords) == 0 || len(launches) == 0 {
		return nil
	}
	linked := map[int64]bool{}
	var cands []int
	for i := range st.kernels {
		k := &st.kernels[i]
		own := k.params.collective != "" || k.params.pgName != ""
		_, rec := st.params[k.extID]
		switch {
		case own || (k.extID >= 0 && rec && k.extID != k.corr):
			linked[k.extID] = true
		case k.mayBeBatched():
			cands = append(cands, i)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	launchOf := make(map[int64]kinetoLaunch, len(cands))
	want := map[int64]bool{}
	for _, i := range cands {
		want[st.kernels[i].corr] = true
	}
	for _, l := range launches {
		if prev, ok := launchOf[l.corr]; want[l.corr] && (!ok || l.seq > prev.seq) {
			launchOf[l.corr] = l
		}
	}
	// Per thread: the unlinked records and the batched launches, in time order.
	recs := map[int64][]p2pRecord{}
	for _, r := range st.p2pRecords {
		if !linked[r.extID] {
			recs[r.tid] = append(recs[r.tid], r)
		}
	}
	type batch struct {
		kernel int
		l      kinetoLaunch
	}
	byThread := map[int64][]batch{}
	for _, i := range cands {
		if l, ok := launchOf[st.kernels[i].corr]; ok {
			byThread[l.tid] = append(byThread[l.tid], batch{i, l})
		}
	}
	out := map[int]commParams{}
	for tid, bs := range byThread {
		rs := recs[tid]
		slices.SortFunc(rs, func(a, b p2pRecord) int { return cmp.Compare(a.tsNs, b.tsNs) })
		slices.SortFunc(bs, func(a, b batch) int { return cmp.Compare(a.l.tsNs, b.l.tsNs) })
		j := 0
		for _, b := range bs {
			start := j
			for j < len(rs) && rs[j].tsNs <= b.l.tsNs {
				j++
			}
			if p, ok := batchParams(rs[start:j]); ok {
				out[b.kernel] = p
			}
		}
	}
	return out
}

// batchParams are a batch's arguments: its receives' (their elements summed), or its
// sends' when it receives nothing.
func batchParams(rs []p2pRecord) (commParams, bool) {
	var p commParams
	typ := "send"
	for _, r := range rs {
		if torchCollectiveType(r.params.collective) == "receive" {
			typ = "receive"
		}
	}
	n := int64(0)
	for _, r := range rs {
		if torchCollectiveType(r.params.collective) != typ {
			continue
		}
		if n == 0 && p.collective == "" {
			p = r.params
		}
		n += max(r.params.inN, r.params.outN)
	}
	if p.collective == "" {
		return p, false
	}
	p.inN, p.outN = n, n
	return p, true
}
