package main

import (
	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/internal/driver"
)

func newModelCmd(in invocation) *cobra.Command {
	var f driver.ModelFlags
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Price a collective with the α-β-γ cost model, or ask which algorithm HCCL would pick",
		Long: `Model prices one collective: T = a·α + b·n·β + c·n·γ for the algorithm, with
HCCL_BUFFSIZE rounds. With --product and --servers it gives HCCL's own level-1 choice
(A2: per op by its α-β model and pipeline rules; 910A: the fixed server-count rule;
AlltoAll: the staged path) and the cost of the two-level execution with the
product's figures, level 0 as HCCL runs it there (910A: the 8P ring; A2: the mesh).
A3 is priced as one super-node: the vector-core path under HCCL's entry sizes with
--expansion AIV, else the AI-CPU expansion; one die's UB ceiling; SIO for the die pair.

Sizes accept KiB/MiB/GiB, and KB/MB/GB as the same binary units (HCCL reads MB as MiB);
bandwidths are decimal GB/s.`,
		Example: `  hcclprof model --op allreduce --algo ring --ranks 8 --size 256MiB --alpha-us 20 --bw-gbps 18.3
  hcclprof model --op allreduce --product a2 --servers 4 --size 64MiB --format json
  hcclprof model --op allgather --product a3 --servers 1 --npus-per-server 8 --size 4MiB --expansion AIV`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return driver.Model(in.env(cmd), f)
		},
	}
	fl := cmd.Flags()
	registerWidth(fl, &f.Width)
	fl.StringVar(&f.Op, "op", "allreduce", "allreduce, allgather, reducescatter, broadcast, reduce, alltoall")
	fl.StringVar(&f.Algo, "algo", "", "ring, mesh, mesh-oneshot, rhd (H-D_R), nhr, nb, tree, doubling, bruck, pairwise")
	fl.IntVar(&f.Ranks, "ranks", 0, "ranks in the group (with --algo)")
	fl.StringVar(&f.Size, "size", "", "the op's bytes: the vector (AllReduce, Broadcast, Reduce) or the total (AllGather, ReduceScatter, AlltoAll)")
	finiteFloat64Var(fl, &f.AlphaUs, "alpha-us", 0, "α: latency per step in µs")
	finiteFloat64Var(fl, &f.BWGBps, "bw-gbps", 0, "the link bandwidth behind β, decimal GB/s")
	finiteFloat64Var(fl, &f.GammaGBps, "gamma-gbps", 0, "the reduction bandwidth behind γ, GB/s (0: free)")
	fl.IntVar(&f.BuffsizeMB, "buffsize-mb", 0, "HCCL_BUFFSIZE in MB = MiB (0: no rounds)")
	fl.StringVar(&f.Product, "product", "", "910A, A2 or A3: HCCL's choice and cost with the product's figures; H100 or A100: NCCL's")
	fl.IntVar(&f.Servers, "servers", 0, "servers (with --product)")
	fl.IntVar(&f.NPUs, "npus-per-server", 0, "NPUs per server (with --product; default the product's)")
	fl.BoolVar(&f.Deterministic, "deterministic", false, "HCCL_DETERMINISTIC=true (with --product)")
	fl.BoolVar(&f.NoRDMALite, "no-rdma-lite", false, "the NIC lacks RDMA-lite (raises HCCL's pipeline thresholds)")
	fl.StringVar(&f.Expansion, "expansion", "", "HCCL_OP_EXPANSION_MODE on A3: AI_CPU (the default) or AIV")
	fl.BoolVar(&f.InterRoCE, "inter-roce", false, "A3 servers joined by RoCE (other super-nodes, or HCCL_INTER_HCCS_DISABLE=TRUE), not HCCS")
	registerFormat(cmd, &f.Format)
	fl.StringVar(&f.Calibration, "calibration", "", "price the op from a calibration file written by 'calibrate --bench' (with --op, --ranks, --size)")
	return cmd
}
