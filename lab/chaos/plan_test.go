package chaos

import (
	"reflect"
	"slices"
	"testing"
)

// TestPlanIsAFunctionOfTheSeed: the same seed gives the same campaign (transfers, client actions, fault sets, kill
// points), so rerunning a failing seed replays its schedule; another seed gives another.
func TestPlanIsAFunctionOfTheSeed(t *testing.T) {
	a, b := NewPlan(7, 500, 4), NewPlan(7, 500, 4)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two plans of seed 7 differ")
	}
	if c := NewPlan(8, 500, 4); reflect.DeepEqual(a.Transfers, c.Transfers) || reflect.DeepEqual(a.Kills, c.Kills) {
		t.Fatal("seeds 7 and 8 give the same transfers or kills")
	}
	if a.Key(3) != b.Key(3) || a.Key(3) == NewPlan(8, 500, 4).Key(3) {
		t.Fatalf("keys: %s, %s", a.Key(3), NewPlan(8, 500, 4).Key(3))
	}
}

func TestPlanShape(t *testing.T) {
	tests := []struct {
		name             string
		transfers, kills int
	}{
		{name: "quick", transfers: 300, kills: 2},
		{name: "full", transfers: 10_000, kills: 20},
		{name: "no kills", transfers: 50, kills: 0},
		{name: "more kills than room", transfers: 5, kills: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 20; seed++ {
				p := NewPlan(seed, tt.transfers, tt.kills)
				if len(p.Transfers) != tt.transfers {
					t.Fatalf("seed %d: %d transfers", seed, len(p.Transfers))
				}
				if len(p.Epochs) != len(p.Kills)+1 {
					t.Fatalf("seed %d: %d epochs for %d kills", seed, len(p.Epochs), len(p.Kills))
				}
				want := min(tt.kills, max(tt.transfers*9/10, 1))
				if len(p.Kills) != want {
					t.Fatalf("seed %d: %d kills, want %d", seed, len(p.Kills), want)
				}
				for i, k := range p.Kills {
					if k.AfterAccepted < 1 || k.AfterAccepted > tt.transfers || (i > 0 && k.AfterAccepted <= p.Kills[i-1].AfterAccepted) {
						t.Fatalf("seed %d: kill points %v not distinct, sorted, within 1..%d", seed, killCounts(p.Kills), tt.transfers)
					}
				}
				// Every fault kind is on in some epoch; those that hold events back only in an epoch a kill ends.
				for _, k := range FaultKinds {
					if len(p.Kills) == 0 && slices.Contains(endsWithKill, k) {
						continue
					}
					if !slices.ContainsFunc(p.Epochs, func(e Epoch) bool { return e.has(k) }) {
						t.Fatalf("seed %d: fault %s never on", seed, k)
					}
				}
				for i, e := range p.Epochs {
					for _, f := range e.Faults {
						if len(f.Args) < 2 || len(f.Args)%2 != 0 {
							t.Fatalf("seed %d: fault %s has flags %v", seed, f.Kind, f.Args)
						}
						if i == len(p.Epochs)-1 && slices.Contains(endsWithKill, f.Kind) {
							t.Fatalf("seed %d: fault %s in the last epoch, which no kill ends", seed, f.Kind)
						}
					}
				}
				for _, tr := range p.Transfers {
					if tr.Source == tr.Destination || tr.Amount < 1 || tr.Amount > maxAmount {
						t.Fatalf("seed %d: transfer %+v", seed, tr)
					}
				}
			}
		})
	}
}

// TestPlanUsesEveryAction: over a campaign every client action and every kind of transfer (same currency, across
// currencies, to a missing account) occurs.
func TestPlanUsesEveryAction(t *testing.T) {
	p := NewPlan(1, 2_000, 2)
	actions := map[Action]int{}
	var missing, cross int
	cur := map[string]string{}
	for _, a := range p.Accounts {
		cur[a.ID] = a.Currency
	}
	for _, tr := range p.Transfers {
		actions[tr.Action]++
		switch {
		case tr.Destination == missingAccount:
			missing++
		case cur[tr.Destination] != tr.Currency:
			cross++
		}
	}
	for _, a := range Actions {
		if actions[a] == 0 {
			t.Errorf("action %s never chosen", a)
		}
	}
	if missing == 0 || cross == 0 {
		t.Errorf("%d transfers to a missing account, %d across currencies; want some of each", missing, cross)
	}
}
