package jsonata

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"

	lib "github.com/blues/jsonata-go"
)

// ErrNotJSON is the error of an evaluation whose result is not a JSON value (a function): AWS calls it "an
// unsupported result type".
var ErrNotJSON = errors.New("which is not a JSON value")

// Coded returns an evaluation error as JSONata 2.0 (the evaluator AWS runs) reports it, its code and its message
// ("T2001: The left side of the \"+\" operator must evaluate to a number"), as AWS quotes it in the cause of a
// States.QueryEvaluationError ("… threw an error during evaluation. T1006: Attempted to invoke a non-function").
// ok is false for an error the library reports without what JSONata's message needs (the values of a type
// mismatch, for example), or that JSONata reports differently.
func Coded(err error) (text string, ok bool) {
	if err == nil {
		return "", false
	}
	var ev *lib.EvalError
	if errors.As(err, &ev) {
		op := strconv.Quote(ev.Value)
		switch ev.Type {
		case lib.ErrNonNumberLHS:
			return "T2001: The left side of the " + op + " operator must evaluate to a number", true
		case lib.ErrNonNumberRHS:
			return "T2002: The right side of the " + op + " operator must evaluate to a number", true
		case lib.ErrNonIntegerLHS:
			return "T2003: The left side of the range operator (..) must evaluate to an integer", true
		case lib.ErrNonIntegerRHS:
			return "T2004: The right side of the range operator (..) must evaluate to an integer", true
		case lib.ErrNonComparableLHS, lib.ErrNonComparableRHS:
			return "T2010: The expressions either side of operator " + op + " must evaluate to numeric or string values", true
		case lib.ErrNonCallable:
			return "T1006: Attempted to invoke a non-function", true
		case lib.ErrNonCallablePartial:
			return "T1008: Attempted to partially apply a non-function", true
		case lib.ErrNonCallableApply:
			return "T2006: The right side of the function application operator ~> must be a function", true
		case lib.ErrNonSortable:
			return "T2008: The expressions within an order-by clause must evaluate to numeric or string values", true
		case lib.ErrDuplicateKey:
			return "D1009: Multiple key definitions evaluate to same key: " + strconv.Quote(ev.Value), true
		}
		return "", false
	}
	var at *lib.ArgTypeError
	if errors.As(err, &at) {
		return fmt.Sprintf("T0410: Argument %d of function %q does not match function signature", at.Which, at.Func), true
	}
	if m := uncastable.FindStringSubmatch(err.Error()); m != nil {
		return "D3030: Unable to cast value to a number: " + m[1], true
	}
	return "", false
}

// uncastable is the library's error for $number of a string that is not a number (its value quoted as JSON).
var uncastable = regexp.MustCompile(`^unable to cast (".*") to a number$`)
