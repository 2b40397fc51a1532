package format

import (
	"fmt"
	"strings"
	"testing"
)

// The JSONata test suite's cases are at
// https://github.com/jsonata-js/jsonata/blob/master/test/test-suite/groups/function-formatInteger/formatInteger.json
// and …/function-parseInteger/parseInteger.json ("suite" below).

func TestFormatInteger(t *testing.T) {
	checkCalls(t, []callCase{
		// https://docs.jsonata.org/numeric-functions#formatinteger
		{"doc: words", `$formatInteger(2789, 'w')`, `"two thousand, seven hundred and eighty-nine"`},
		{"doc: roman", `$formatInteger(1999, 'I')`, `"MCMXCIX"`},

		// Decimal digit patterns (suite).
		{"mandatory digits", `$formatInteger(123, '000')`, `"123"`},
		{"padded", `$formatInteger(123, '0000')`, `"0123"`},
		{"negative padded", `$formatInteger(-3, '0000')`, `"-0003"`},
		{"cardinal modifier", `$formatInteger(1234, '0;c')`, `"1234"`},
		{"optional digits", `$formatInteger(1234, '###0')`, `"1234"`},
		{"optional digits unused", `$formatInteger(12, '###0')`, `"12"`},
		{"rounded down", `$formatInteger(12.6, '###0')`, `"12"`},
		{"ordinal rd", `$formatInteger(123, '000;o')`, `"123rd"`},
		{"ordinal st", `$formatInteger(1, '0;o')`, `"1st"`},
		{"ordinal th", `$formatInteger(28, '#0;o')`, `"28th"`},
		{"ordinal thousands", `$formatInteger(1234, '###0;o')`, `"1234th"`},
		{"ordinal teen", `$formatInteger(12, '###0;o')`, `"12th"`},
		{"arabic-indic digits", `$formatInteger(12340, '###١')`, `"١٢٣٤٠"`},
		{"fullwidth digits", `$formatInteger(12340, '###０')`, `"１２３４０"`},
		{"grouping not reached", `$formatInteger(12, '#,##0')`, `"12"`},
		{"one group", `$formatInteger(1200, '#,##0')`, `"1,200"`},
		{"exactly groups", `$formatInteger(120000, '#,##0')`, `"120,000"`},
		{"regular groups repeat", `$formatInteger(12345678, '#,##0')`, `"12,345,678"`},
		{"regular groups repeat again", `$formatInteger(1234567890, '#,##0')`, `"1,234,567,890"`},
		{"two regular separators", `$formatInteger(1234567890, '#,###,##0')`, `"1,234,567,890"`},
		{"different separators do not repeat", `$formatInteger(1234567890, '#:###,##0')`, `"1234:567,890"`},
		{"irregular positions do not repeat", `$formatInteger(1234567890, '##,##,##0')`, `"12345,67,890"`},

		// Edge cases.
		{"zero", `$formatInteger(0, '0')`, `"0"`},
		{"any digit is a mandatory digit", `$formatInteger(5, '19')`, `"05"`},
		{"zero padded and grouped", `$formatInteger(0, '0,000')`, `"0,000"`},
		{"padding is grouped", `$formatInteger(7, '00,000')`, `"00,007"`},
		{"negative grouped", `$formatInteger(-1234567, '#,##0')`, `"-1,234,567"`},
		{"negative fraction rounds down", `$formatInteger(-12.4, '0')`, `"-13"`},
		{"irregular separators need digits to their left", `$formatInteger(12, '##,##,##0')`, `"12"`},
		{"space separator", `$formatInteger(1234567, '# ##0')`, `"1 234 567"`},
		{"digits past 2^53 are JavaScript's", `$formatInteger(1152921504606846976, '0')`, `"1152921504606847000"`},
		{"a twenty-digit number", `$formatInteger(100000000000000000000, '#,##0')`, `"100,000,000,000,000,000,000"`},
		{"devanagari digits grouped", `$formatInteger(1234, '#,०००')`, `"१,२३४"`},
		{"mathematical digits outside the BMP", `$formatInteger(305, '𝟎𝟎𝟎𝟎')`, `"𝟎𝟑𝟎𝟓"`},
		{"ordinal zero", `$formatInteger(0, '0;o')`, `"0th"`},
		{"ordinal nd", `$formatInteger(22, '0;o')`, `"22nd"`},
		{"ordinal 111th", `$formatInteger(111, '0;o')`, `"111th"`},
		{"ordinal grouped", `$formatInteger(1001, '#,##0;o')`, `"1,001st"`},
		{"ordinal negative", `$formatInteger(-1, '0;o')`, `"-1st"`},
		{"ordinal with variant and alphabetic", `$formatInteger(3, '0;o(-er)a')`, `"3rd"`},

		// Roman numerals (suite, then edge cases).
		{"roman zero is empty", `$formatInteger(0, 'I')`, `""`},
		{"roman 1984", `$formatInteger(1984, 'I')`, `"MCMLXXXIV"`},
		{"roman lower", `$formatInteger(99, 'i')`, `"xcix"`},
		{"roman 3999", `$formatInteger(3999, 'I')`, `"MMMCMXCIX"`},
		{"roman thousands repeat M", `$formatInteger(5001, 'I')`, `"MMMMMI"`},
		{"roman negative", `$formatInteger(-4, 'I')`, `"-IV"`},
		{"roman ordinal modifier ignored", `$formatInteger(4, 'i;o')`, `"iv"`},

		// Words, cardinal (suite).
		{"twelve", `$formatInteger(12, 'w')`, `"twelve"`},
		{"twenty", `$formatInteger(20, 'w')`, `"twenty"`},
		{"thirty-four", `$formatInteger(34, 'w')`, `"thirty-four"`},
		{"upper", `$formatInteger(99, 'W')`, `"NINETY-NINE"`},
		{"one hundred", `$formatInteger(100, 'w')`, `"one hundred"`},
		{"upper hundreds", `$formatInteger(555, 'W')`, `"FIVE HUNDRED AND FIFTY-FIVE"`},
		{"title case", `$formatInteger(555, 'Ww')`, `"Five Hundred and Fifty-Five"`},
		{"919", `$formatInteger(919, 'w')`, `"nine hundred and nineteen"`},
		{"730", `$formatInteger(730, 'w')`, `"seven hundred and thirty"`},
		{"1000", `$formatInteger(1000, 'w')`, `"one thousand"`},
		{"3730", `$formatInteger(3730, 'w')`, `"three thousand, seven hundred and thirty"`},
		{"327730", `$formatInteger(327730, 'w')`, `"three hundred and twenty-seven thousand, seven hundred and thirty"`},
		{"4327730", `$formatInteger(4327730, 'w')`, `"four million, three hundred and twenty-seven thousand, seven hundred and thirty"`},
		{"1e12 + 1", `$formatInteger(1000000000001, 'w')`, `"one trillion and one"`},
		{"1234567890123", `$formatInteger(1234567890123, 'w')`, `"one trillion, two hundred and thirty-four billion, five hundred and sixty-seven million, eight hundred and ninety thousand, one hundred and twenty-three"`},
		{"1e15", `$formatInteger(1000000000000000, 'w')`, `"one thousand trillion"`},
		{"1e46", `$formatInteger(1e+46, 'w')`, `"ten billion trillion trillion trillion"`},
		{"1234567890123456", `$formatInteger(1234567890123456, 'w')`, `"one thousand, two hundred and thirty-four trillion, five hundred and sixty-seven billion, eight hundred and ninety million, one hundred and twenty-three thousand, four hundred and fifty-six"`},

		// Words, ordinal (suite).
		{"twelfth", `$formatInteger(12, 'w;o')`, `"twelfth"`},
		{"twentieth", `$formatInteger(20, 'w;o')`, `"twentieth"`},
		{"thirty-fourth", `$formatInteger(34, 'w;o')`, `"thirty-fourth"`},
		{"upper ordinal", `$formatInteger(99, 'W;o')`, `"NINETY-NINTH"`},
		{"hundredth", `$formatInteger(100, 'w;o')`, `"one hundredth"`},
		{"upper hundreds ordinal", `$formatInteger(555, 'W;o')`, `"FIVE HUNDRED AND FIFTY-FIFTH"`},
		{"nineteenth", `$formatInteger(919, 'w;o')`, `"nine hundred and nineteenth"`},
		{"thirtieth", `$formatInteger(730, 'w;o')`, `"seven hundred and thirtieth"`},
		{"thousandth", `$formatInteger(1000, 'w;o')`, `"one thousandth"`},
		{"thirty-first", `$formatInteger(3731, 'w;o')`, `"three thousand, seven hundred and thirty-first"`},
		{"thirteenth", `$formatInteger(327713, 'w;o')`, `"three hundred and twenty-seven thousand, seven hundred and thirteenth"`},
		{"thirty-second", `$formatInteger(4327732, 'w;o')`, `"four million, three hundred and twenty-seven thousand, seven hundred and thirty-second"`},
		{"trillion and first", `$formatInteger(1000000000001, 'w;o')`, `"one trillion and first"`},

		// Words, edge cases.
		{"zero in words", `$formatInteger(0, 'w')`, `"zero"`},
		{"zeroth", `$formatInteger(0, 'w;o')`, `"zeroth"`},
		{"negative words", `$formatInteger(-5, 'w')`, `"-five"`},
		{"title ordinal", `$formatInteger(733, 'Ww;o')`, `"Seven Hundred and Thirty-Third"`},
		{"a million and one", `$formatInteger(1000001, 'w')`, `"one million and one"`},
		{"thousands then hundreds", `$formatInteger(1100, 'w')`, `"one thousand, one hundred"`},

		// Letters (suite, then edge cases).
		{"A", `$formatInteger(1, 'A')`, `"A"`},
		{"l", `$formatInteger(12, 'a')`, `"l"`},
		{"z", `$formatInteger(26, 'a')`, `"z"`},
		{"aa", `$formatInteger(27, 'a')`, `"aa"`},
		{"KN", `$formatInteger(300, 'A')`, `"KN"`},
		{"FZPH", `$formatInteger(123456, 'A')`, `"FZPH"`},
		{"letters zero is empty", `$formatInteger(0, 'a')`, `""`},
		{"letters 702 is zz", `$formatInteger(702, 'a')`, `"zz"`},
		{"letters 703 is aaa", `$formatInteger(703, 'A')`, `"AAA"`},
		{"negative letters", `$formatInteger(-28, 'a')`, `"-ab"`},
	})
}

