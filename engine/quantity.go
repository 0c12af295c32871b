package engine

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
)

// quantities parses every resource quantity found under a `limits` or
// `requests` map of the given objects: CUE cannot parse "500m" or "1Gi", so
// the engine gives the rules each quantity's value (rounded up, as
// resource.Quantity.Value does) and milli-value, keyed by its text.
func quantities(objs ...any) map[string]any {
	out := map[string]any{}
	var walk func(v any, resources bool)
	walk = func(v any, resources bool) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if resources {
					addQuantity(out, c)
					continue
				}
				walk(c, k == "limits" || k == "requests")
			}
		case []any:
			for _, c := range x {
				walk(c, false)
			}
		}
	}
	for _, o := range objs {
		walk(o, false)
	}
	return out
}

func addQuantity(out map[string]any, v any) {
	var text string
	switch x := v.(type) {
	case string:
		text = x
	case int, int32, int64, uint64, float64, json.Number:
		text = fmt.Sprint(x)
	default:
		return
	}
	if _, done := out[text]; done {
		return
	}
	q, err := resource.ParseQuantity(text)
	if err != nil {
		return
	}
	out[text] = map[string]any{"value": q.Value(), "milliValue": q.MilliValue()}
}
