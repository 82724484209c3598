package driver

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/hcclprof/hcclprof/profile"
)

// inputFiles is every file the run read: the arguments that are files, and the files
// each rank's parser used (relative to the rank's directory, or to the directory of a
// rank given as a single file).
func inputFiles(args []string, c *profile.Cluster) []string {
	var out []string
	for _, a := range args {
		if st, err := os.Stat(a); err == nil && !st.IsDir() {
			out = append(out, a)
		}
	}
	if c == nil {
		return out
	}
	for _, r := range c.Ranks {
		bases := []string{r.Dir}
		if st, err := os.Stat(r.Dir); err == nil && !st.IsDir() {
			out = append(out, r.Dir)
			bases = []string{filepath.Dir(r.Dir)}
		}
		for _, b := range bases {
			for _, f := range r.FilesUsed {
				if filepath.IsAbs(f) {
					out = append(out, f)
				} else {
					out = append(out, filepath.Join(b, f))
				}
			}
		}
	}
	return out
}

// resolved is a path made absolute with its symbolic links followed, as far as it
// exists: a file not yet written resolves through its directory.
func resolved(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

// samePath reports whether two paths name one file: the same resolved path, or, when
// both exist, the same file (a hard link, a bind mount).
func samePath(a, b string) bool {
	if resolved(a) == resolved(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// output is a file a command writes, with the flag that named it.
type output struct{ flag, path string }

// checkOutputs refuses, before anything is written, an output that would overwrite a
// file the run read, or two outputs that name one file: either would destroy the
// input or one of the outputs without a word.
func checkOutputs(args []string, c *profile.Cluster, outputs ...output) error {
	inputs := inputFiles(args, c)
	seen := map[string]string{} // resolved output -> its flag
	for _, o := range outputs {
		flag, out := o.flag, o.path
		if out == "" {
			continue
		}
		for _, in := range inputs {
			if samePath(out, in) {
				return usageError(fmt.Errorf("%s %s is an input of this run (%s): refusing to overwrite it", flag, out, in))
			}
		}
		r := resolved(out)
		if other, ok := seen[r]; ok {
			return usageError(fmt.Errorf("%s and %s name the same file %s: one would overwrite the other", other, flag, out))
		}
		seen[r] = flag
	}
	return nil
}
