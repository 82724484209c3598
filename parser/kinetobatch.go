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
// cuLaunchKernelEx, ...).
type kinetoLaunch struct {
	tid, tsNs, corr int64
}

func (st *kinetoState) p2pRecord(tid, ts []byte, ext int64, p commParams) error {
	t, err := timeNs(ts)
	if err != nil {
		return err
	}
	st.p2pRecords = append(st.p2pRecords, p2pRecord{tid: tidNumber(tid), tsNs: t, extID: ext, params: p})
	return nil
}

func (st *kinetoState) launch(tid, ts, args []byte) error {
	corr := int64(-1)
	it := jsonx.NewObjIter(args)
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		if string(k) == "correlation" {
			if n, err := strconv.ParseInt(string(rawStringBody(v)), 10, 64); err == nil {
				corr = n
			}
			break
		}
	}
	if corr < 0 {
		return nil
	}
	t, err := timeNs(ts)
	if err != nil {
		return err
	}
	st.launches = append(st.launches, kinetoLaunch{tid: tidNumber(tid), tsNs: t, corr: corr})
	return nil
}

// tidNumber is a thread id written as a number or a string; -1 otherwise (one
// anonymous thread).
func tidNumber(v []byte) int64 {
	n, err := strconv.ParseInt(string(bytes.TrimSpace(rawStringBody(v))), 10, 64)
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
	if len(st.p2pRecords) == 0 || len(st.launches) == 0 {
		return nil
	}
	linked := map[int64]bool{}
	var cands []int
	for i, k := range st.kernels {
		own := k.params.collective != "" || k.params.pgName != ""
		_, rec := st.params[k.extID]
		switch {
		case own || (k.extID >= 0 && rec && k.extID != k.corr):
			linked[k.extID] = true
		case k.corr >= 0:
			if t, _, _ := ncclKernelInfo(k.name); t == "sendrecv" {
				cands = append(cands, i)
			}
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
	for _, l := range st.launches {
		if want[l.corr] {
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
