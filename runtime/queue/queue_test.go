package queue

import "testing"

func TestBucketMatchesBounds(t *testing.T) {
	bounds := Bounds()
	if len(bounds)+1 != Buckets {
		t.Fatalf("%d bounds for %d buckets", len(bounds), Buckets)
	}
	for _, c := range []struct {
		v    int64
		want int
	}{{-5, 0}, {0, 0}, {9, 0}, {10, 1}, {29, 1}, {30, 2}, {3599, 6}, {3600, 7}, {604799, 12}, {604800, 13}, {1 << 40, 13}} {
		if got := Bucket(c.v); got != c.want {
			t.Errorf("Bucket(%d) = %d, want %d", c.v, got, c.want)
		}
	}
}

func TestQuantile(t *testing.T) {
	var h Histogram
	if _, _, ok := h.Quantile(0.5); ok {
		t.Fatal("an empty histogram has a quantile")
	}
	h.Add(Bucket(5), 5)    // < 10 s
	h.Add(Bucket(100), 4)  // < 5 min
	h.Add(Bucket(7000), 1) // < 2 h
	h.Add(-1, 100)         // unknown: not counted
	h.Add(Buckets, 100)    // out of range: not counted
	for _, c := range []struct {
		q    float64
		want int64
	}{{0.5, 10}, {0.51, 300}, {0.9, 300}, {0.91, 7200}, {1, 7200}} {
		if got, over, ok := h.Quantile(c.q); !ok || over || got != c.want {
			t.Errorf("Quantile(%v) = %d, %v, %v; want %d", c.q, got, over, ok, c.want)
		}
	}
	if LowerBound(10, false) != 0 || LowerBound(300, false) != 60 || LowerBound(0, true) != Week {
		t.Errorf("lower bounds %d %d %d", LowerBound(10, false), LowerBound(300, false), LowerBound(0, true))
	}
	h.Add(Bucket(Week), 20)
	if _, over, ok := h.Quantile(0.9); !ok || !over {
		t.Errorf("p90 above a week: over %v ok %v", over, ok)
	}
}

func TestBuilderFilesUnderDeskConfigurationAndEachTool(t *testing.T) {
	b := NewBuilder()
	b.Waiting(WaitingGroup{Configuration: "refunds", Tools: "refund,lookup", Bucket: 3, Runs: 2, OldestSince: 500, Expiring: 1, Escalated: 1})
	b.Waiting(WaitingGroup{Configuration: "refunds", Tools: "refund", Input: true, Bucket: 5, Runs: 1, OldestSince: 400})
	b.Waiting(WaitingGroup{Configuration: "care", Tools: "", Bucket: 0, Runs: 3, OldestSince: 900})
	b.Decided(DecisionGroup{Configuration: "refunds", Tools: "refund", Class: ClassPerson, Bucket: 4, Week: 3, Day: 1})
	b.Decided(DecisionGroup{Configuration: "refunds", Tools: "refund", Class: ClassExpiry, Bucket: -1, Week: 2, Day: 2})
	b.Decided(DecisionGroup{Configuration: "refunds", Tools: "refund", Class: Classes, Week: 9})
	b.Failed("care", "", 4)
	b.Person(7, "ada", 2, 3)
	b.Person(7, "ada", -1, 1)
	b.Person(8, "bob", 2, 5)
	h := b.Health(1000)

	var keys []Key
	for _, r := range h.Rows {
		keys = append(keys, r.Key)
	}
	want := []Key{{}, {"care", ""}, {"refunds", ""}, {"refunds", "lookup"}, {"refunds", "refund"}}
	if len(keys) != len(want) {
		t.Fatalf("rows %v, want %v", keys, want)
	}
	for i := range want {
		if keys[i] != want[i] {
			t.Fatalf("rows %v, want %v", keys, want)
		}
	}
	desk := h.Row(Key{})
	if desk.WaitingApproval != 5 || desk.WaitingInput != 1 || desk.OldestSince != 400 || desk.ExpiringSoon != 1 || desk.Escalated != 1 {
		t.Errorf("desk waiting %+v", desk)
	}
	if desk.Decisions(false) != 5 || desk.Decisions(true) != 3 || desk.FailedNotifications != 4 {
		t.Errorf("desk decisions %d/%d, failed %d", desk.Decisions(true), desk.Decisions(false), desk.FailedNotifications)
	}
	if n := desk.Decided[ClassExpiry].Times.Total(); n != 0 {
		t.Errorf("expiry times counted %d decisions of unknown pause start", n)
	}
	lookup := h.Row(Key{"refunds", "lookup"})
	if lookup.WaitingApproval != 2 || lookup.Waiting() != 2 || lookup.OldestSince != 500 || lookup.Decisions(false) != 0 {
		t.Errorf("refunds/lookup %+v", lookup)
	}
	if refunds := h.Row(Key{Configuration: "refunds"}); refunds.Waiting() != 3 {
		t.Errorf("a run waiting on two tools counts %d times under its configuration", refunds.Waiting()-1)
	}
	if h.Row(Key{"none", ""}).Waiting() != 0 {
		t.Error("an unknown row is not empty")
	}
	if len(h.People) != 2 || h.People[0].Name != "bob" || h.People[1].Decisions != 4 || h.People[1].Times.Total() != 3 {
		t.Errorf("people %+v", h.People)
	}
	if empty := NewBuilder().Health(1); len(empty.Rows) != 1 || empty.Rows[0].Key != (Key{}) {
		t.Errorf("empty health %+v", empty)
	}
	lone := NewBuilder()
	lone.Waiting(WaitingGroup{Tools: "refund", Runs: 2})
	if h := lone.Health(1); len(h.Rows) != 1 || h.Rows[0].WaitingApproval != 2 {
		t.Errorf("runs without a configuration: %+v, want them once, in the desk's row", h.Rows)
	}
}
