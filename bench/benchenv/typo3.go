package benchenv

import (
	"context"
	"fmt"

	"runsdesk/bench/seed"
	"runsdesk/db"
	"runsdesk/typo3/backend/backendtest"
)

// extensionSeed is the seed of the extension's runs, so they differ from runsdesk's.
const extensionSeed = 2

// createSite gives the database behind dsn a TYPO3 12 site's be_users and be_groups
// (backendtest.CreateTables), empty: the bench's people are runsdesk's own accounts.
func createSite(ctx context.Context, dsn string) error {
	site, err := db.Open(ctx, dsn)
	if err != nil {
		return fmt.Errorf("benchenv: site: %w", err)
	}
	defer site.Close()
	if err := backendtest.CreateTables(ctx, site); err != nil {
		return fmt.Errorf("benchenv: site: %w", err)
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
