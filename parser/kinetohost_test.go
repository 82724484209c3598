package parser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/hcclprof/hcclprof/internal/realdata"
)

// TestKinetoWorkerName: tensorboard_trace_handler's {hostname}_{pid}.{time_ns}.pt.trace.json
// (and .gz), hostnames with dots and underscores; other names say nothing.
func TestKinetoWorkerName(t *testing.T) {
	for _, c := range []struct {
		file, host string
		pid        int64
		ok         bool
	}{
		{"node0_3000000.1736408883594123456.pt.trace.json", "node0", 3000000, true},
		{"/runs/log/gpu-a17.cluster.local_2910249.1716391522000000000.pt.trace.json.gz", "gpu-a17.cluster.local", 2910249, true},
		{"my_host_12.1716391522123.pt.trace.json", "my_host", 12, true},
		{"nccl_data.json.gz", "", 0, false},
		{"rank0.1716391522.pt.trace.json", "", 0, false},     // a worker_name without a pid
		{"node0_abc.1716391522.pt.trace.json", "", 0, false}, // not a pid
		{"node0_12.pt.trace.json", "", 0, false},             // no timestamp
		{"_12.1716391522.pt.trace.json", "", 0, false},       // no host
		{"trace.json", "", 0, false},
	} {
		host, pid, ok := kinetoWorkerName(c.file)
		assert.Equal(t, c.ok, ok, c.file)
		assert.Equal(t, c.host, host, c.file)
		if c.ok {
			assert.Equal(t, c.pid, pid, c.file)
		}
	}
}

// TestKinetoHost: a rank's host is the trace's host_name (Kineto since 2026); else the
// tensorboard_trace_handler file name, then traceName, when its pid is the trace's
// process (700 in miniKineto's ProfilerStep events); else unknown, never guessed.
func TestKinetoHost(t *testing.T) {
	withHost := strings.Replace(miniKineto, `"record_shapes": 1,`, `"record_shapes": 1, "host_name": "gpu-b03",`, 1)
	renamed := strings.Replace(miniKineto, `"traceName": "/tmp/trace.pt.trace.json"`, `"traceName": "./log/gpu-c09_700.1716391522000000000.pt.trace.json"`, 1)
	for _, c := range []struct {
		name, trace, file, host, source string
	}{
		{"host_name", withHost, "whatever.json", "gpu-b03", kinetoHostFromMetadata},
		{"host_name beats the file name", withHost, "gpu-x_700.1716391522000000000.pt.trace.json", "gpu-b03", kinetoHostFromMetadata},
		{"file name, its pid the trace's", miniKineto, "runs/gpu-a17_700.1716391522000000000.pt.trace.json", "gpu-a17", kinetoHostFromFileName},
		{"file name, another pid", miniKineto, "gpu-a17_701.1716391522000000000.pt.trace.json", "", ""},
		{"a user's worker_name", miniKineto, "worker_1.1716391522000000000.pt.trace.json", "", ""},
		{"neither", miniKineto, "mini.pt.trace.json", "", ""},
		{"renamed, its traceName the original", renamed, "rank3.json", "gpu-c09", kinetoHostFromTraceName},
		{"renamed, traceName of another pid", strings.Replace(renamed, "_700.", "_9.", 1), "rank3.json", "", ""},
	} {
		r, err := parseKineto(strings.NewReader(c.trace), c.file)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.host, r.Info.Host, c.name)
		assert.Equal(t, c.source, r.Info.HostSource, c.name)
	}

	// Gzipped, as tensorboard_trace_handler(use_gzip=True) writes it, through the loader.
	dir := t.TempDir()
	p := filepath.Join(dir, "gpu-a17_700.1716391522000000000.pt.trace.json.gz")
	writeGzip(t, p, []byte(miniKineto))
	r, err := openKineto(p)
	require.NoError(t, err)
	assert.Equal(t, "gpu-a17", r.Info.Host)
}

// The real A100 trace names no host: no host_name, and its file was renamed
// (nccl_data.json.gz; its traceName is a temporary file's). Its host stays unknown.
func TestKinetoRealSampleHostUnknown(t *testing.T) {
	p := realdata.Path(t, "kineto-nccl-a100-2gpu", "nccl_data.json.gz")
	if _, err := os.Stat(p); err != nil {
		t.Skip(err)
	}
	r, err := openKineto(p)
	require.NoError(t, err)
	assert.Empty(t, r.Info.Host)
	assert.Empty(t, r.Info.HostSource)
}
