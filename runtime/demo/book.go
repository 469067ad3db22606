package demo

import (
	"fmt"
	"sync"
)

// order is one order of the made-up order book.
type order struct {
	ID       string   `json:"order_id"`
	Customer string   `json:"customer"`
	Email    string   `json:"email"`
	Total    float64  `json:"total_eur"`
	Placed   string   `json:"placed"`
	Status   string   `json:"status"`
	Items    []string `json:"items"`
	Ticket   string   `json:"ticket"`
}

// book is the demo's order book with what the tools did to it. Safe for concurrent use.
type book struct {
	mu      sync.Mutex
	orders  map[string]order
	refunds []string
	emails  int
	tags    map[string][]string
}

func newBook() *book {
	b := &book{orders: map[string]order{}, tags: map[string][]string{}}
	for _, o := range []order{
		{ID: "A-1001", Customer: "Ada Lovelace", Email: "ada@example.com", Total: 79.90, Placed: "2024-05-01", Status: "delivered", Items: []string{"charger", "cable"}, Ticket: "T-5001"},
		{ID: "A-1002", Customer: "Grace Hopper", Email: "grace@example.com", Total: 129.00, Placed: "2024-05-03", Status: "delivered", Items: []string{"case", "manual"}, Ticket: "T-5002"},
		{ID: "A-1003", Customer: "Alan Turing", Email: "alan@example.com", Total: 42.50, Placed: "2024-05-07", Status: "in transit", Items: []string{"cable"}, Ticket: "T-5003"},
	} {
		b.orders[o.ID] = o
	}
	return b
}

// find returns the order with id.
func (b *book) find(id string) (order, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	o, ok := b.orders[id]
	if !ok {
		return order{}, fmt.Errorf("there is no order %q (the demo knows A-1001, A-1002 and A-1003)", truncate(id, 40))
	}
	return o, nil
}

// refund records a refund and returns its reference.
func (b *book) refund(orderID string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	ref := fmt.Sprintf("R-%04d", len(b.refunds)+1)
	b.refunds = append(b.refunds, orderID)
	return ref
}

// email records a sent email and returns its reference.
func (b *book) email() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.emails++
	return fmt.Sprintf("M-%04d", b.emails)
}

// tag adds tag to ticket unless it is there already, and reports whether it was added.
func (b *book) tag(ticket, tag string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range b.tags[ticket] {
		if t == tag {
			return false
		}
	}
	b.tags[ticket] = append(b.tags[ticket], tag)
	return true
}

// truncate shortens s to at most n bytes for messages.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
