package parser

import (
	"fmt"
	"path/filepath"

	"github.com/hcclprof/hcclprof/profile"
)

// msprofFormat is the msprof command line's PROF_* directory, one rank per device
// (msprof.go): the directory itself, its mindstudio_profiler_output named directly,
// or that export copied without its PROF directory. Its detectors hold the devices
// found; gather numbers those of every PROF directory together (assignMsprofRanks).
var msprofFormat = &inputFormat{
	name:    "msprof PROF_* directory",
	formats: []profile.Format{profile.FormatMsprof, profile.FormatMsprofDB},
	dir: func(d *discovery, path string) bool {
		// PROF_* directories inside *_ascend_pt/_ascend_ms are raw data of that rank;
		// the rank directory was claimed before, so these are msprof's own.
		if isMsprofDir(path) {
			addMsprofDir(d, path)
			return true
		}
		if filepath.Base(path) == msprofExportDir && isMsprofDir(filepath.Dir(path)) {
			// A PROF directory's export named directly: its PROF directory is the rank.
			addMsprofDir(d, filepath.Dir(path))
			return true
		}
		if dev, from, ok := scanMsprofExport(path); ok {
			device := "its files name no device"
			if from != "" {
				device = fmt.Sprintf("device %d from %s", dev.Device, from)
			}
			d.note(fmt.Sprintf("%s: an msprof export without its PROF_* directory (no info.json.N: no rank_id or chip; no analyze/: no communication.json); %s", path, device))
			d.hold("", dev)
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
		dev := msprofDevice{ProfDir: filepath.Dir(path), Device: -1, RankID: -1, Rank: -1, ExportOnly: true, OpSummary: path}
		if n, ok := firstDeviceID(path); ok {
			dev.Device = n
		}
		d.hold("", dev)
		return true
	},
	gather: func(held []any, notes *[]string) []RankInput {
		devs := make([]msprofDevice, len(held))
		for i, h := range held {
			devs[i] = h.(msprofDevice)
		}
		kept, kn := assignMsprofRanks(devs)
		*notes = append(*notes, kn...)
		ris := make([]RankInput, len(kept))
		for i := range kept {
			ris[i] = RankInput{Rank: kept[i].Rank, Dir: kept[i].ProfDir, source: &kept[i]}
		}
		return ris
	},
	load: func(ri RankInput) *profile.Rank {
		r := loadMsprofDevice(*ri.msprofDev())
		r.Rank = ri.Rank
		return r
	},
	fuzz: []string{"FuzzOpSummaryCSV", "FuzzMsprofIterationMarkers"},
}

// msprofDev is the msprof device a rank input reads, nil for another format's.
func (ri RankInput) msprofDev() *msprofDevice {
	dev, _ := ri.source.(*msprofDevice)
	return dev
}

// addMsprofDir adds the devices of a PROF directory.
func addMsprofDir(d *discovery, profDir string) {
	devs, err := scanMsprofDir(profDir)
	if err != nil {
		d.note(fmt.Sprintf("skipped %s: %v", profDir, err))
	}
	for _, dev := range devs {
		d.hold("", dev)
	}
}
