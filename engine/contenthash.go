package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"math"
	"slices"
)

// contentHash writes JSON-like values into a SHA-256 so that two values
// hash alike exactly when the CUE would be given the same thing: map keys
// in order, and every leaf with its type, since JSON's text does not tell
// an int64 1 from a float64 1.0 and the CUE does (1.0 is no int). Every
// string and list is written with its length first, so that no two
// sequences of values share a text.
type contentHash struct {
	h   hash.Hash
	buf [9]byte
	// leaf, when set, is what a string leaf (not a map key) is written
	// as.
	leaf func(string) string
}

func newContentHash() *contentHash { return &contentHash{h: sha256.New()} }

// sum is the hash of what was written, as hex.
func (c *contentHash) sum() string { return hex.EncodeToString(c.h.Sum(nil)) }

func (c *contentHash) tag(t byte, n uint64) {
	c.buf[0] = t
	binary.LittleEndian.PutUint64(c.buf[1:], n)
	_, _ = c.h.Write(c.buf[:])
}

// str writes one string.
func (c *contentHash) str(s string) {
	c.tag('s', uint64(len(s)))
	_, _ = c.h.Write([]byte(s))
}

// value writes a JSON-like value; a nil map or list is null, as JSON has
// it. A leaf of another type (there is none in
// a decoded document) is written by its JSON with a tag of its own.
func (c *contentHash) value(v any) {
	switch x := v.(type) {
	case nil:
		c.tag('z', 0)
	case bool:
		if x {
			c.tag('b', 1)
		} else {
			c.tag('b', 0)
		}
	case string:
		if c.leaf != nil {
			x = c.leaf(x)
		}
		c.str(x)
	case int64:
		c.tag('i', uint64(x))
	case int:
		c.tag('i', uint64(x))
	case float64:
		c.tag('f', math.Float64bits(x))
	case json.Number:
		c.tag('n', 0)
		c.str(string(x))
	case []any:
		if x == nil {
			c.tag('z', 0)
			return
		}
		c.tag('l', uint64(len(x)))
		for _, e := range x {
			c.value(e)
		}
	case map[string]any:
		if x == nil {
			c.tag('z', 0)
			return
		}
		c.tag('m', uint64(len(x)))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			c.str(k)
			c.value(x[k])
		}
	default:
		data, err := json.Marshal(x)
		if err != nil {
			data = []byte(err.Error())
		}
		c.tag('x', 0)
		c.str(fmt.Sprintf("%T", x))
		c.str(string(data))
	}
}
