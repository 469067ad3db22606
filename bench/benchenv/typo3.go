package benchenv

import (
	"context"
	"fmt"
	"testing"

	"runsdesk/bench/seed"
	"runsdesk/db"
	"runsdesk/typo3/backend/backendtest"
)

// extensionSeed is the seed of the extension's runs, so they differ from runsdesk's.
const extensionSeed = 2

// createSite gives the database behind dsn a TYPO3 12 site's be_users and be_groups
// (backendtest.Create), empty: the bench's people are runsdesk's own accounts.
func createSite(ctx context.Context, dsn string) error {
	site, err := db.Open(ctx, dsn)
	if err != nil {
		return fmt.Errorf("benchenv: site: %w", err)
	}
	defer site.Close()
	tb := &firstError{}
	backendtest.Create(tb, site)
	if tb.err != nil {
		return fmt.Errorf("benchenv: site: %w", tb.err)
	}
	return nil
}

// seedSite fills the site's tx_nrllm_agentrun behind dsn with o.Runs runs of the nr-llm
// extension (seed.Extension) and analyses it.
func seedSite(ctx context.Context, dsn string, o seed.Options) (seed.Report, error) {
	site, err := db.Open(ctx, dsn)
	if err != nil {
		return seed.Report{}, fmt.Errorf("benchenv: site: %w", err)
	}
	defer site.Close()
	o.RandSeed = extensionSeed
	rep, err := seed.Extension(ctx, site, o)
	if err != nil {
		return rep, fmt.Errorf("benchenv: site: %w", err)
	}
	return rep, analyze(ctx, site, "tx_nrllm_agentrun")
}

// firstError is the testing.TB backendtest.Create takes, outside a test: Fatalf keeps the
// first error. Create calls no other method but Helper.
type firstError struct {
	testing.TB
	err error
}

// Helper does nothing.
func (f *firstError) Helper() {}

// Fatalf keeps the first error it is given.
func (f *firstError) Fatalf(format string, args ...any) {
	if f.err == nil {
		f.err = fmt.Errorf(format, args...)
	}
}
