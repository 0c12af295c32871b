package engine

// The load's trial renders (probe.go) are renders with an observer
// (renderObserver, render.go): it looks at the objects between the
// render's stages for what only an admin's CUE can get wrong, so that a
// render after the load, which has none, does not pay for it.

// trialRenders is the observer of the load's trial renders: an admin's
// edit that a later group overwrites (overwrites.go), and one that makes
// an object the cluster refuses (refusals.go).
type trialRenders struct{}

// trialRender are the options of a trial render.
var trialRender = RenderOptions{observer: trialRenders{}}

func (t trialRenders) edited(rn *rendering, objects map[string]map[string]any) bool {
	return t.checkOverwrites(rn, objects)
}

func (t trialRenders) fitted(rn *rendering, objects map[string]map[string]any) bool {
	return t.checkRefusals(rn, objects)
}
