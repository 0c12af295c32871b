package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"strings"
)

// series is one line of the latency plot: a value (ms) per rate.
type series struct {
	label  string
	color  color.RGBA
	dashed bool
	points map[int]float64
}

// plotLatency draws admission latency (ms, log scale) against the arrival
// rate, one line per series, with the goal (p99 ≤ goalMs at goalRate) and
// the requests' timeout marked, and returns it as a PNG. Standard library
// only: lines and a 5×7 bitmap font drawn pixel by pixel.
func plotLatency(title string, rates []int, ss []series, goalMs float64, goalRate int, timeoutMs float64) ([]byte, error) {
	const (
		w, h                     = 960, 560
		left, right, top, bottom = 100, 250, 60, 80
	)
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	fill(img, img.Bounds(), color.RGBA{255, 255, 255, 255})
	px0, px1, py0, py1 := left, w-right, top, h-bottom

	lo, hi := goalMs, goalMs
	for _, s := range ss {
		for _, v := range s.points {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if timeoutMs > 0 && hi >= timeoutMs/2 {
		hi = math.Max(hi, timeoutMs)
	}
	dlo, dhi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if dhi == dlo {
		dhi++
	}
	maxRate := 0
	for _, r := range rates {
		maxRate = max(maxRate, r)
	}
	xmax := float64(maxRate) * 1.1
	x := func(rate float64) int { return px0 + int(rate/xmax*float64(px1-px0)+0.5) }
	y := func(ms float64) int {
		f := (math.Log10(ms) - dlo) / (dhi - dlo)
		return py1 - int(f*float64(py1-py0)+0.5)
	}

	grid := color.RGBA{225, 225, 225, 255}
	ink := color.RGBA{40, 40, 40, 255}
	for d := dlo; d <= dhi; d++ {
		yy := y(math.Pow(10, d))
		line(img, px0, yy, px1, yy, grid, 1, false)
		label := trimFloat(math.Pow(10, d))
		text(img, px0-8-textWidth(label, 2), yy-7, label, ink, 2)
	}
	for _, r := range rates {
		xx := x(float64(r))
		line(img, xx, py0, xx, py1, grid, 1, false)
		label := fmt.Sprint(r)
		text(img, xx-textWidth(label, 2)/2, py1+10, label, ink, 2)
	}
	line(img, px0, py0, px0, py1, ink, 1, false)
	line(img, px0, py1, px1, py1, ink, 1, false)
	text(img, (px0+px1)/2-textWidth("arrival rate (requests/s)", 2)/2, py1+40, "arrival rate (requests/s)", ink, 2)
	text(img, 10, py0-28, "ms (log)", ink, 2)
	text(img, px0, 14, title, ink, 2)

	goal := color.RGBA{0, 140, 60, 255}
	line(img, px0, y(goalMs), px1, y(goalMs), goal, 1, true)
	marker(img, x(float64(goalRate)), y(goalMs), goal, 6, false)
	if timeoutMs > 0 && math.Log10(timeoutMs) <= dhi {
		line(img, px0, y(timeoutMs), px1, y(timeoutMs), color.RGBA{150, 150, 150, 255}, 1, true)
		text(img, px0+6, y(timeoutMs)-18, "timeout", color.RGBA{120, 120, 120, 255}, 2)
	}

	for _, s := range ss {
		prevX, prevY, have := 0, 0, false
		for _, r := range rates {
			v, ok := s.points[r]
			if !ok || v <= 0 {
				have = false
				continue
			}
			xx, yy := x(float64(r)), y(v)
			if have {
				line(img, prevX, prevY, xx, yy, s.color, 2, s.dashed)
			}
			marker(img, xx, yy, s.color, 4, true)
			prevX, prevY, have = xx, yy, true
		}
	}

	// The legend, right of the plot.
	lx, ly := px1+20, py0
	for _, s := range ss {
		line(img, lx, ly+7, lx+36, ly+7, s.color, 2, s.dashed)
		marker(img, lx+18, ly+7, s.color, 4, true)
		text(img, lx+46, ly, s.label, ink, 2)
		ly += 26
	}
	line(img, lx, ly+7, lx+36, ly+7, goal, 1, true)
	marker(img, lx+18, ly+7, goal, 6, false)
	text(img, lx+46, ly, fmt.Sprintf("goal: p99 %s ms", trimFloat(goalMs)), ink, 2)
	text(img, lx+46, ly+21, fmt.Sprintf("at %d/s", goalRate), ink, 2)

	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%g", v)
	if strings.Contains(s, "e") {
		s = fmt.Sprintf("%.0f", v)
	}
	return s
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Bounds())
	for yy := r.Min.Y; yy < r.Max.Y; yy++ {
		for xx := r.Min.X; xx < r.Max.X; xx++ {
			img.SetRGBA(xx, yy, c)
		}
	}
}

// line draws from (x0,y0) to (x1,y1), width pixels wide, dashed or not.
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA, width int, dashed bool) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := 1, 1
	if x0 > x1 {
		sx = -1
	}
	if y0 > y1 {
		sy = -1
	}
	err := dx + dy
	for step := 0; ; step++ {
		if !dashed || step%12 < 7 {
			fill(img, image.Rect(x0-width/2, y0-width/2, x0-width/2+width, y0-width/2+width), c)
		}
		if x0 == x1 && y0 == y1 {
			return
		}
		if e2 := 2 * err; e2 >= dy {
			err += dy
			x0 += sx
		} else {
			err += dx
			y0 += sy
		}
	}
}

