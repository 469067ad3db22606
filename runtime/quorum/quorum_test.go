package quorum

import "testing"

func TestOf(t *testing.T) {
	for _, c := range []struct {
		name  string
		cfg   Policy
		tools []Policy
		want  Policy
	}{
		{"defaults", Policy{}, []Policy{{}}, Policy{Required: 1}},
		{"configuration's", Policy{Required: 2}, []Policy{{}, {}}, Policy{Required: 2}},
		{"a tool overrides", Policy{Required: 3}, []Policy{{Required: 1}}, Policy{Required: 1}},
		{"the largest call", Policy{Required: 2}, []Policy{{Required: 4}, {}}, Policy{Required: 4}},
		{"no calls", Policy{Required: 2, AutomaticVote: true}, nil, Policy{Required: 2, AutomaticVote: true}},
		{"automatic from the configuration", Policy{Required: 2, AutomaticVote: true}, []Policy{{}, {Required: 3}}, Policy{Required: 3, AutomaticVote: true}},
		{"automatic from every tool", Policy{}, []Policy{{Required: 2, AutomaticVote: true}, {AutomaticVote: true}}, Policy{Required: 2, AutomaticVote: true}},
		{"one call refuses automatic", Policy{}, []Policy{{Required: 2, AutomaticVote: true}, {}}, Policy{Required: 2}},
	} {
		if got := Of(c.cfg, c.tools); got != c.want {
			t.Errorf("%s: Of = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestCheck(t *testing.T) {
	for n, ok := range map[int]bool{-1: false, 0: true, 1: true, 5: true, 6: false} {
		if err := (Policy{Required: n}).Check(); (err == nil) != ok {
			t.Errorf("Check(%d) = %v", n, err)
		}
	}
	if !(Policy{Required: 2}).Quorate(2) || (Policy{Required: 2}).Quorate(1) || !(Policy{}).Quorate(1) {
		t.Error("Quorate")
	}
}
