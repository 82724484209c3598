package parser

import (
	"fmt"
	"path/filepath"

	"github.com/hcclprof/hcclprof/profile"
)

// msprofFormat is the msprof command line's PROF_* directory, one rank per device
// (msprof.go): the directory itself, its mindstudio_profiler_output named directly,
// or that export copied without its PROF directory. Discover numbers the devices of
// every PROF directory together (AssignMsprofRanks).
var msprofFormat = &inputFormat{
	name:    "msprof PROF_* directory",
	formats: []profile.Format{profile.FormatMsprof, profile.FormatMsprofDB},
	dir: func(d *discovery, path string) bool {
		// PROF_* directories inside *_ascend_pt/_ascend_ms are raw data of that rank;
		// the rank directory was claimed before, so these are msprof's own.
		if IsMsprofDir(path) {
			addMsprofDir(d, path)
			return true
		}
		if filepath.Base(path) == msprofExportDir && IsMsprofDir(filepath.Dir(path)) {
			// A PROF directory's export named directly: its PROF directory is the rank.
			addMsprofDir(d, filepath.Dir(path))
			return true
		}
		if dev, from, ok := ScanMsprofExport(path); ok {
			device := "its files name no device"
			if from != "" {
				device = fmt.Sprintf("device %d from %s", dev.Device, from)
			}
			d.note(fmt.Sprintf("%s: an msprof export without its PROF_* directory (no info.json.N: no rank_id or chip; no analyze/: no communication.json); %s", path, device))
			d.addDevs([]MsprofDevice{dev})
			return true
		}
		return false
	},
	// An op_summary named alone stands for its device, as a lone kernel_details.csv
	// stands for its rank: with its Step Id it is the device's timeline.
	file: func(d *discovery, path string) bool {
		if !opSummaryRe.MatchString(filepath.Base(path)) {
			return false
		}
		dev := MsprofDevice{ProfDir: filepath.Dir(path), Device: -1, RankID: -1, Rank: -1, ExportOnly: true, OpSummary: path}
		if n, ok := firstDeviceID(path); ok {
			dev.Device = n
		}
		d.addDevs([]MsprofDevice{dev})
		return true
	},
	owns: func(ri RankInput) bool { return ri.Msprof != nil },
	load: func(ri RankInput) *profile.Rank {
		r := LoadMsprofDevice(*ri.Msprof)
		r.Rank = ri.Rank
		return r
	},
}

// addMsprofDir adds the devices of a PROF directory.
func addMsprofDir(d *discovery, profDir string) {
	devs, err := ScanMsprofDir(profDir)
	if err != nil {
		d.note(fmt.Sprintf("skipped %s: %v", profDir, err))
	}
	d.addDevs(devs)
}
