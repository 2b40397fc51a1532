package ddbproxy

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strings"
	"unicode/utf8"
)

// kind says which capacity an operation consumes.
type kind int

const (
	kindControl kind = iota // table management and everything else: no request units
	kindRead
	kindWrite
)

// kinds are the data operations, by the capacity they consume.
var kinds = map[string]kind{
	"GetItem": kindRead, "BatchGetItem": kindRead, "Query": kindRead, "Scan": kindRead, "TransactGetItems": kindRead,
	"PutItem": kindWrite, "UpdateItem": kindWrite, "DeleteItem": kindWrite, "BatchWriteItem": kindWrite,
	"TransactWriteItems": kindWrite,
}

func kindOf(op string) kind { return kinds[op] }

// IsData reports whether op reads or writes items (and so consumes request units).
func IsData(op string) bool { return kindOf(op) != kindControl }

// Counts are the requests seen, by operation name (PutItem, TransactWriteItems, …).
type Counts map[string]OpCount

// OpCount is what the requests of one operation added up to.
type OpCount struct {
	// Requests is how many requests completed, errors included.
	Requests int64 `json:"requests"`
	// Errors is how many of them were answered with an error; ErrorTypes breaks them down by the error's type
	// (ConditionalCheckFailedException) or, without one, by HTTP status.
	Errors     int64            `json:"errors,omitempty"`
	ErrorTypes map[string]int64 `json:"errorTypes,omitempty"`
	// ReadUnits and WriteUnits are the request units consumed, as the answers reported them plus the estimates.
	ReadUnits  float64 `json:"readUnits"`
	WriteUnits float64 `json:"writeUnits"`
	// Estimated is how many requests' units the proxy estimated: failed conditional writes, which DynamoDB charges
	// the existing item's size in 1 KB units (at least 1) but whose error answer reports no capacity.
	Estimated int64 `json:"estimated,omitempty"`
	// Unreported is how many data requests reported no capacity and could not be estimated (for example a
	// cancelled transaction); their units are missing from ReadUnits and WriteUnits.
	Unreported int64 `json:"unreported,omitempty"`
}

// delta is one request's contribution to an OpCount.
type delta struct {
	read, write           float64
	errType               string
	estimated, unreported bool
}

func (c *OpCount) add(d delta) {
	c.Requests++
	c.ReadUnits += d.read
	c.WriteUnits += d.write
	if d.errType != "" {
		c.Errors++
		if c.ErrorTypes == nil {
			c.ErrorTypes = map[string]int64{}
		}
		c.ErrorTypes[d.errType]++
	}
	if d.estimated {
		c.Estimated++
	}
	if d.unreported {
		c.Unreported++
	}
}

// plus returns c with o added.
func (c OpCount) plus(o OpCount, sign float64) OpCount {
	s := int64(sign)
	c.Requests += s * o.Requests
	c.Errors += s * o.Errors
	c.ReadUnits += sign * o.ReadUnits
	c.WriteUnits += sign * o.WriteUnits
	c.Estimated += s * o.Estimated
	c.Unreported += s * o.Unreported
	if len(o.ErrorTypes) > 0 {
		types := maps.Clone(c.ErrorTypes)
		if types == nil {
			types = map[string]int64{}
		}
		for k, v := range o.ErrorTypes {
			types[k] += s * v
			if types[k] == 0 {
				delete(types, k)
			}
		}
		c.ErrorTypes = types
	}
	return c
}

func (c Counts) clone() Counts {
	out := make(Counts, len(c))
	for k, v := range c {
		v.ErrorTypes = maps.Clone(v.ErrorTypes)
		out[k] = v
	}
	return out
}

// Sub returns what happened between the snapshot prev and c: c minus prev, operation by operation. Operations with
// no request in between are left out.
func (c Counts) Sub(prev Counts) Counts {
	out := Counts{}
	for op, v := range c {
		d := v.plus(prev[op], -1)
		if d.Requests != 0 {
			out[op] = d
		}
	}
	return out
}

// Add returns c and o added up, operation by operation.
func (c Counts) Add(o Counts) Counts {
	out := c.clone()
	for op, v := range o {
		out[op] = out[op].plus(v, 1)
	}
	return out
}

// Total adds up every operation.
func (c Counts) Total() OpCount {
	var t OpCount
	for _, v := range c {
		t = t.plus(v, 1)
	}
	return t
}

// Data returns only the data operations (those that read or write items).
func (c Counts) Data() Counts {
	out := Counts{}
	for op, v := range c {
		if IsData(op) {
			out[op] = v
		}
	}
	return out
}

// consumed is one ConsumedCapacity element of an answer.
type consumed struct {
	CapacityUnits      float64 `json:"CapacityUnits"`
	ReadCapacityUnits  float64 `json:"ReadCapacityUnits"`
	WriteCapacityUnits float64 `json:"WriteCapacityUnits"`
}

