package costmodel

// FitsMade are the link calibrations and bucketing fits made so far.
func FitsMade() (calibrationFits, bucketingFits int64) {
	return calibrations.Load(), bucketings.Load()
}