func TestParseInteger(t *testing.T) {
	checkCalls(t, []callCase{
		// https://docs.jsonata.org/numeric-functions#parseinteger
		{"doc: words", `$parseInteger("twelve thousand, four hundred and seventy-six", 'w')`, `12476`},
		{"doc: grouped", `$parseInteger('12,345,678', '#,##0')`, `12345678`},

		// Decimal digit patterns (suite).
		{"mandatory digits", `$parseInteger('123', '000')`, `123`},
		{"padded", `$parseInteger('0123', '0000')`, `123`},
		{"more digits than the pattern", `$parseInteger('1234', '0')`, `1234`},
		{"optional digits", `$parseInteger('1234', '###0')`, `1234`},
		{"fewer digits", `$parseInteger('12', '###0')`, `12`},
		{"ordinal rd", `$parseInteger('123rd', '000;o')`, `123`},
		{"ordinal st", `$parseInteger('1st', '0;o')`, `1`},
		{"ordinal th", `$parseInteger('28th', '#0;o')`, `28`},
		{"ordinal thousands", `$parseInteger('1234th', '###0;o')`, `1234`},
		{"ordinal teen", `$parseInteger('12th', '###0;o')`, `12`},
		{"arabic-indic digits", `$parseInteger('١٢٣٤٠', '###١')`, `12340`},
		{"fullwidth digits", `$parseInteger('１２３４０', '###０')`, `12340`},
		{"no group", `$parseInteger('12', '#,##0')`, `12`},
		{"one group", `$parseInteger('1,200', '#,##0')`, `1200`},
		{"groups", `$parseInteger('12,345,678', '#,##0')`, `12345678`},
		{"more groups", `$parseInteger('1,234,567,890', '#,##0')`, `1234567890`},
		{"two regular separators", `$parseInteger('1,234,567,890', '#,###,##0')`, `1234567890`},
		{"different separators", `$parseInteger('1234:567,890', '#:###,##0')`, `1234567890`},
		{"irregular positions", `$parseInteger('12345,67,890', '##,##,##0')`, `1234567890`},

		// Roman numerals, words, letters (suite).
		{"roman empty is zero", `$parseInteger('', 'I')`, `0`},
		{"roman 1984", `$parseInteger('MCMLXXXIV', 'I')`, `1984`},
		{"roman lower", `$parseInteger('xcix', 'i')`, `99`},
		{"twelve", `$parseInteger('twelve', 'w')`, `12`},
		{"twenty", `$parseInteger('twenty', 'w')`, `20`},
		{"thirty-four", `$parseInteger('thirty-four', 'w')`, `34`},
		{"upper", `$parseInteger('NINETY-NINE', 'W')`, `99`},
		{"one hundred", `$parseInteger('one hundred', 'w')`, `100`},
		{"upper hundreds", `$parseInteger('FIVE HUNDRED AND FIFTY-FIVE', 'W')`, `555`},
		{"title case", `$parseInteger('Five Hundred and Fifty-Five', 'Ww')`, `555`},
		{"919", `$parseInteger('nine hundred and nineteen', 'w')`, `919`},
		{"730", `$parseInteger('seven hundred and thirty', 'w')`, `730`},
		{"1000", `$parseInteger('one thousand', 'w')`, `1000`},
		{"3730", `$parseInteger('three thousand, seven hundred and thirty', 'w')`, `3730`},
		{"327730", `$parseInteger('three hundred and twenty-seven thousand, seven hundred and thirty', 'w')`, `327730`},
		{"4327730", `$parseInteger('four million, three hundred and twenty-seven thousand, seven hundred and thirty', 'w')`, `4327730`},
		{"1e12 + 1", `$parseInteger('one trillion and one', 'w')`, `1000000000001`},
		{"1234567890123", `$parseInteger('one trillion, two hundred and thirty-four billion, five hundred and sixty-seven million, eight hundred and ninety thousand, one hundred and twenty-three', 'w')`, `1234567890123`},
		{"1e15", `$parseInteger('one thousand trillion', 'w')`, `1000000000000000`},
		{"1e46", `$parseInteger('ten billion trillion trillion trillion', 'w')`, `1e+46`},
		{"twelfth", `$parseInteger('twelfth', 'w;o')`, `12`},
		{"twentieth", `$parseInteger('twentieth', 'w;o')`, `20`},
		{"thirty-fourth", `$parseInteger('thirty-fourth', 'w;o')`, `34`},
		{"upper ordinal", `$parseInteger('NINETY-NINTH', 'W;o')`, `99`},
		{"hundredth", `$parseInteger('one hundredth', 'w;o')`, `100`},
		{"upper hundreds ordinal", `$parseInteger('FIVE HUNDRED AND FIFTY-FIFTH', 'W;o')`, `555`},
		{"nineteenth", `$parseInteger('nine hundred and nineteenth', 'w;o')`, `919`},
		{"thirtieth", `$parseInteger('seven hundred and thirtieth', 'w;o')`, `730`},
		{"title ordinal", `$parseInteger('Seven Hundred and Thirty-Third', 'Ww;o')`, `733`},
		{"thousandth", `$parseInteger('one thousandth', 'w;o')`, `1000`},
		{"thirty-first", `$parseInteger('three thousand, seven hundred and thirty-first', 'w;o')`, `3731`},
		{"thirteenth", `$parseInteger('three hundred and twenty-seven thousand, seven hundred and thirteenth', 'w;o')`, `327713`},
		{"thirty-second", `$parseInteger('four million, three hundred and twenty-seven thousand, seven hundred and thirty-second', 'w;o')`, `4327732`},
		{"trillion and first", `$parseInteger('one trillion and first', 'w;o')`, `1000000000001`},
		{"A", `$parseInteger('A', 'A')`, `1`},
		{"l", `$parseInteger('l', 'a')`, `12`},
		{"z", `$parseInteger('z', 'a')`, `26`},
		{"aa", `$parseInteger('aa', 'a')`, `27`},
		{"KN", `$parseInteger('KN', 'A')`, `300`},
		{"FZPH", `$parseInteger('FZPH', 'A')`, `123456`},

		// Edge cases.
		{"negative", `$parseInteger('-12', '0')`, `-12`},
		{"negative grouped", `$parseInteger('-1,234', '#,##0')`, `-1234`},
		{"minus zero is zero", `$parseInteger('-0', '0')`, `0`},
		{"negative roman", `$parseInteger('-XII', 'I')`, `-12`},
		{"negative words", `$parseInteger('-five', 'w')`, `-5`},
		{"negative letters", `$parseInteger('-ab', 'a')`, `-28`},
		{"roman picture i reads upper case too", `$parseInteger('MCM', 'i')`, `1900`},
		{"words in any case", `$parseInteger('Twenty-ONE', 'w')`, `21`},
		{"words without and", `$parseInteger('one hundred five', 'w')`, `105`},
		{"thousands of trillions", `$parseInteger('one thousand and one trillion', 'w')`, `1001000000000000`},
		{"letters empty is zero", `$parseInteger('', 'a')`, `0`},
		// Separators anywhere between digits are accepted, as JSONata strips them.
		{"separators out of place", `$parseInteger('1,2,3', '#,##0')`, `123`},
		{"regular separator other than a comma", `$parseInteger('1.234.567', '#.##0')`, `1234567`},
	})
}

