package value

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"unsafe"
)

// Packed values.
//
// The memos keep thousands of objects (rendered JobSets, mutated
// TrainJobs) for as long as the process runs. Kept as maps and lists, each
// is hundreds of small pointer-holding allocations, and the garbage
// collector walks all of them on every cycle: in a webhook whose requests
// all differ, that walk was what made requests slow (docs/bench-profile.md).
// A packed value is the same value in one byte slice, which the collector
// does not look into; unpacking it is a deep copy.

// Packed is a JSON-like value (maps, lists, strings, numbers, booleans,
// null) in one byte slice: each value a tag and its content. Its bytes are
// never changed once packed, so that the strings unpacked from it can share
// them.
type Packed []byte

// The tags of a packed value.
const (
	packNull    = 'z'
	packTrue    = 't'
	packFalse   = 'f'
	packString  = 's'
	packNumber  = 'N' // json.Number, its text
	packInt64   = 'i'
	packInt     = 'I'
	packFloat64 = 'd'
	packMap     = 'm' // the count, then key and value by key
	packList    = 'l' // the count, then the items
	packNilMap  = 'M' // a nil map[string]any
	packNilList = 'L' // a nil []any
)

// Pack packs v; false when v holds a value of another type than the JSON
// reader's and the engine's (map[string]any, []any, string, bool, nil,
// int64, int, float64, json.Number), which a memo then does not keep.
func Pack(v any) (Packed, bool) {
	b, ok := appendPacked(nil, v)
	return Packed(b), ok
}

func appendPacked(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, packNull), true
	case bool:
		if x {
			return append(b, packTrue), true
		}
		return append(b, packFalse), true
	case string:
		return appendPackedString(append(b, packString), x), true
	case json.Number:
		return appendPackedString(append(b, packNumber), string(x)), true
	case int64:
		return binary.AppendVarint(append(b, packInt64), x), true
	case int:
		return binary.AppendVarint(append(b, packInt), int64(x)), true
	case float64:
		return binary.LittleEndian.AppendUint64(append(b, packFloat64), math.Float64bits(x)), true
	case map[string]any:
		if x == nil {
			return append(b, packNilMap), true
		}
		b = binary.AppendUvarint(append(b, packMap), uint64(len(x)))
		for k, c := range x {
			b = appendPackedString(b, k)
			var ok bool
			if b, ok = appendPacked(b, c); !ok {
				return b, false
			}
		}
		return b, true
	case []any:
		if x == nil {
			return append(b, packNilList), true
		}
		b = binary.AppendUvarint(append(b, packList), uint64(len(x)))
		for _, c := range x {
			var ok bool
			if b, ok = appendPacked(b, c); !ok {
				return b, false
			}
		}
		return b, true
	}
	return b, false
}

func appendPackedString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// Value is a new copy of the packed value: maps and lists of its own, its
// strings sharing the packed bytes.
func (p Packed) Value() any {
	v, _ := p.read(0)
	return v
}

// read reads the value at offset i, and returns the offset after it.
func (p Packed) read(i int) (any, int) {
	tag := p[i]
	i++
	switch tag {
	case packNull:
		return nil, i
	case packTrue:
		return true, i
	case packFalse:
		return false, i
	case packString:
		return p.readString(i)
	case packNumber:
		s, i := p.readString(i)
		return json.Number(s), i
	case packInt64:
		n, w := binary.Varint(p[i:])
		return n, i + w
	case packInt:
		n, w := binary.Varint(p[i:])
		return int(n), i + w
	case packFloat64:
		return math.Float64frombits(binary.LittleEndian.Uint64(p[i:])), i + 8
	case packNilMap:
		return map[string]any(nil), i
	case packNilList:
		return []any(nil), i
	case packMap:
		n, w := binary.Uvarint(p[i:])
		i += w
		m := make(map[string]any, n)
		for range n {
			var k string
			k, i = p.readString(i)
			m[k], i = p.read(i)
		}
		return m, i
	case packList:
		n, w := binary.Uvarint(p[i:])
		i += w
		l := make([]any, n)
		for j := range l {
			l[j], i = p.read(i)
		}
		return l, i
	}
	panic("engine: a packed value with tag " + string(rune(tag)))
}

func (p Packed) readString(i int) (string, int) {
	n, w := binary.Uvarint(p[i:])
	i += w
	if n == 0 {
		return "", i
	}
	return unsafe.String(&p[i], int(n)), i + int(n)
}
