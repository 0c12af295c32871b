package k8s

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/cuetrainer/cuetrainer/engine/internal/value"
	"k8s.io/apimachinery/pkg/api/resource"
)

// quantities parses every resource quantity found under a `limits`,
// `requests` or `overhead` map of the given objects: CUE cannot parse "500m" or "1Gi", so
// the engine gives the rules each quantity's value (rounded up, as
// resource.Quantity.Value does) and milli-value, keyed by its text.
func Quantities(objs ...any) map[string]any {
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
				walk(c, k == "limits" || k == "requests" || k == "overhead")
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

// canonicalQuantity is a quantity's canonical text, as resource.Quantity
// marshals it; ok false for what is no quantity.
func canonicalQuantity(v any) (string, bool) {
	var text string
	switch q := v.(type) {
	case string:
		text = q
	case json.Number:
		text = q.String()
	case int64:
		text = strconv.FormatInt(q, 10)
	case int:
		text = strconv.Itoa(q)
	case float64:
		text = strconv.FormatFloat(q, 'f', -1, 64)
	default:
		return "", false
	}
	q, err := resource.ParseQuantity(text)
	if err != nil {
		return "", false
	}
	return q.String(), true
}

// canonicalObject is a copy of an object with every quantity it holds in
// canonical form, as its typed Go object marshals: those of resource lists
// (limits, requests), and a volume's sizeLimit and an env's divisor.
func CanonicalObject(obj map[string]any) map[string]any {
	out := value.DeepCopy(obj).(map[string]any)
	Canonicalize(out)
	return out
}

// canonicalize writes the quantities of obj in canonical form, in place
// (canonicalObject).
func Canonicalize(obj map[string]any) {
	canonicalQuantities(obj, false)
	var fields func(v any)
	fields = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				switch k {
				case "sizeLimit", "divisor":
					if q, ok := canonicalQuantity(c); ok {
						x[k] = q
						continue
					}
				case "metadata", "data", "stringData", "binaryData":
					continue // names and data, not quantities
				}
				fields(c)
			}
		case []any:
			for _, c := range x {
				fields(c)
			}
		}
	}
	fields(obj)
}

// canonicalQuantities writes every quantity of a resource list (a map
// under `limits` or `requests`) in its canonical form, as the typed objects
// of a controller marshal them.
func canonicalQuantities(v any, resources bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if resources {
				if q, ok := canonicalQuantity(c); ok {
					x[k] = q
				}
				continue
			}
			canonicalQuantities(c, k == "limits" || k == "requests")
		}
	case []any:
		for _, c := range x {
			canonicalQuantities(c, false)
		}
	}
}