// TestIntegerErrors: pictures that are not XPath integer pictures, numbers a picture cannot write and text a picture
// cannot have written are errors, with these messages (JSONata's codes where JSONata raises one).
func TestIntegerErrors(t *testing.T) {
	checkCalls(t, []callCase{
		{"empty picture", `$formatInteger(1, '')`, `!!$formatInteger: the picture "" has no primary format token`},
		{"modifier only", `$formatInteger(1, ';o')`, `!!$formatInteger: the picture ";o" has no primary format token`},
		{"unknown modifier", `$formatInteger(1, '0;x')`, `!!$formatInteger: the format modifier "x" of the picture "0;x" is not c, o, c(…), o(…), optionally followed by a or t`},
		// suite: D3130
		{"other numbering sequence", `$formatInteger(123456, 'α')`, `!D3130`},
		{"optional digits only", `$parseInteger('50', '#')`, `!D3130`},
		// suite: D3131
		{"mixed digit families", `$formatInteger(12340, '##0０')`, `!D3131`},
		{"leading separator", `$formatInteger(1, ',000')`, `!!$formatInteger: the decimal digit pattern ",000" starts or ends with a grouping separator`},
		{"trailing separator", `$formatInteger(1, '000,')`, `!!$formatInteger: the decimal digit pattern "000," starts or ends with a grouping separator`},
		{"adjacent separators", `$formatInteger(1, '0,,000')`, `!!$formatInteger: the decimal digit pattern "0,,000" has two grouping separators next to each other`},
		{"optional after mandatory", `$formatInteger(1, '0#')`, `!!$formatInteger: in the decimal digit pattern "0#", an optional digit sign (#) follows a mandatory digit`},
		{"letter in a digit pattern", `$formatInteger(1, '0a0')`, `!!$formatInteger: the decimal digit pattern "0a0" has the character 'a', which is neither a digit, # nor a grouping separator`},
		{"too large for digits", `$formatInteger(1e21, '0')`, `!!$formatInteger: 1e+21 is too large for a decimal digit pattern (at most 21 digits)`},
		{"too large for roman", `$formatInteger(1000001, 'I')`, `!!$formatInteger: 1000001 is too large for roman numerals (at most 1000000 here)`},
		{"a letter among digits", `$parseInteger('12a', '0')`, `!!$parseInteger: "12a" does not match the picture "0": unexpected 'a'`},
		{"no digits", `$parseInteger('', '0')`, `!!$parseInteger: "" does not match the picture "0": no digits`},
		{"digits of another family", `$parseInteger('12', '١')`, `!!$parseInteger: "12" does not match the picture "١": unexpected '1'`},
		{"a suffix without the ordinal modifier", `$parseInteger('1st', '0')`, `!!$parseInteger: "1st" does not match the picture "0": unexpected 's'`},
		{"no suffix with the ordinal modifier", `$parseInteger('12', '0;o')`, `!!$parseInteger: "12" does not match the picture "0;o": an ordinal number ends with st, nd, rd or th`},
		{"a leading separator", `$parseInteger(',123', '#,##0')`, `!!$parseInteger: ",123" does not match the picture "#,##0": unexpected ','`},
		{"doubled separators", `$parseInteger('1,,234', '#,##0')`, `!!$parseInteger: "1,,234" does not match the picture "#,##0": unexpected ','`},
		{"unknown word", `$parseInteger('twelvety', 'w')`, `!!$parseInteger: "twelvety" does not match the picture "w": "twelvety" is not a number word`},
		{"a scale alone", `$parseInteger('thousand', 'w')`, `!!$parseInteger: "thousand" does not match the picture "w": "thousand" has no number before it`},
		{"no words", `$parseInteger('', 'w')`, `!!$parseInteger: "" does not match the picture "w": no number words`},
		{"not a roman numeral", `$parseInteger('MMXZ', 'I')`, `!!$parseInteger: "MMXZ" does not match the picture "I": unexpected 'Z'`},
		{"lower case for I", `$parseInteger('xii', 'I')`, `!!$parseInteger: "xii" does not match the picture "I": unexpected 'x'`},
		{"letters of the other case", `$parseInteger('Ab', 'A')`, `!!$parseInteger: "Ab" does not match the picture "A": unexpected 'b'`},
	})
}

