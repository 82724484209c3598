package advisor

import (
	"fmt"
	"math"
	"strings"

	"github.com/hcclprof/hcclprof/profile"
)

// Frameworks the advice can be written for.
const (
	FrameworkDDP       = "pytorch-ddp"
	FrameworkMegatron  = "megatron"
	FrameworkDeepSpeed = "deepspeed"
	FrameworkMindSpore = "mindspore"
)

// ParseFramework accepts a framework's name as users write it.
func ParseFramework(name string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "ddp", "pytorch", "pytorch-ddp", "torch", "torch_npu":
		return FrameworkDDP, nil
	case "megatron", "megatron-lm", "megatron-core", "mindspeed":
		return FrameworkMegatron, nil
	case "deepspeed":
		return FrameworkDeepSpeed, nil
	case "mindspore":
		return FrameworkMindSpore, nil
	}
	return "", fmt.Errorf("unknown framework %q: want ddp, megatron, deepspeed or mindspore", name)
}

// DetectFramework guesses the training framework from the profile: MindSpore's
// profiler output (profile.Traits.Framework), Megatron's distributed_args
// (tensor/pipeline parallel above 1), else PyTorch DDP. DeepSpeed cannot be told apart from DDP in a profile: it is chosen with
// Options.Framework.
func DetectFramework(c *profile.Cluster) string {
	if c == nil {
		return FrameworkDDP
	}
	for _, r := range c.Ranks {
		if r.Framework == profile.FrameworkMindSpore {
			return FrameworkMindSpore
		}
		// torch_npu records Megatron's parallel sizes when they exist; sizes of 1 say
		// nothing (a plain DDP job may carry them too), so only model parallelism
		// counts as evidence of Megatron.
		for _, key := range []string{"tensor_model_parallel_size", "pipeline_model_parallel_size"} {
			if v, ok := r.Metadata.DistributedArgs[key].(float64); ok && v > 1 {
				return FrameworkMegatron
			}
		}
	}
	return FrameworkDDP
}

// Setting is one change the advisor can recommend, in framework-neutral terms.
type Setting struct {
	Knob  string // bucket, accumulation, overlap, buffsize, algorithm
	Value string // as shown to the user
	// BucketBytes, Accumulation, BuffsizeMB, Op and Algorithm hold the value by kind.
	BucketBytes int64
	// ElementBytes is the gradients' element size, for frameworks that count
	// elements (Megatron, DeepSpeed); 0 assumes 2 (bf16).
	ElementBytes int
	Accumulation int
	Microbatches int // pipeline micro-batches per step
	BuffsizeMB   int
	Op           string // for algorithm: allreduce, allgather, ...
	Algorithm    string // for algorithm: ring, NHR, H-D_R, pipeline, ...; "" unsets HCCL_ALGO
}

// Apply returns the knob's name (from Knobs) and the exact way to set it for the
// framework.
func Apply(s Setting, framework string) (knob, how string) {
	switch s.Knob {
	case "bucket":
		mib := float64(s.BucketBytes) / (1 << 20)
		elem, dtype := s.ElementBytes, fmt.Sprintf("%d-byte", s.ElementBytes)
		if elem <= 0 {
			elem, dtype = 2, "bf16 (assumed)"
		}
		elems := int64(math.Round(float64(s.BucketBytes) / float64(elem)))
		switch framework {
		case FrameworkMegatron:
			// Megatron counts parameters.
			return "--ddp-bucket-size", fmt.Sprintf("--ddp-bucket-size %d   # parameters: %.0f MiB of %s gradients", elems, mib, dtype)
		case FrameworkDeepSpeed:
			return "reduce_bucket_size", fmt.Sprintf(`"zero_optimization": {"reduce_bucket_size": %d}   # elements: %.0f MiB of %s gradients`, elems, mib, dtype)
		case FrameworkMindSpore:
			return "comm_fusion", fmt.Sprintf(`mindspore.set_auto_parallel_context(comm_fusion={"allreduce": {"mode": "size", "config": %.0f}})`, math.Ceil(float64(s.BucketBytes)/1e6))
		default:
			return "bucket_cap_mb", fmt.Sprintf("DistributedDataParallel(model, bucket_cap_mb=%.0f)", mib)
		}
	case "accumulation":
		switch framework {
		case FrameworkMegatron:
			return "--global-batch-size", fmt.Sprintf("raise --global-batch-size so that global / (micro × dp) = %d (Megatron accumulates the micro-batches and reduces once)", s.Accumulation)
		case FrameworkDeepSpeed:
			return "gradient_accumulation_steps", fmt.Sprintf(`"gradient_accumulation_steps": %d`, s.Accumulation)
		case FrameworkMindSpore:
			return "comm_fusion", fmt.Sprintf("accumulate %d micro-batches before the gradient AllReduce (GradAccumulation)", s.Accumulation)
		default:
			return "no_sync", fmt.Sprintf("accumulate %d micro-batches: run the first %d under `with model.no_sync():`, step the optimizer after the last", s.Accumulation, s.Accumulation-1)
		}
	case "overlap":
		switch framework {
		case FrameworkMegatron:
			return "--overlap-grad-reduce", "--overlap-grad-reduce (and --overlap-param-gather with --use-distributed-optimizer)"
		case FrameworkDeepSpeed:
			return "overlap_comm", `"zero_optimization": {"overlap_comm": true}`
		default:
			return "find_unused_parameters", "DistributedDataParallel(model, find_unused_parameters=False, static_graph=True)   # nothing should hold a bucket back once its gradients are ready"
		}
	case "buffsize":
		return "HCCL_BUFFSIZE", fmt.Sprintf("export HCCL_BUFFSIZE=%d   # MB per communicator; each communicator reserves 2 × this of device memory", s.BuffsizeMB)
	case "algorithm":
		if s.Algorithm == "" {
			return "HCCL_ALGO", "unset HCCL_ALGO   # let HCCL choose the algorithm per op and size"
		}
		return "HCCL_ALGO", fmt.Sprintf(`export HCCL_ALGO="%s=level0:NA;level1:%s"`, s.Op, s.Algorithm)
	case "microbatches":
		if framework == FrameworkDeepSpeed {
			// DeepSpeed's pipeline engine runs gradient_accumulation_steps micro-batches.
			return "gradient_accumulation_steps", fmt.Sprintf(`"gradient_accumulation_steps": %d   # the pipeline's micro-batches per step`, s.Microbatches)
		}
		return "--global-batch-size", fmt.Sprintf("set --global-batch-size so that global / (--micro-batch-size × dp) = %d micro-batches per step (or lower --micro-batch-size by the same factor to keep the global batch)", s.Microbatches)
	case "fuse":
		return "fuse collectives", "issue the small collectives of a step as one (flatten the tensors into one buffer, reduce once)"
	case "grad_dtype":
		switch framework {
		case FrameworkMegatron:
			return "--grad-reduce-in-bf16", "add --grad-reduce-in-bf16 (and drop --accumulate-allreduce-grads-in-fp32 if set): gradients reduced in bf16, the main gradients and the optimizer kept in fp32"
		case FrameworkDeepSpeed:
			return "communication_data_type", `"communication_data_type": "bf16"   # in the DeepSpeed config: gradients reduced in bf16`
		}
		return "register_comm_hook", "from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import bf16_compress_hook\n" +
			"model.register_comm_hook(None, bf16_compress_hook)   # each bucket cast to bf16 for the AllReduce, back to fp32 after (fp16_compress_hook for an fp16 model)"
	}
	return "", ""
}
