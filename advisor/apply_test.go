package advisor

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hcclprof/hcclprof/profile"
)

func TestApply(t *testing.T) {
	bucket := Setting{Knob: "bucket", BucketBytes: 100 << 20}
	for _, tc := range []struct{ fw, knob, how string }{
		{FrameworkDDP, "bucket_cap_mb", "DistributedDataParallel(model, bucket_cap_mb=100)"},
		{FrameworkMegatron, "--ddp-bucket-size", "--ddp-bucket-size 52428800"},
		{FrameworkDeepSpeed, "reduce_bucket_size", `"reduce_bucket_size": 52428800`},
		{FrameworkMindSpore, "comm_fusion", `"config": 105}`},
	} {
		knob, how := Apply(bucket, tc.fw)
		assert.Equal(t, tc.knob, knob, tc.fw)
		assert.Contains(t, how, tc.how, tc.fw)
		_, ok := LookupKnob(knob)
		assert.True(t, ok, "%s is in the allowlist", knob)
	}
	// FP32 gradients: half the elements of bf16 for the same bytes.
	_, how := Apply(Setting{Knob: "bucket", BucketBytes: 100 << 20, ElementBytes: 4}, FrameworkMegatron)
	assert.Contains(t, how, "--ddp-bucket-size 26214400   # parameters: 100 MiB of 4-byte gradients")
	_, how = Apply(bucket, FrameworkDeepSpeed)
	assert.Contains(t, how, "bf16 (assumed)")
	for in, want := range map[string]string{"DDP": FrameworkDDP, "torch_npu": FrameworkDDP, "MindSpeed": FrameworkMegatron, "deepspeed": FrameworkDeepSpeed, " MindSpore ": FrameworkMindSpore} {
		got, err := ParseFramework(in)
		assert.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := ParseFramework("jax")
	assert.Error(t, err)
	knob, how := Apply(Setting{Knob: "buffsize", BuffsizeMB: 400}, FrameworkDDP)
	assert.Equal(t, "HCCL_BUFFSIZE", knob)
	assert.Contains(t, how, "export HCCL_BUFFSIZE=400")
	_, how = Apply(Setting{Knob: "algorithm", Op: "allreduce", Algorithm: "NHR"}, FrameworkDDP)
	assert.Equal(t, `export HCCL_ALGO="allreduce=level0:NA;level1:NHR"`, how)
	for _, s := range []Setting{{Knob: "accumulation", Accumulation: 4}, {Knob: "overlap"}} {
		for _, fw := range []string{FrameworkDDP, FrameworkMegatron, FrameworkDeepSpeed, FrameworkMindSpore} {
			knob, how := Apply(s, fw)
			_, ok := LookupKnob(knob)
			assert.True(t, ok, "%s/%s names %q", s.Knob, fw, knob)
			assert.NotEmpty(t, how)
			assert.Empty(t, UnknownVariables(how))
		}
	}
}

func TestDetectFramework(t *testing.T) {
	assert.Equal(t, FrameworkDDP, DetectFramework(&profile.Cluster{Ranks: []*profile.Rank{{Format: profile.FormatTorchNPUText}}}))
	assert.Equal(t, FrameworkMindSpore, DetectFramework(&profile.Cluster{Ranks: []*profile.Rank{{Traits: profile.Traits{Framework: profile.FrameworkMindSpore}}}}))
	meg := &profile.Rank{Format: profile.FormatTorchNPUText}
	meg.Metadata.DistributedArgs = map[string]any{"tensor_model_parallel_size": 8.0}
	assert.Equal(t, FrameworkMegatron, DetectFramework(&profile.Cluster{Ranks: []*profile.Rank{meg}}))
	ddp := &profile.Rank{Format: profile.FormatTorchNPUText}
	ddp.Metadata.DistributedArgs = map[string]any{"tensor_model_parallel_size": 1.0, "pipeline_model_parallel_size": 1.0}
	assert.Equal(t, FrameworkDDP, DetectFramework(&profile.Cluster{Ranks: []*profile.Rank{ddp}}))
}