// TestIntegerRoundTrip: $parseInteger reads back what $formatInteger writes, for every kind of picture.
func TestIntegerRoundTrip(t *testing.T) {
	pictures := []string{"0", "000", "#,##0", "0;o", "#,##0;o", "##,##,##0", "# ##0", "#:###,##0", "١", "#,०००", "𝟎",
		"w", "W", "Ww", "w;o", "Ww;o", "a", "A", "i", "I"}
	numbers := []int64{0, 1, 2, 3, 4, 7, 9, 10, 11, 12, 13, 19, 20, 21, 22, 23, 40, 99, 100, 101, 110, 111, 112, 999, 1000,
		1001, 1010, 1100, 3999, 12345, 100000, 999999, 1000000, 1000001, 1234567, 1000000007, 1000000000000,
		1000000000001, 123456789012345, 999999999999999, -1, -12, -1000, -4327732}
	for _, p := range pictures {
		for _, n := range numbers {
			if strings.EqualFold(p, "i") && (n > 1000000 || n < -1000000) {
				continue // too large for roman numerals (TestIntegerErrors)
			}
			expr := fmt.Sprintf(`$parseInteger($formatInteger(%d, '%s'), '%s')`, n, p, p)
			got, err := call(expr)
			if err != nil {
				t.Errorf("%s: %v", expr, err)
				continue
			}
			if want := float64(n); got != want {
				f, _ := call(fmt.Sprintf(`$formatInteger(%d, '%s')`, n, p))
				t.Errorf("%s = %v (written %v), want %v", expr, got, f, want)
			}
		}
	}
}

