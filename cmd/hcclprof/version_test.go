package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStampOf(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name                string
		bi                  *debug.BuildInfo
		ldVersion, ldCommit string
		want                string
	}{
		{"nothing known", nil, "", "", "devel"},
		{"go build outside a checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "", "", "devel"},
		{"go build in a clean checkout", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")}, "", "", "devel (commit 0123456789ab)"},
		{"go build with local changes", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")}, "", "", "devel (commit 0123456789ab-dirty)"},
		{"go install module@version", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.1"}}, "", "", "v0.4.1"},
		{"make dist", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")}, "v0.4.1-3-gabc1234-dirty", "abc1234def56-dirty", "v0.4.1-3-gabc1234-dirty (commit abc1234def56-dirty)"},
		{"-X version only", &debug.BuildInfo{Settings: vcs(rev, "false")}, "v1.0.0", "", "v1.0.0 (commit 0123456789ab)"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, stampOf(tt.bi, tt.ldVersion, tt.ldCommit).String(), tt.name)
	}
}

// TestVersionLdflags: -X main.version and main.commit reach --version and the reports.
func TestVersionLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a second binary")
	}
	bin := filepath.Join(t.TempDir(), "hcclprof")
	out, err := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7-test -X main.commit=feedc0ffee12", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	assert.Equal(t, "hcclprof version v9.8.7-test (commit feedc0ffee12)\n", string(out))
	out, err = exec.Command(bin, "analyze", sample, "--format", "json").Output()
	require.NoError(t, err)
	var doc struct {
		Tool struct{ Version string } `json:"tool"`
	}
	require.NoError(t, json.Unmarshal(out, &doc))
	assert.Equal(t, "v9.8.7-test (commit feedc0ffee12)", doc.Tool.Version)
}

// TestDistArm64 runs make dist's linux/arm64 binary under qemu-user on the bundled
// sample: its JSON report is byte for byte the linux/amd64 binary's (both are stamped
// alike and record the same arguments), so no figure depends on the architecture
// (floating-point contraction, map order, word size). Both binaries are static.
func TestDistArm64(t *testing.T) {
	amd64, arm64 := filepath.Join("..", "..", "dist", "hcclprof-linux-amd64"), filepath.Join("..", "..", "dist", "hcclprof-linux-arm64")
	for _, p := range []string{amd64, arm64} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s absent: run make dist", p)
		}
	}
	for p, machine := range map[string]elf.Machine{amd64: elf.EM_X86_64, arm64: elf.EM_AARCH64} {
		f, err := elf.Open(p)
		require.NoError(t, err)
		assert.Equal(t, machine, f.Machine, p)
		for _, prog := range f.Progs {
			assert.NotEqual(t, elf.PT_INTERP, prog.Type, "%s is dynamically linked", p)
		}
		f.Close()
	}
	qemu, err := exec.LookPath("qemu-aarch64-static")
	if err != nil {
		if qemu, err = exec.LookPath("qemu-aarch64"); err != nil {
			t.Skip("no qemu-aarch64(-static) to run the arm64 binary")
		}
	}
	args := []string{"analyze", sample, "--format", "json"}
	want, err := exec.Command(amd64, args...).Output()
	require.NoError(t, err)
	got, err := exec.Command(qemu, append([]string{arm64}, args...)...).Output()
	require.NoError(t, err)
	require.True(t, json.Valid(got))
	if !bytes.Equal(want, got) {
		wantFile := filepath.Join(t.TempDir(), "amd64.json")
		gotFile := filepath.Join(t.TempDir(), "arm64.json")
		require.NoError(t, os.WriteFile(wantFile, want, 0o644))
		require.NoError(t, os.WriteFile(gotFile, got, 0o644))
		diff, _ := exec.Command("diff", wantFile, gotFile).CombinedOutput()
		t.Fatalf("the arm64 report differs from the amd64 one:\n%.4000s", diff)
	}
	v, err := exec.Command(qemu, arm64, "--version").Output()
	require.NoError(t, err)
	w, err := exec.Command(amd64, "--version").Output()
	require.NoError(t, err)
	assert.Equal(t, string(w), string(v))
	assert.Regexp(t, `^hcclprof version \S+ \(commit [0-9a-f]{12}(-dirty)?\)\n$`, string(v))
}
