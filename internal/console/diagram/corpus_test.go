package diagram

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const corpusDir = "../../../localaws/sfnengine/testdata/conformance/asl/cases"

// maxReadableWidth bounds the width of the largest corpus machines: a console panel is about 1,200 px wide, and a
// drawing scaled to less than half its size brings the 13 px names under 6.5 px, which no one reads.
const maxReadableWidth = 2400

func TestConformanceCorpusDraws(t *testing.T) {
	type drawn struct {
		file   string
		states int
		layout *Layout
	}
	var all []drawn
	refused := 0
	err := filepath.WalkDir(corpusDir, func(path string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var c struct {
			Definition json.RawMessage `json:"definition"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		def := []byte(c.Definition)
		var s string
		if json.Unmarshal(def, &s) == nil {
			def = []byte(s) // a definition given as a JSON string
		}
		g, err := Parse(def)
		if err != nil {
			refused++
			t.Logf("%s: not drawn: %v", path, err)
			return nil
		}
		all = append(all, drawn{file: path, states: g.count, layout: g.Layout()})
		return nil
	})
	if err != nil {
		t.Fatalf("walk the corpus: %v", err)
	}
	if len(all) < 100 {
		t.Fatalf("only %d corpus definitions drawn; is %s there?", len(all), corpusDir)
	}
	for _, d := range all {
		t.Run(strings.TrimSuffix(filepath.Base(d.file), ".json"), func(t *testing.T) {
			checkLayout(t, d.layout)
			got := read(t, d.layout.SVG(Marks{}))
			n := 0
			for _, groups := range got.states {
				n += len(groups)
			}
			if n != d.states {
				t.Errorf("%d state groups drawn for %d states", n, d.states)
			}
		})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].states > all[j].states })
	for _, d := range all[:3] {
		t.Logf("large: %s: %d states, %gx%g px", filepath.Base(d.file), d.states, d.layout.width, d.layout.height)
		if d.layout.width > maxReadableWidth {
			t.Errorf("%s is %g px wide, want at most %d", d.file, d.layout.width, maxReadableWidth)
		}
	}
	t.Logf("corpus: %d definitions drawn, %d refused", len(all), refused)
}
