package advisor

import (
	"regexp"
	"sort"
)

// Knob is one setting the advisor may name. The table below is the allowlist: a test
// fails when any advice names an HCCL_* variable (or a framework knob) that is not in
// it, so the seed article's invented variables can never reach a user.
type Knob struct {
	Name string
	// Kind is "env" (an environment variable), "communicator" (torch_npu pg_options
	// hccl_config, HcclCommConfig), "framework" (a framework's own argument) or
	// "code" (a change to the training script: no setting does it).
	Kind      string
	Framework string // for framework knobs: pytorch-ddp, deepspeed, megatron, mindspore, tensorflow
	Values    string
	Default   string
	Products  []string // Ascend products it applies to; empty = all
	Source    string   // where it is documented (docs/costmodel.md section and upstream)
	// Tuning is false for reliability or placement settings that must never be
	// recommended for performance (timeouts, retries, RDMA QoS outside the switch plan).
	Tuning bool
}

// Knobs is every setting the advisor may name (docs/costmodel.md §2.1, §6, §7).
var Knobs = []Knob{
	{Name: "HCCL_BUFFSIZE", Kind: "env", Values: "integer MB ≥ 1", Default: "200", Tuning: true,
		Source: "docs/costmodel.md §2.1; hcomm externalinput.cc ParseCclBufferSize; each communicator takes 2 × the value"},
	{Name: "HCCL_ALGO", Kind: "env", Values: `per op: "<op>=level0:NA;level1:<ring|H-D_R|NHR|NHR_V1|NB|AHC|AHC_BROKE|pipeline|pairwise>"`, Default: "unset (automatic)",
		Products: []string{"910A", "A2", "A3"}, Tuning: true,
		Source: "docs/costmodel.md §2.1, §7.3 (a last resort, per op only)"},
	{Name: "HCCL_OP_EXPANSION_MODE", Kind: "env", Values: "A2: HOST, HOST_TS, AI_CPU, AIV; A3: AI_CPU, AICPU_CacheDisable, AIV", Default: "A2 HOST, A3 AI_CPU",
		Products: []string{"A2", "A3"}, Tuning: true, Source: "docs/costmodel.md §2.1"},
	{Name: "HCCL_DETERMINISTIC", Kind: "env", Values: "false, true, strict", Default: "false", Products: []string{"A2", "A3"}, Tuning: true,
		Source: "docs/costmodel.md §2.1 (true disables A2 pipeline)"},
	{Name: "HCCL_RDMA_QPS_PER_CONNECTION", Kind: "env", Values: "1–32 (≤ 8 advised)", Default: "1", Products: []string{"A2", "A3"}, Tuning: true,
		Source: "docs/costmodel.md §2.1"},
	{Name: "HCCL_MULTI_QP_THRESHOLD", Kind: "env", Values: "1–8192 KB", Default: "512", Products: []string{"A2", "A3"}, Tuning: true,
		Source: "docs/costmodel.md §2.1"},
	{Name: "HCCL_RDMA_TC", Kind: "env", Values: "0–255, multiple of 4", Default: "132", Source: "docs/costmodel.md §2.1, §7.5 (match the switch DSCP plan only)"},
	{Name: "HCCL_RDMA_SL", Kind: "env", Values: "0–7", Default: "4", Source: "docs/costmodel.md §2.1, §7.5 (must match the NIC's PFC priority)"},
	{Name: "HCCL_RDMA_TIMEOUT", Kind: "env", Values: "A2/A3: 5–20", Default: "20", Source: "docs/costmodel.md §2.1 (reliability)"},
	{Name: "HCCL_RDMA_RETRY_CNT", Kind: "env", Values: "1–7", Default: "7", Source: "docs/costmodel.md §2.1 (reliability)"},
	{Name: "HCCL_CONNECT_TIMEOUT", Kind: "env", Values: "120–7200 s", Default: "120", Source: "docs/costmodel.md §2.1 (reliability)"},
	{Name: "HCCL_EXEC_TIMEOUT", Kind: "env", Values: "seconds", Default: "1836", Source: "docs/costmodel.md §2.1 (reliability)"},
	{Name: "HCCL_EVENT_TIMEOUT", Kind: "env", Values: "seconds", Default: "torch_npu's", Source: "docs/costmodel.md §2.4 (torch_npu watchdog; reliability)"},
	{Name: "HCCL_INTER_HCCS_DISABLE", Kind: "env", Values: "TRUE, FALSE", Default: "FALSE", Products: []string{"A3"}, Source: "docs/costmodel.md §2.1"},
	{Name: "HCCL_DEBUG_CONFIG", Kind: "env", Values: "ALG,TASK,RESOURCE", Default: "unset", Source: "docs/costmodel.md §2.1 (ALG logs the chosen algorithm)"},
	{Name: "ASCEND_LAUNCH_BLOCKING", Kind: "env", Values: "0, 1", Default: "0", Source: "docs/diagnosis.md §6 (msprof-analyze environment check); docs/costmodel.md §2.4"},
	{Name: "ASCEND_GLOBAL_LOG_LEVEL", Kind: "env", Values: "0–4 (3 = error)", Default: "3", Source: "docs/diagnosis.md §6 (msprof-analyze environment check)"},
	{Name: "TASK_QUEUE_ENABLE", Kind: "env", Values: "0, 1, 2", Default: "1", Source: "docs/costmodel.md §2.4 (torch_npu)"},
	{Name: "hccl_buffer_size", Kind: "communicator", Values: "MB", Default: "HCCL_BUFFSIZE or 200", Tuning: true,
		Source: "docs/costmodel.md §6.8 (torch_npu ProcessGroupHCCL.Options().hccl_config, per group)"},
	{Name: "bucket_cap_mb", Kind: "framework", Framework: "pytorch-ddp", Values: "MiB", Default: "25", Tuning: true,
		Source: "docs/costmodel.md §6.3 (torch.nn.parallel.DistributedDataParallel)"},
	{Name: "static_graph", Kind: "framework", Framework: "pytorch-ddp", Values: "True, False", Default: "False", Tuning: true,
		Source: "docs/costmodel.md §6.3 (buckets fixed after the first iteration, no re-bucketing overhead)"},
	{Name: "find_unused_parameters", Kind: "framework", Framework: "pytorch-ddp", Values: "True, False", Default: "False", Tuning: true,
		Source: "docs/costmodel.md §6.3 (True adds a graph traversal every step)"},
	{Name: "no_sync", Kind: "framework", Framework: "pytorch-ddp", Values: "context manager on accumulation micro-batches", Default: "off", Tuning: true,
		Source: "docs/costmodel.md §6.2, §6.3"},
	{Name: "gradient_accumulation_steps", Kind: "framework", Framework: "deepspeed", Values: "integer ≥ 1", Default: "1", Tuning: true,
		Source: "docs/costmodel.md §6.4"},
	{Name: "reduce_bucket_size", Kind: "framework", Framework: "deepspeed", Values: "elements", Default: "5e8", Tuning: true, Source: "docs/costmodel.md §6.4"},
	{Name: "allgather_bucket_size", Kind: "framework", Framework: "deepspeed", Values: "elements", Default: "5e8", Tuning: true, Source: "docs/costmodel.md §6.4 (ZeRO-1/2's parameter AllGather bucket)"},
	{Name: "stage3_prefetch_bucket_size", Kind: "framework", Framework: "deepspeed", Values: "elements (0: no prefetch)", Default: "5e7", Tuning: true,
		Source: "docs/costmodel.md §6.4 (DeepSpeed runtime/zero/config.py: ZeRO-3's parameters gathered ahead of use)"},
	{Name: "overlap_comm", Kind: "framework", Framework: "deepspeed", Values: "true, false", Default: "false (stage 3: true)", Tuning: true, Source: "docs/costmodel.md §6.4"},
	{Name: "--ddp-bucket-size", Kind: "framework", Framework: "megatron", Values: "parameters", Default: "max(40e6, 1e6 × dp)", Tuning: true, Source: "docs/costmodel.md §6.5"},
	{Name: "--overlap-grad-reduce", Kind: "framework", Framework: "megatron", Values: "flag", Default: "off", Tuning: true, Source: "docs/costmodel.md §6.5"},
	{Name: "--global-batch-size", Kind: "framework", Framework: "megatron", Values: "samples", Default: "micro-batch × dp (no accumulation)", Tuning: true,
		Source: "docs/costmodel.md §6.5 (accumulation = global_batch / (micro_batch × dp))"},
	{Name: "--grad-reduce-in-bf16", Kind: "framework", Framework: "megatron", Values: "flag", Default: "off (gradients reduced in fp32 with --accumulate-allreduce-grads-in-fp32)", Tuning: true,
		Source: "Megatron-LM arguments (the gradient reduction's data type)"},
	{Name: "communication_data_type", Kind: "framework", Framework: "deepspeed", Values: "fp32, fp16, bf16", Default: "the model's (fp32 gradients: fp32)", Tuning: true,
		Source: "DeepSpeed configuration (runtime/constants.py COMMUNICATION_DATA_TYPE)"},
	{Name: "register_comm_hook", Kind: "framework", Framework: "pytorch-ddp", Values: "a communication hook: default_hooks.bf16_compress_hook, fp16_compress_hook", Default: "none (the gradients' own type)", Tuning: true,
		Source: "torch.distributed.algorithms.ddp_comm_hooks.default_hooks"},
	{Name: "--overlap-param-gather", Kind: "framework", Framework: "megatron", Values: "flag", Default: "off", Tuning: true, Source: "docs/costmodel.md §6.5"},
	{Name: "--decoder-first-pipeline-num-layers", Kind: "framework", Framework: "megatron", Values: "layers on the first pipeline stage", Default: "even split", Tuning: true,
		Source: "Megatron-LM arguments (uneven pipeline split; the other stages share the rest)"},
	{Name: "--decoder-last-pipeline-num-layers", Kind: "framework", Framework: "megatron", Values: "layers on the last pipeline stage", Default: "even split", Tuning: true,
		Source: "Megatron-LM arguments (uneven pipeline split)"},
	{Name: "--num-layer-list", Kind: "framework", Framework: "megatron", Values: "layers per stage, comma-separated, summing to --num-layers", Default: "even split", Tuning: true,
		Source: "MindSpeed-LLM arguments (dynamic pipeline split; not with virtual pipeline stages)"},
	{Name: "--num-layers-per-virtual-pipeline-stage", Kind: "framework", Framework: "megatron", Values: "layers per virtual stage", Default: "off (no interleaving)", Tuning: true,
		Source: "Megatron-LM arguments (interleaved 1F1B: the bubble shrinks by the virtual stages per rank)"},
	{Name: "--micro-batch-size", Kind: "framework", Framework: "megatron", Values: "samples", Default: "required", Tuning: true,
		Source: "Megatron-LM arguments (micro-batches per step = global batch / (micro batch × dp))"},
	// Tensor and expert parallelism (issue 37), each checked in Megatron-LM's
	// megatron/training/arguments.py and the TransformerConfig / ModelParallelConfig
	// fields its parser turns into flags (NVIDIA/Megatron-LM d98e8a6), and in
	// MindSpeed's mindspeed/arguments.py (Ascend/MindSpeed 028de58).
	{Name: "--sequence-parallel", Kind: "framework", Framework: "megatron", Values: "flag", Default: "off", Tuning: true,
		Source: "Megatron-LM ModelParallelConfig.sequence_parallel (TP's AllReduce becomes ReduceScatter + AllGather; needs tp > 1)"},
	{Name: "--tp-comm-overlap", Kind: "framework", Framework: "megatron", Values: "flag", Default: "off", Tuning: true,
		Source: "Megatron-LM ModelParallelConfig.tp_comm_overlap (Transformer Engine userbuffers; arguments.py asserts --sequence-parallel)"},
	{Name: "--use-ascend-mc2", Kind: "framework", Framework: "megatron", Values: "flag", Default: "off", Products: []string{"A2", "A3"}, Tuning: true,
		Source: "MindSpeed mindspeed/arguments.py and features_manager/tensor_parallel/mc2.py (fused matmul + TP collective; needs --sequence-parallel and tp > 1, not with --use-ascend-coc)"},
	{Name: "--tensor-model-parallel-size", Kind: "framework", Framework: "megatron", Values: "ranks", Default: "1", Tuning: true,
		Source: "Megatron-LM ModelParallelConfig.tensor_model_parallel_size"},
	{Name: "--moe-aux-loss-coeff", Kind: "framework", Framework: "megatron", Values: "float", Default: "0.0", Tuning: true,
		Source: "Megatron-LM megatron/training/arguments.py (the load-balancing loss's weight)"},
	{Name: "--moe-router-load-balancing-type", Kind: "framework", Framework: "megatron", Values: "aux_loss, seq_aux_loss, global_aux_loss, sinkhorn, quantile_balancing, none", Default: "aux_loss", Tuning: true,
		Source: "Megatron-LM megatron/training/arguments.py"},
	{Name: "--moe-router-enable-expert-bias", Kind: "framework", Framework: "megatron", Values: "flag", Default: "off", Tuning: true,
		Source: "Megatron-LM TransformerConfig.moe_router_enable_expert_bias (aux-loss-free balancing)"},
	{Name: "--moe-expert-capacity-factor", Kind: "framework", Framework: "megatron", Values: "float (None: no token dropped)", Default: "None", Tuning: true,
		Source: "Megatron-LM TransformerConfig.moe_expert_capacity_factor"},
	{Name: "--moe-token-dispatcher-type", Kind: "framework", Framework: "megatron", Values: "allgather, alltoall, flex", Default: "allgather", Tuning: true,
		Source: "Megatron-LM TransformerConfig.moe_token_dispatcher_type"},
	{Name: "--overlap-moe-expert-parallel-comm", Kind: "framework", Framework: "megatron", Values: "flag", Default: "off", Tuning: true,
		Source: "Megatron-LM ModelParallelConfig.overlap_moe_expert_parallel_comm (one micro-batch's EP AlltoAlls beside another's compute in the 1F1B phase); TransformerConfig.__post_init__ asserts ep > 1, the alltoall or flex dispatcher, bf16/fp16, PyTorch >= 2.6, no full recomputation, a virtual pipeline when pp > 1, and not --moe-shared-expert-overlap"},
	{Name: "--delay-wgrad-compute", Kind: "framework", Framework: "megatron", Values: "flag", Default: "off", Tuning: true,
		Source: "Megatron-LM ModelParallelConfig.delay_wgrad_compute (the weight gradients moved beside the EP AlltoAlls; TransformerConfig asserts --overlap-moe-expert-parallel-comm)"},
	{Name: "--moe-shared-expert-overlap", Kind: "framework", Framework: "megatron", Values: "flag", Default: "off", Tuning: true,
		Source: "Megatron-LM TransformerConfig.moe_shared_expert_overlap (the shared experts beside the dispatcher's communication; without it they run after the routed experts)"},
	{Name: "--moe-alltoall-overlap-comm", Kind: "framework", Framework: "megatron", Values: "flag", Default: "off", Products: []string{"A2", "A3"}, Tuning: true,
		Source: "MindSpeed mindspeed/features_manager/moe/moe_alltoall_overlap.py (the dispatch/combine beside the compute that does not need them; alltoall dispatcher: --moe-grouped-gemm, turns on --moe-shared-expert-overlap with shared experts, no --moe-tp-extend-ep; alltoall_seq: --moe-permutation-async-comm, --moe-grouped-gemm, --moe-tp-extend-ep when tp > 1; not with --use-ascend-mc2)"},
	{Name: "--moe-grouped-gemm", Kind: "framework", Framework: "megatron", Values: "flag", Default: "off", Tuning: true,
		Source: "Megatron-LM TransformerConfig.moe_grouped_gemm (a rank's experts in one grouped GEMM; MindSpeed's AlltoAll overlap needs it)"},
	{Name: "--moe-pad-expert-input-to-capacity", Kind: "framework", Framework: "megatron", Values: "flag (with --moe-expert-capacity-factor)", Default: "off", Tuning: true,
		Source: "Megatron-LM TransformerConfig.moe_pad_expert_input_to_capacity (every expert's input padded to its capacity)"},
	// PyTorch FSDP's constructor arguments (torch/distributed/fsdp/fully_sharded_data_parallel.py
	// and api.py's BackwardPrefetch); FSDP2's fully_shard has no such arguments but
	// FSDPModule.set_modules_to_forward_prefetch / set_modules_to_backward_prefetch.
	{Name: "forward_prefetch", Kind: "framework", Framework: "pytorch-fsdp", Values: "True, False", Default: "False", Tuning: true,
		Source: "PyTorch FullyShardedDataParallel(forward_prefetch=...): the next layer's AllGather issued before the current forward computes"},
	{Name: "backward_prefetch", Kind: "framework", Framework: "pytorch-fsdp", Values: "BackwardPrefetch.BACKWARD_PRE, BACKWARD_POST, None", Default: "BACKWARD_PRE", Tuning: true,
		Source: "PyTorch FullyShardedDataParallel(backward_prefetch=...), torch.distributed.fsdp.BackwardPrefetch"},
	{Name: "limit_all_gathers", Kind: "framework", Framework: "pytorch-fsdp", Values: "True, False", Default: "True", Tuning: true,
		Source: "PyTorch FullyShardedDataParallel(limit_all_gathers=...): at most two layers' gathers in flight"},
	{Name: "--nproc_per_node", Kind: "framework", Framework: "pytorch", Values: "processes (ranks) per server", Default: "1", Tuning: true,
		Source: "torchrun (torch.distributed.run) launcher argument; with the devices each process may see (ASCEND_RT_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES)"},
	{Name: "comm_fusion", Kind: "framework", Framework: "mindspore", Values: `{"allreduce": {"mode": "size", "config": MB}}`, Default: "auto (64 MB)", Tuning: true,
		Source: "docs/costmodel.md §6.6 (mindspore.set_auto_parallel_context)"},
	{Name: "fuse collectives", Kind: "code", Values: "one collective over a flattened buffer instead of many small ones", Default: "one collective per tensor", Tuning: true,
		Source: "docs/costmodel.md §3.1, §6.1 (every op pays the latency α once); PyTorch torch._utils._flatten_dense_tensors, torch.distributed coalescing"},
	{Name: "fusion", Kind: "framework", Framework: "tensorflow", Values: "0, 1, 2", Default: "1", Tuning: true, Source: "docs/costmodel.md §6.7 (npu_allreduce)"},
}