// marker draws a square centred on (x,y), filled or as an outline.
func marker(img *image.RGBA, x, y int, c color.RGBA, r int, filled bool) {
	if filled {
		fill(img, image.Rect(x-r, y-r, x+r+1, y+r+1), c)
		return
	}
	line(img, x-r, y-r, x+r, y-r, c, 2, false)
	line(img, x+r, y-r, x+r, y+r, c, 2, false)
	line(img, x+r, y+r, x-r, y+r, c, 2, false)
	line(img, x-r, y+r, x-r, y-r, c, 2, false)
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// text draws s (lower-cased; characters the font lacks are left blank) with
// its top left at (x,y), each font pixel scale×scale.
func text(img *image.RGBA, x, y int, s string, c color.RGBA, scale int) {
	for _, r := range strings.ToLower(s) {
		if g, ok := font[r]; ok {
			for row, bits := range g {
				for col, b := range bits {
					if b == '#' {
						fill(img, image.Rect(x+col*scale, y+row*scale, x+(col+1)*scale, y+(row+1)*scale), c)
					}
				}
			}
		}
		x += 6 * scale
	}
}

func textWidth(s string, scale int) int { return len([]rune(s))*6*scale - scale }

// font is a 5×7 bitmap font of the characters the plot writes, two rows
// more for the descenders.
var font = map[rune][]string{
	' ': {".....", ".....", ".....", ".....", ".....", ".....", "....."},
	'0': {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."},
	'1': {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."},
	'2': {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"},
	'3': {"####.", "....#", "....#", ".###.", "....#", "....#", "####."},
	'4': {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."},
	'5': {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."},
	'6': {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."},
	'7': {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."},
	'8': {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."},
	'9': {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."},
	'a': {".....", ".....", ".###.", "....#", ".####", "#...#", ".####"},
	'b': {"#....", "#....", "#.##.", "##..#", "#...#", "#...#", "####."},
	'c': {".....", ".....", ".###.", "#....", "#....", "#...#", ".###."},
	'd': {"....#", "....#", ".##.#", "#..##", "#...#", "#...#", ".####"},
	'e': {".....", ".....", ".###.", "#...#", "#####", "#....", ".###."},
	'f': {"..##.", ".#..#", ".#...", "###..", ".#...", ".#...", ".#..."},
	'g': {".....", ".....", ".####", "#...#", "#...#", "#...#", ".####", "....#", ".###."},
	'h': {"#....", "#....", "#.##.", "##..#", "#...#", "#...#", "#...#"},
	'i': {"..#..", ".....", ".##..", "..#..", "..#..", "..#..", ".###."},
	'j': {"...#.", ".....", "..##.", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."},
	'k': {"#....", "#....", "#..#.", "#.#..", "##...", "#.#..", "#..#."},
	'l': {".##..", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."},
	'm': {".....", ".....", "##.#.", "#.#.#", "#.#.#", "#...#", "#...#"},
	'n': {".....", ".....", "#.##.", "##..#", "#...#", "#...#", "#...#"},
	'o': {".....", ".....", ".###.", "#...#", "#...#", "#...#", ".###."},
	'p': {".....", ".....", "####.", "#...#", "#...#", "#...#", "####.", "#....", "#...."},
	'q': {".....", ".....", ".####", "#...#", "#...#", "#...#", ".####", "....#", "....#"},
	'r': {".....", ".....", "#.##.", "##..#", "#....", "#....", "#...."},
	's': {".....", ".....", ".####", "#....", ".###.", "....#", "####."},
	't': {".#...", ".#...", "###..", ".#...", ".#...", ".#..#", "..##."},
	'u': {".....", ".....", "#...#", "#...#", "#...#", "#..##", ".##.#"},
	'v': {".....", ".....", "#...#", "#...#", "#...#", ".#.#.", "..#.."},
	'w': {".....", ".....", "#...#", "#...#", "#.#.#", "#.#.#", ".#.#."},
	'x': {".....", ".....", "#...#", ".#.#.", "..#..", ".#.#.", "#...#"},
	'y': {".....", ".....", "#...#", "#...#", "#...#", "#...#", ".####", "....#", ".###."},
	'z': {".....", ".....", "#####", "...#.", "..#..", ".#...", "#####"},
	'.': {".....", ".....", ".....", ".....", ".....", ".##..", ".##.."},
	',': {".....", ".....", ".....", ".....", ".....", ".##..", ".##..", "..#..", ".#..."},
	':': {".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."},
	'/': {".....", "....#", "...#.", "..#..", ".#...", "#....", "....."},
	'(': {"...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."},
	')': {".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."},
	'-': {".....", ".....", ".....", "#####", ".....", ".....", "....."},
	'=': {".....", ".....", "#####", ".....", "#####", ".....", "....."},
}
