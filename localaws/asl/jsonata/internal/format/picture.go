package format

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/transferflow/orchestrator/localaws/asl/jsonata/internal/value"
)

// pictureKind is the numbering of an integer picture's primary format token (XPath F&O 3.1, fn:format-integer).
type pictureKind int

const (
	pictureDecimal  pictureKind = iota // a decimal digit pattern: "0", "#,##0", "000", "١"
	pictureLetters                     // "a", "A": a, b, …, z, aa, ab, …
	pictureRoman                       // "i", "I"
	pictureWords                       // "w", "W", "Ww"
	pictureSequence                    // another numbering sequence: only a timezone's picture keeps one (as D3134)
)

// letterCase is how letters, roman numerals and words are written.
type letterCase int

const (
	lowerCase letterCase = iota
	upperCase
	titleCase
)

// integerPicture is an analysed picture string of $formatInteger and $parseInteger.
type integerPicture struct {
	kind    pictureKind
	letters letterCase
	ordinal bool // the format modifier starts with "o"

	// A decimal digit pattern: the zero of its digit family, the number of mandatory digits, and its grouping
	// separators: every group digits with sep when the grouping is regular, otherwise seps at their positions.
	zero      rune
	mandatory int
	optional  int // the optional digit signs (#)
	group     int
	sep       rune
	seps      []separator
}

// separator is a grouping separator of a decimal digit pattern and its position: the number of digit signs to its
// right.
type separator struct {
	position int
	char     rune
}

// formatModifier is the grammar of the part of a picture after its last ";" (XPath F&O 3.1, 4.6.1).
var formatModifier = regexp.MustCompile(`^(?:[co](?:\(.+\))?)?[at]?$`)

// analyseIntegerPicture reads a picture string. The error of a picture that is not one is JSONata's when it has one
// (a numbering sequence other than the supported ones, mixed digit families), the XPath rule otherwise.
func analyseIntegerPicture(picture string) (*integerPicture, error) {
	p := &integerPicture{}
	primary := picture
	if i := strings.LastIndexByte(picture, ';'); i >= 0 {
		primary = picture[:i]
		modifier := picture[i+1:]
		if !formatModifier.MatchString(modifier) {
			return nil, fmt.Errorf("the format modifier %q of the picture %q is not c, o, c(…), o(…), optionally followed by a or t", modifier, picture)
		}
		p.ordinal = strings.HasPrefix(modifier, "o")
	}
	switch primary {
	case "":
		return nil, fmt.Errorf("the picture %q has no primary format token", picture)
	case "a":
		p.kind = pictureLetters
	case "A":
		p.kind, p.letters = pictureLetters, upperCase
	case "i":
		p.kind = pictureRoman
	case "I":
		p.kind, p.letters = pictureRoman, upperCase
	case "w":
		p.kind = pictureWords
	case "W":
		p.kind, p.letters = pictureWords, upperCase
	case "Ww":
		p.kind, p.letters = pictureWords, titleCase
	default:
		if err := p.analyseDigits(primary); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// analyseDigits reads a decimal digit pattern: optional digit signs (#), then mandatory digits of one Unicode
// digit family, with grouping separators (any other character that is not a letter or a number) between them.
func (p *integerPicture) analyseDigits(token string) error {
	if strings.IndexFunc(token, isDecimalDigit) < 0 {
		// Other numbering sequences (α, ①, …) are implementation-defined, and JSONata has none.
		return &value.Error{Code: "D3130", Value: token}
	}
	runes := []rune(token)
	var digits int // the digit signs (mandatory and optional) read so far from the right
	for i := len(runes) - 1; i >= 0; i-- {
		r := runes[i]
		switch {
		case isDecimalDigit(r):
			zero := digitZero(r)
			if p.zero != 0 && zero != p.zero {
				return &value.Error{Code: "D3131"}
			}
			p.zero = zero
			p.mandatory++
			digits++
		case r == '#':
			digits++
			p.optional++
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			return fmt.Errorf("the decimal digit pattern %q has the character %q, which is neither a digit, # nor a grouping separator", token, r)
		default:
			if i == 0 || i == len(runes)-1 {
				return fmt.Errorf("the decimal digit pattern %q starts or ends with a grouping separator", token)
			}
			if !isDigitSign(runes[i-1]) || !isDigitSign(runes[i+1]) {
				return fmt.Errorf("the decimal digit pattern %q has two grouping separators next to each other", token)
			}
			p.seps = append(p.seps, separator{position: digits, char: r})
		}
	}
	// An optional digit sign after a mandatory one (read from the left) is refused: "#" must come first.
	if i := strings.IndexFunc(token, isDecimalDigit); strings.ContainsRune(token[i:], '#') {
		return fmt.Errorf("in the decimal digit pattern %q, an optional digit sign (#) follows a mandatory digit", token)
	}
	p.kind = pictureDecimal
	p.regularGrouping()
	return nil
}

// regularGrouping decides, as JSONata does, whether the grouping separators repeat: they are all the same
// character and their positions are the first multiples of their greatest common divisor (3 and 6 in "#,###,##0").
// Then the separator is repeated to the left of the last one (1,234,567,890 for "#,##0"); otherwise separators are
// written at their positions only.
func (p *integerPicture) regularGrouping() {
	if len(p.seps) == 0 {
		return
	}
	g := 0
	for _, s := range p.seps {
		if s.char != p.seps[0].char {
			return
		}
		g = gcd(g, s.position)
	}
	at := map[int]bool{}
	for _, s := range p.seps {
		at[s.position] = true
	}
	for k := 1; k <= len(p.seps); k++ {
		if !at[k*g] {
			return
		}
	}
	p.group, p.sep, p.seps = g, p.seps[0].char, nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func isDecimalDigit(r rune) bool { return unicode.Is(unicode.Nd, r) }

func isDigitSign(r rune) bool { return r == '#' || isDecimalDigit(r) }

// digitZero returns the zero of the digit family of a decimal digit (category Nd): Unicode encodes each family
// as ten consecutive code points from zero to nine, and the ranges of the Nd table are whole families.
func digitZero(r rune) rune {
	for _, rg := range unicode.Nd.R16 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); r >= lo && r <= hi {
			return lo + (r-lo)/10*10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); r >= lo && r <= hi {
			return lo + (r-lo)/10*10
		}
	}
	return '0'
}
