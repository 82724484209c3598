package parser

// What the package's external tests (package parser_test, which import packages that
// import parser) use of its insides.

var (
	ParseAnalysisDB      = parseAnalysisDB
	ParseBench           = parseBench
	ParseTorchDB         = parseTorchDB
	RankFromInfoFileName = rankFromInfoFileName
	ReadClusterSummary   = readClusterSummary
)
