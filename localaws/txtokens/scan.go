package txtokens

import (
	"encoding/binary"
	"encoding/json"
	"hash/maphash"
	"slices"
)

// seed keys the process's hashes of tokens and items: they are compared only within the process.
var seed = maphash.MakeSeed()

// maxDepth bounds the nesting split follows (DynamoDB allows 32 levels in an item).
const maxDepth = 64

// split parses a TransactWriteItems request: its token, the request without it, and a digest of its items that
// does not depend on the order of object members (the AWS SDK writes maps, such as ExpressionAttributeValues, in
// Go's random map order). It reads the bytes once, building nothing: the requests are a few kilobytes and every
// transaction of the stack goes through it. ok is false when the request carries no token, has no items or cannot
// be read (the server then answers it as it is).
func split(body []byte) (token string, stripped []byte, items digest, ok bool) {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return "", nil, 0, false
	}
	i = skipSpace(body, i+1)
	tokenAt, tokenEnd := -1, -1
	var tokenValue []byte
	haveItems := false
	for i < len(body) && body[i] != '}' {
		keyAt := i
		keyEnd, good := skipString(body, i)
		if !good {
			return "", nil, 0, false
		}
		i = skipSpace(body, keyEnd)
		if i >= len(body) || body[i] != ':' {
			return "", nil, 0, false
		}
		valueAt := skipSpace(body, i+1)
		h, valueEnd, good := hashValue(body, valueAt, 0)
		if !good {
			return "", nil, 0, false
		}
		switch string(body[keyAt:keyEnd]) {
		case `"ClientRequestToken"`:
			tokenAt, tokenEnd, tokenValue = keyAt, valueEnd, body[valueAt:valueEnd]
		case `"TransactItems"`:
			items, haveItems = digest(h), true
		}
		i = skipSpace(body, valueEnd)
		if i < len(body) && body[i] == ',' {
			i = skipSpace(body, i+1)
			if i >= len(body) || body[i] == '}' {
				return "", nil, 0, false // a trailing comma
			}
		}
	}
	if i >= len(body) || skipSpace(body, i+1) != len(body) || tokenAt < 0 || !haveItems {
		return "", nil, 0, false
	}
	if json.Unmarshal(tokenValue, &token) != nil || token == "" {
		return "", nil, 0, false
	}
	// The member goes with one comma: the one after it, or else the one before it.
	from, to := tokenAt, tokenEnd
	if j := skipSpace(body, to); body[j] == ',' {
		to = j + 1
	} else if j := lastNonSpace(body, from); body[j] == ',' {
		from = j
	}
	stripped = make([]byte, 0, len(body)-(to-from))
	stripped = append(append(stripped, body[:from]...), body[to:]...)
	return token, stripped, items, true
}

// hashValue returns a hash of the JSON value at b[i] in which the members of each object count in no particular
// order, and the index after the value. Scalars hash as their text (the SDK writes a given string or number the
// same way each time).
func hashValue(b []byte, i, depth int) (uint64, int, bool) {
	if i >= len(b) || depth > maxDepth {
		return 0, i, false
	}
	switch b[i] {
	case '{':
		var buf [16]uint64
		members := buf[:0]
		i = skipSpace(b, i+1)
		for i < len(b) && b[i] != '}' {
			keyEnd, ok := skipString(b, i)
			if !ok {
				return 0, i, false
			}
			key := b[i:keyEnd]
			i = skipSpace(b, keyEnd)
			if i >= len(b) || b[i] != ':' {
				return 0, i, false
			}
			h, end, ok := hashValue(b, skipSpace(b, i+1), depth+1)
			if !ok {
				return 0, i, false
			}
			var m maphash.Hash
			m.SetSeed(seed)
			_, _ = m.Write(key)
			writeUint64(&m, h)
			members = append(members, m.Sum64())
			if i = skipSpace(b, end); i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
			}
		}
		if i >= len(b) {
			return 0, i, false
		}
		slices.Sort(members)
		var h maphash.Hash
		h.SetSeed(seed)
		_ = h.WriteByte('{')
		for _, m := range members {
			writeUint64(&h, m)
		}
		return h.Sum64(), i + 1, true
	case '[':
		var h maphash.Hash
		h.SetSeed(seed)
		_ = h.WriteByte('[')
		i = skipSpace(b, i+1)
		for i < len(b) && b[i] != ']' {
			e, end, ok := hashValue(b, i, depth+1)
			if !ok {
				return 0, i, false
			}
			writeUint64(&h, e)
			if i = skipSpace(b, end); i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
			}
		}
		if i >= len(b) {
			return 0, i, false
		}
		return h.Sum64(), i + 1, true
	case '"':
		end, ok := skipString(b, i)
		if !ok {
			return 0, i, false
		}
		return maphash.Bytes(seed, b[i:end]), end, true
	default: // a number, true, false or null
		end := i
		for end < len(b) && !isDelimiter(b[end]) {
			end++
		}
		if end == i {
			return 0, i, false
		}
		return maphash.Bytes(seed, b[i:end]), end, true
	}
}

func writeUint64(h *maphash.Hash, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	_, _ = h.Write(b[:])
}

// skipString returns the index after the JSON string at b[i].
func skipString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return i, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// lastNonSpace is the index of the last byte before i that is not white space (0 when there is none).
func lastNonSpace(b []byte, i int) int {
	for i--; i > 0 && isSpace(b[i]); i-- {
	}
	return max(i, 0)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isDelimiter(c byte) bool { return isSpace(c) || c == ',' || c == '}' || c == ']' || c == ':' }
