package report

import (
	"math"
	"strconv"
	"strings"
)

// svgChart is one inline SVG chart as a list of elements drawn in order; the HTML
// template writes it, so every text goes through html/template's escaping. Sizes are
// user units: the viewBox is W×H and the page scales it down on narrow screens.
type svgChart struct {
	ID, Label string
	W, H      float64
	Elems     []svgElem
	Gradient  []svgStop // the colour key's stops, drawn as the linearGradient ID-key
	Hatch     bool      // the chart uses the hatch pattern ID-hatch
}

// minFontPx is the smallest a chart's text is drawn on the screen: the page draws a
// chart no narrower than the width that keeps its fontPx text at minFontPx, and a
// narrower screen (a phone's) scrolls it sideways rather than shrinking it more.
const minFontPx = 9.5

// svgElem is a rect, text or line. Text is anchored at X,Y with Anchor (start,
// middle, end); a line runs from X,Y to X2,Y2.
type svgElem struct {
	Kind                string // rect, text, line
	X, Y, W, H, X2, Y2  float64
	Class, Fill, Anchor string
	Rotate              bool // text turned 90° anticlockwise about X,Y
	Text, Title         string
}

type svgStop struct{ Offset, Color string }

// fontPx is the size of every chart text (the page's CSS says the same).
const fontPx = 11

func (c *svgChart) rect(x, y, w, h float64, class, title string) {
	c.Elems = append(c.Elems, svgElem{Kind: "rect", X: x, Y: y, W: w, H: h, Class: class, Title: title})
}

func (c *svgChart) fillRect(x, y, w, h float64, fill, title string) {
	c.Elems = append(c.Elems, svgElem{Kind: "rect", X: x, Y: y, W: w, H: h, Fill: fill, Title: title})
}

func (c *svgChart) text(x, y float64, anchor, class, s string) {
	c.Elems = append(c.Elems, svgElem{Kind: "text", X: x, Y: y, Anchor: anchor, Class: class, Text: s})
}

// label is a text from the input cut to maxW px, its whole in a tooltip.
func (c *svgChart) label(x, y float64, anchor, class, s string, maxW float64) {
	e := svgElem{Kind: "text", X: x, Y: y, Anchor: anchor, Class: class, Text: fitText(s, maxW)}
	if e.Text != s {
		e.Title = s
	}
	c.Elems = append(c.Elems, e)
}

func (c *svgChart) line(x1, y1, x2, y2 float64, class string) {
	c.Elems = append(c.Elems, svgElem{Kind: "line", X: x1, Y: y1, X2: x2, Y2: y2, Class: class})
}

// textWidth is a text's width in px at fontPx, over-estimated on purpose: widths per
// glyph class are at or above DejaVu Sans', the widest common sans-serif font, so a
// label placed by it is not cut whichever font the reader's browser picks.
func textWidth(s string) float64 {
	var em float64
	for _, r := range s {
		switch {
		case strings.ContainsRune(" .,:;'!|ijlI()[]", r):
			em += 0.4
		case strings.ContainsRune("mwMW%@", r):
			em += 1.02
		case r >= '0' && r <= '9', r >= 'a' && r <= 'z':
			em += 0.66
		case r >= 'A' && r <= 'Z':
			em += 0.8
		default: // symbols and non-ASCII (→, ×, µ, CJK)
			em += 1.02
		}
	}
	return math.Ceil(em * fontPx)
}

// fitText cuts s with an ellipsis to at most maxW px (by textWidth).
func fitText(s string, maxW float64) string {
	if textWidth(s) <= maxW {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && textWidth(string(r)+"…") > maxW {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

func maxTextWidth(ss []string) float64 {
	var w float64
	for _, s := range ss {
		w = math.Max(w, textWidth(s))
	}
	return w
}

// niceStep is a step of 1, 2 or 5 × 10^k that cuts 0..span into about n ticks.
func niceStep(span float64, n int) float64 {
	if span <= 0 || n < 1 {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// ticks are 0, step, 2·step, ... up to top, with their labels written with as many
// decimals as the step needs.
func ticks(top, step float64) (vals []float64, labels []string) {
	dec := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	for i := 0; ; i++ {
		v := float64(i) * step
		if v > top*(1+1e-9) {
			break
		}
		vals = append(vals, v)
		labels = append(labels, strconv.FormatFloat(v, 'f', dec, 64))
	}
	return vals, labels
}

// xAxis draws a horizontal axis at y under a plot from x0 to x1 holding 0..top: the
// axis line, a tick and label at each value, light grid lines up to gridTop (none
// when gridTop >= y), and the axis title (with its unit) centred below.
func (c *svgChart) xAxis(x0, x1, y, gridTop, top, step float64, unit func(string) string, title string) {
	vals, labels := ticks(top, step)
	for i, v := range vals {
		x := x0 + (x1-x0)*v/top
		if gridTop < y {
			c.line(x, gridTop, x, y, "grid")
		}
		c.line(x, y, x, y+4, "tick")
		c.text(x, y+15, "middle", "tick", unit(labels[i]))
	}
	c.line(x0, y, x1, y, "axis")
	c.text((x0+x1)/2, y+30, "middle", "axis-title", title)
}

// legend draws swatches with their names in a row from x at y (the swatches' top)
// and returns the x after the last.
func (c *svgChart) legend(x, y float64, items [][2]string) float64 {
	for _, it := range items {
		c.rect(x, y, 10, 10, it[0], "")
		c.text(x+14, y+9, "start", "legend", it[1])
		x += 14 + textWidth(it[1]) + 16
	}
	return x
}
