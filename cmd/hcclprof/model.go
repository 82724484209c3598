package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hcclprof/hcclprof/advisor/costmodel"
	"github.com/hcclprof/hcclprof/analysis/hardware"
	"github.com/hcclprof/hcclprof/internal/units"
	"github.com/hcclprof/hcclprof/report"
)

type modelFlags struct {
	op, algo, size, product, format string
	ranks, servers, npus            int
	alphaUs, bwGBps, gammaGBps      float64
	buffsizeMB                      int
	width                           int
	deterministic, noRDMALite       bool
}

func newModelCmd() *cobra.Command {
	var f modelFlags
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Price a collective with the α-β-γ cost model, or ask which algorithm HCCL would pick",
		Long: `Model prices one collective: T = a·α + b·n·β + c·n·γ for the algorithm, with
HCCL_BUFFSIZE rounds. With --product and --servers it gives HCCL's own level-1 choice
(A2: per op by its α-β model and pipeline rules; 910A and A3: the fixed server-count
rule; AlltoAll: the staged path) and the cost of the two-level execution with the
product's figures, level 0 as HCCL runs it there (910A: the 8P ring; A2: the mesh).

Sizes accept KiB/MiB/GiB, and KB/MB/GB as the same binary units (HCCL reads MB as MiB);
bandwidths are decimal GB/s.`,
		Example: `  hcclprof model --op allreduce --algo ring --ranks 8 --size 256MiB --alpha-us 20 --bw-gbps 18.3
  hcclprof model --op allreduce --product a2 --servers 4 --size 64MiB --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			width, err := textWidth(cmd, f.width, false)
			if err != nil {
				return err
			}
			doc, err := f.run()
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			doc.Width = width
			if f.format == "json" {
				err = report.WriteModelJSON(cmd.OutOrStdout(), doc)
			} else {
				err = report.WriteModelText(cmd.OutOrStdout(), doc)
			}
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	registerWidth(fl, &f.width)
	fl.StringVar(&f.op, "op", "allreduce", "allreduce, allgather, reducescatter, broadcast, reduce, alltoall")
	fl.StringVar(&f.algo, "algo", "", "ring, mesh, mesh-oneshot, rhd (H-D_R), nhr, nb, tree, doubling, bruck, pairwise")
	fl.IntVar(&f.ranks, "ranks", 0, "ranks in the group (with --algo)")
	fl.StringVar(&f.size, "size", "", "the op's bytes: the vector (AllReduce, Broadcast, Reduce) or the total (AllGather, ReduceScatter, AlltoAll)")
	fl.Float64Var(&f.alphaUs, "alpha-us", 0, "α: latency per step in µs")
	fl.Float64Var(&f.bwGBps, "bw-gbps", 0, "the link bandwidth behind β, decimal GB/s")
	fl.Float64Var(&f.gammaGBps, "gamma-gbps", 0, "the reduction bandwidth behind γ, GB/s (0: free)")
	fl.IntVar(&f.buffsizeMB, "buffsize-mb", 0, "HCCL_BUFFSIZE in MB = MiB (0: no rounds)")
	fl.StringVar(&f.product, "product", "", "910A, A2 or A3: HCCL's choice and cost with the product's figures")
	fl.IntVar(&f.servers, "servers", 0, "servers (with --product)")
	fl.IntVar(&f.npus, "npus-per-server", 0, "NPUs per server (with --product; default the product's)")
	fl.BoolVar(&f.deterministic, "deterministic", false, "HCCL_DETERMINISTIC=true (with --product)")
	fl.BoolVar(&f.noRDMALite, "no-rdma-lite", false, "the NIC lacks RDMA-lite (raises HCCL's pipeline thresholds)")
	fl.StringVar(&f.format, "format", "text", "text or json")
	return cmd
}

func (f modelFlags) run() (report.ModelDoc, error) {
	if f.format != "text" && f.format != "json" {
		return report.ModelDoc{}, fmt.Errorf("unknown --format %q: want text or json", f.format)
	}
	if f.size == "" {
		return report.ModelDoc{}, errors.New("--size is required")
	}
	n, err := units.ParseSize(f.size)
	if err != nil {
		return report.ModelDoc{}, err
	}
	buffer := int64(f.buffsizeMB) << 20
	if f.product == "" {
		if f.algo == "" || f.ranks < 2 || f.bwGBps <= 0 {
			return report.ModelDoc{}, errors.New("give --algo, --ranks (≥ 2) and --bw-gbps (and --alpha-us), or --product and --servers")
		}
		c, err := costmodel.Model(f.op, f.algo, f.ranks, n, costmodel.Link{AlphaUs: f.alphaUs, BWGBps: f.bwGBps, GammaBWGBps: f.gammaGBps}, buffer)
		return report.ModelDoc{Cost: c}, err
	}
	hw, err := hardware.Lookup(f.product)
	if err != nil {
		return report.ModelDoc{}, err
	}
	if f.servers < 1 {
		return report.ModelDoc{}, errors.New("--servers is required with --product")
	}
	pl := f.npus
	if pl == 0 {
		pl = hw.ServerNPUs
	}
	if buffer == 0 {
		buffer = 200 << 20 // HCCL_BUFFSIZE's default
	}
	intra := costmodel.Link{AlphaUs: hw.Level0LatencyUs, BWGBps: hw.PeakGBps["HCCS"], GammaBWGBps: f.gammaGBps}
	inter := costmodel.Link{AlphaUs: hw.Level1LatencyUs, BWGBps: hw.PeakGBps["RDMA"], GammaBWGBps: f.gammaGBps}
	doc := report.ModelDoc{Product: hw.Name, Servers: f.servers}
	op := costmodel.NormaliseOp(f.op)
	// HCCL counts the per-rank piece for AllGather and ReduceScatter.
	curSize := n
	if op == "allgather" || op == "reducescatter" {
		curSize = n / int64(pl*f.servers)
	}
	ch, err := costmodel.SelectLevel1(hw.Name, op, pl, f.servers, curSize, buffer, f.deterministic, !f.noRDMALite)
	if err != nil {
		return doc, err
	}
	doc.Choice = &ch
	level1 := ch.Algo
	if level1 == "none" {
		level1 = "ring"
	}
	level0 := costmodel.DefaultLevel0(hw.Name, pl)
	topo := costmodel.Topology{RanksPerServer: pl, Servers: f.servers, Level1: level1, Level0: level0, Level0Source: "HCCL default", Intra: intra, Inter: inter, Product: hw.Name}
	doc.Cost, err = topo.OpCost(op, curSize, buffer)
	if err != nil {
		return doc, err
	}
	doc.Notes = append(doc.Notes, fmt.Sprintf("level 0 (in-server): HCCL's %s for %d NPUs on %s", level0, pl, hw.Name),
		fmt.Sprintf("%s figures: intra α %.0f µs, HCCS %.1f GB/s; inter α %.0f µs, RoCE %.1f GB/s (priors; hcclprof calibrate fits them on a run)",
			hw.Name, intra.AlphaUs, intra.BWGBps, inter.AlphaUs, inter.BWGBps))
	return doc, err
}