// FuzzIntegerRoundTrip: for any picture and integer, $formatInteger either refuses or writes text that
// $parseInteger reads back as the same integer, with the same picture; neither panics.
func FuzzIntegerRoundTrip(f *testing.F) {
	for _, s := range []struct {
		n int64
		p string
	}{{1234567, "#,##0"}, {-12, "000;o"}, {2789, "w"}, {1999, "I"}, {703, "A"}, {12340, "###١"}, {1234567890, "##,##,##0"},
		{733, "Ww;o"}, {5, "0;c(x)t"}, {1, "α"}, {1, "0,,0"}} {
		f.Add(s.n, s.p)
	}
	f.Fuzz(func(t *testing.T, n int64, picture string) {
		if n > 999999999999999 || n < -999999999999999 || strings.ContainsAny(picture, `'\`) {
			return // past 10^15 words repeat "trillion" and doubles lose integers; quotes would end the literal
		}
		text, err := call(fmt.Sprintf(`$formatInteger(%d, '%s')`, n, picture))
		if err != nil {
			return
		}
		got, err := builtins["parseInteger"].Impl(fakeContext{}, []any{text, picture})
		if err != nil {
			t.Fatalf("$formatInteger(%d, %q) = %v, which $parseInteger refuses: %v", n, picture, text, err)
		}
		if got != float64(n) {
			t.Fatalf("$formatInteger(%d, %q) = %v, read back as %v", n, picture, text, got)
		}
	})
}
