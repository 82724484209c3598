package report

import (
	"fmt"
	"io"
)

// Format is a form a document is written in. Each document writes the forms listed
// beside its Write method; the driver's table of outputs says which command offers
// which. Asked for another, Write returns an error rather than writing something
// else.
type Format string

// The forms of the documents.
const (
	Text     Format = "text"
	JSON     Format = "json"
	Markdown Format = "markdown"
	HTML     Format = "html"
	// JUnit is the gates as JUnit XML (--junit), GitHub the GitHub Actions workflow
	// commands (--github).
	JUnit  Format = "junit"
	GitHub Format = "github"
)

// renderers are a document's writers, by form.
type renderers[D any] map[Format]func(io.Writer, D) error

func (r renderers[D]) write(w io.Writer, f Format, d D, what string) error {
	render, ok := r[f]
	if !ok {
		return fmt.Errorf("%s has no %s form", what, f)
	}
	return render(w, d)
}

var documentRenderers = renderers[*Document]{Text: writeText, JSON: writeJSON, Markdown: writeMarkdown,
	HTML: writeHTMLReport, JUnit: writeGatesJUnit, GitHub: writeGitHubAnnotations}

// Write writes analyze's report: Text, JSON, Markdown, HTML (one self-contained
// page), JUnit (the gates) or GitHub (workflow commands for the failed gates, the
// high findings and the warnings).
func (d *Document) Write(w io.Writer, f Format) error {
	return documentRenderers.write(w, f, d, "the report")
}

// AdviceDoc is what hcclprof advise shows of a report: the advice alone, every
// finding.
type AdviceDoc Document

var adviceRenderers = renderers[*AdviceDoc]{
	Text: func(w io.Writer, d *AdviceDoc) error { return writeAdviceText(w, (*Document)(d)) },
	JSON: func(w io.Writer, d *AdviceDoc) error { return writeAdviceJSON(w, (*Document)(d)) },
}

// Write writes the advice: Text or JSON ({"schema_version", "diagnosis", "findings",
// "recommendations"}).
func (d *AdviceDoc) Write(w io.Writer, f Format) error {
	return adviceRenderers.write(w, f, d, "the advice")
}

var diffRenderers = renderers[DiffDoc]{Text: writeDiffText, JSON: writeDiffJSON, Markdown: writeDiffMarkdown,
	JUnit: writeDiffJUnit, GitHub: writeDiffGitHubAnnotations}

// Write writes the diff: Text, JSON, Markdown, JUnit (its gates) or GitHub.
func (d DiffDoc) Write(w io.Writer, f Format) error {
	return diffRenderers.write(w, f, d, "the diff")
}

var inspectRenderers = renderers[*InspectDocument]{Text: writeInspectText, JSON: writeInspectJSON}

// Write writes the inspection: Text or JSON.
func (d *InspectDocument) Write(w io.Writer, f Format) error {
	return inspectRenderers.write(w, f, d, "the inspection")
}

var modelRenderers = renderers[ModelDoc]{Text: writeModelText, JSON: writeModelJSON}

// Write writes the priced op: Text or JSON.
func (d ModelDoc) Write(w io.Writer, f Format) error {
	return modelRenderers.write(w, f, d, "the model")
}

var calibrationRenderers = renderers[CalibrationDoc]{Text: writeCalibrationText, JSON: writeCalibrationJSON}

// Write writes the calibration of a run's links: Text or JSON.
func (d CalibrationDoc) Write(w io.Writer, f Format) error {
	return calibrationRenderers.write(w, f, d, "the calibration")
}

var benchCalibrationRenderers = renderers[BenchCalibrationDoc]{Text: writeBenchCalibrationText, JSON: writeBenchCalibrationJSON}

// Write writes the calibration from benchmark sweeps: Text or JSON.
func (d BenchCalibrationDoc) Write(w io.Writer, f Format) error {
	return benchCalibrationRenderers.write(w, f, d, "the benchmark calibration")
}

var whatIfRenderers = renderers[WhatIfDoc]{Text: writeWhatIfText, JSON: writeWhatIfJSON}

// Write writes the what-if's prediction: Text or JSON.
func (d WhatIfDoc) Write(w io.Writer, f Format) error {
	return whatIfRenderers.write(w, f, d, "the what-if")
}