// LookupKnob finds a knob by name.
func LookupKnob(name string) (Knob, bool) {
	for _, k := range Knobs {
		if k.Name == name {
			return k, true
		}
	}
	return Knob{}, false
}

// notReal maps names that do not exist (the seed article's inventions and HCCL's
// internal switches) to what to use instead (docs/costmodel.md §2.2, §2.5). The advisor
// never prints them as settings.
var notReal = map[string]string{
	"HCCL_OP_BASE_FUSION_MODE":   "framework buckets: DDP bucket_cap_mb, MindSpore comm_fusion",
	"HCCL_COMM_ALGO_SELECT":      "HCCL_ALGO",
	"HCCL_INTRA_NODE_ALGO":       "none: the intra-server algorithm is not configurable",
	"HCCL_INTER_NODE_ALGO":       "HCCL_ALGO level1",
	"HCCL_EXEC_MODE":             "HCCL_OP_EXPANSION_MODE",
	"HCCL_HCCS_FLOW_CTRL_ENABLE": "none",
	"HCCL_HCCS_QUEUE_DEPTH":      "none",
	"HCCL_ROCE_QP_NUM":           "HCCL_RDMA_QPS_PER_CONNECTION",
	"HCCL_ROCE_MTU":              "none (a NIC setting)",
	"HCCL_ROCE_BUF_SIZE":         "HCCL_BUFFSIZE",
	"HCCL_GROUP_SPLIT":           "none (an API)",
	"HCCL_INTER_NODE_DEVS":       "none",
	"HCCL_ALLREDUCE_PIPELINE":    `HCCL_ALGO="allreduce=level0:NA;level1:pipeline" (A2)`,
	"HCCL_ALLREDUCE_BUCKET_SIZE": "framework buckets",
	"HCCL_COMM_OVERLAP":          "framework overlap",
	"HCCL_TIMEOUT":               "HCCL_EXEC_TIMEOUT, HCCL_CONNECT_TIMEOUT",
	"HCCL_USE_NEW_SELECTOR":      "internal",
	"HCCL_TUNER_PLUGIN":          "internal",
	"HCCL_BIRS_ENABLE":           "internal",
	"HCCL_DETOUR":                "internal",
}

var hcclVar = regexp.MustCompile(`\bHCCL_[A-Z0-9_]+\b`)

// UnknownVariables returns the HCCL_* names in text that are not in Knobs: what a
// test asserts is empty for every piece of advice.
func UnknownVariables(text string) []string {
	seen := map[string]bool{}
	for _, m := range hcclVar.FindAllString(text, -1) {
		if _, ok := LookupKnob(m); !ok {
			seen[m] = true
		}
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}