// usage works out one request's contribution from its operation, the answer's status and the answer's body.
func usage(op string, status int, body []byte) delta {
	k := kindOf(op)
	if status < 200 || status > 299 {
		return errorUsage(op, k, status, body)
	}
	if k == kindControl {
		return delta{}
	}
	var ans struct {
		ConsumedCapacity json.RawMessage `json:"ConsumedCapacity"`
	}
	if json.Unmarshal(body, &ans) != nil || len(ans.ConsumedCapacity) == 0 || string(ans.ConsumedCapacity) == "null" {
		return delta{unreported: true}
	}
	var list []consumed
	if ans.ConsumedCapacity[0] == '[' {
		if json.Unmarshal(ans.ConsumedCapacity, &list) != nil {
			return delta{unreported: true}
		}
	} else {
		var one consumed
		if json.Unmarshal(ans.ConsumedCapacity, &one) != nil {
			return delta{unreported: true}
		}
		list = []consumed{one}
	}
	var d delta
	for _, c := range list {
		switch {
		case c.ReadCapacityUnits != 0 || c.WriteCapacityUnits != 0:
			d.read += c.ReadCapacityUnits
			d.write += c.WriteCapacityUnits
		case k == kindRead:
			d.read += c.CapacityUnits
		default:
			d.write += c.CapacityUnits
		}
	}
	return d
}

// errorUsage is the contribution of an error answer.
func errorUsage(op string, k kind, status int, body []byte) delta {
	var e struct {
		Type string                     `json:"__type"`
		Item map[string]json.RawMessage `json:"Item"`
	}
	_ = json.Unmarshal(body, &e)
	name := e.Type
	if i := strings.LastIndexByte(name, '#'); i >= 0 {
		name = name[i+1:]
	}
	if name == "" {
		name = fmt.Sprintf("HTTP %d", status)
	}
	d := delta{errType: name}
	switch {
	case k == kindControl:
	case name == "ConditionalCheckFailedException" && (op == "PutItem" || op == "UpdateItem" || op == "DeleteItem"):
		units := 1.0
		if len(e.Item) > 0 {
			if size, err := ItemSize(e.Item); err == nil {
				units = max(1, math.Ceil(float64(size)/1024))
			}
		}
		d.write, d.estimated = units, true
	case name == "TransactionCanceledException":
		d.unreported = true
	}
	return d
}

// ItemSize is the size of an item in DynamoDB's JSON wire format ({"pk":{"S":"…"}, …}) by DynamoDB's documented
// rules: each attribute name's UTF-8 length plus its value's size. A string is its UTF-8 length; a number about one
// byte per two significant digits plus one; a binary its byte length; a boolean or null 1 byte; a list or map 3
// bytes plus 1 byte per element plus the elements (and, for a map, the element names); a set the sum of its
// elements.
func ItemSize(item map[string]json.RawMessage) (int, error) {
	n := 0
	for name, v := range item {
		s, err := valueSize(v)
		if err != nil {
			return 0, fmt.Errorf("attribute %s: %w", name, err)
		}
		n += len(name) + s
	}
	return n, nil
}

func valueSize(raw json.RawMessage) (int, error) {
	var v map[string]json.RawMessage
	if err := json.Unmarshal(raw, &v); err != nil || len(v) != 1 {
		return 0, fmt.Errorf("not an attribute value: %s", raw)
	}
	for typ, x := range v {
		switch typ {
		case "S":
			var s string
			err := json.Unmarshal(x, &s)
			return len(s), err
		case "N":
			var s string
			err := json.Unmarshal(x, &s)
			return numberSize(s), err
		case "B":
			return binarySize(x)
		case "BOOL", "NULL":
			return 1, nil
		case "SS", "NS", "BS":
			var elems []json.RawMessage
			if err := json.Unmarshal(x, &elems); err != nil {
				return 0, err
			}
			n := 0
			for _, e := range elems {
				var s string
				if err := json.Unmarshal(e, &s); err != nil {
					return 0, err
				}
				switch typ {
				case "SS":
					n += len(s)
				case "NS":
					n += numberSize(s)
				default:
					b, err := base64.StdEncoding.DecodeString(s)
					if err != nil {
						return 0, err
					}
					n += len(b)
				}
			}
			return n, nil
		case "L":
			var elems []json.RawMessage
			if err := json.Unmarshal(x, &elems); err != nil {
				return 0, err
			}
			n := 3
			for _, e := range elems {
				s, err := valueSize(e)
				if err != nil {
					return 0, err
				}
				n += 1 + s
			}
			return n, nil
		case "M":
			var m map[string]json.RawMessage
			if err := json.Unmarshal(x, &m); err != nil {
				return 0, err
			}
			n := 3
			for k, e := range m {
				s, err := valueSize(e)
				if err != nil {
					return 0, err
				}
				n += 1 + len(k) + s
			}
			return n, nil
		}
		return 0, fmt.Errorf("unknown attribute type %q", typ)
	}
	return 0, nil
}

func binarySize(x json.RawMessage) (int, error) {
	var s string
	if err := json.Unmarshal(x, &s); err != nil {
		return 0, err
	}
	b, err := base64.StdEncoding.DecodeString(s)
	return len(b), err
}

// numberSize approximates a number's stored size: its significant digits (leading and trailing zeros dropped)
// halved, rounded up, plus one byte.
func numberSize(s string) int {
	s = strings.TrimLeft(s, "+-")
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	s = strings.ReplaceAll(s, ".", "")
	s = strings.Trim(s, "0")
	digits := utf8.RuneCountInString(s)
	if digits == 0 {
		return 1
	}
	return (digits+1)/2 + 1
}
