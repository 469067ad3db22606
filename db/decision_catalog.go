package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
)

// sqlToolsVersion is the version of the live tool definitions: their count and the XOR of a
// 64-bit digest of each row's uid and definition_digest (the server's digest of every column
// ToolDefinitions reads, migration 0025). A definition added, removed, renumbered or changed
// in any column changes it; no tools is toolsVersionNone.
const sqlToolsVersion = `SELECT CONCAT(COUNT(*), ':', COALESCE(BIT_XOR(CAST(CONV(LEFT(SHA2(CONCAT(uid, ',', definition_digest), 256), 16), 16, 10) AS UNSIGNED)), 0))
	FROM tx_runsdesk_tool WHERE deleted = 0`

// toolsVersionNone is sqlToolsVersion of a catalog without live tool definitions.
const toolsVersionNone = "0:0"

var sqlConfigurationForDecision = `SELECT ` + configurationColumns + `, (` + sqlToolsVersion + `)
	FROM tx_nrllm_configuration WHERE uid = ? AND deleted = 0 AND hidden = 0`

// sqlRunForDecision is sqlRunByUUID joined with the run's live configuration and the tools'
// version, as sqlConfigurationForDecision reads them; no row when either is missing.
var sqlRunForDecision = `SELECT ` + qualifiedColumns("r", runColumns) + `,
	IF(r.status IN ('waiting_for_approval', 'waiting_for_input'), r.pause_sequence, -1), r.has_drafts,
	` + qualifiedColumns("c", configurationColumns) + `, (` + sqlToolsVersion + `)
	FROM tx_nrllm_agentrun r
	JOIN tx_nrllm_configuration c ON c.uid = r.configuration_uid AND c.deleted = 0 AND c.hidden = 0
	WHERE r.uuid = ? ORDER BY r.uid LIMIT 1`

// sqlToolDefinitionsVersioned is sqlToolDefinitions with the version of the rows it returns,
// read in the same statement (one snapshot).
var sqlToolDefinitionsVersioned = `SELECT ` + toolColumns + `, (` + sqlToolsVersion + `) FROM tx_runsdesk_tool
	WHERE deleted = 0 ORDER BY uid`

// qualifiedColumns is a comma-separated column list with every column prefixed by alias.
func qualifiedColumns(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = alias + "." + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// ConfigurationForDecision returns the live configuration uid (or runtime.ErrNotFound) and,
// in the same statement, the version of the live tool definitions. When that version is not
// known, it also reads the definitions (with the version they are, which may be newer) and
// returns them; otherwise defs is nil. A decision reads its catalog this way in one
// statement while no tool changes.
func (s *Store) ConfigurationForDecision(ctx context.Context, uid int64, known string) (runtime.Configuration, runtime.ToolsRead, error) {
	var version string
	c, err := scanConfiguration(withVersion{s.prep.on(nil).QueryRowContext(ctx, sqlConfigurationForDecision, uid), &version})
	if err != nil {
		return runtime.Configuration{}, runtime.ToolsRead{}, fmt.Errorf("db: configuration %d: %w", uid, notFound(err))
	}
	if version == known {
		return c, runtime.ToolsRead{Version: version}, nil
	}
	read, err := s.toolDefinitionsVersioned(ctx)
	if err != nil {
		return runtime.Configuration{}, runtime.ToolsRead{}, err
	}
	return c, read, nil
}

// FindForDecision is FindByUUID and ConfigurationForDecision(the run's configuration, known)
// in one statement. When that finds no row (no such run, or its configuration is gone) it
// reads them apart, so each reports its own runtime.ErrNotFound: the run's as the error, the
// configuration's in DecisionRead.Err.
func (s *Store) FindForDecision(ctx context.Context, uuid, known string) (runtime.Run, runtime.DecisionRead, error) {
	var hint pauseHint
	var version string
	var cfg runtime.Configuration
	row := s.prep.on(nil).QueryRowContext(ctx, sqlRunForDecision, uuid)
	r, err := scanRun(scanFunc(func(runDest ...any) error {
		var err error
		cfg, err = scanConfiguration(scanFunc(func(cfgDest ...any) error {
			return row.Scan(append(append(runDest, &hint.next, &hint.drafts), append(cfgDest, &version)...)...)
		}))
		return err
	}))
	if errors.Is(err, sql.ErrNoRows) {
		return s.findForDecisionApart(ctx, uuid, known)
	}
	if err != nil {
		return runtime.Run{}, runtime.DecisionRead{}, fmt.Errorf("db: find run %q for a decision: %w", uuid, err)
	}
	s.openRun(&r, true)
	s.keepHint(r, hint)
	read := runtime.DecisionRead{Configuration: cfg, Tools: runtime.ToolsRead{Version: version}}
	if version != known {
		if read.Tools, err = s.toolDefinitionsVersioned(ctx); err != nil {
			read = runtime.DecisionRead{Err: err}
		}
	}
	return r, read, nil
}

func (s *Store) findForDecisionApart(ctx context.Context, uuid, known string) (runtime.Run, runtime.DecisionRead, error) {
	r, err := s.FindByUUID(ctx, uuid)
	if err != nil {
		return runtime.Run{}, runtime.DecisionRead{}, err
	}
	var read runtime.DecisionRead
	read.Configuration, read.Tools, read.Err = s.ConfigurationForDecision(ctx, r.ConfigurationUID, known)
	return r, read, nil
}

// toolDefinitionsVersioned is ToolDefinitions with the version of what it read.
func (s *Store) toolDefinitionsVersioned(ctx context.Context) (runtime.ToolsRead, error) {
	out := runtime.ToolsRead{Version: toolsVersionNone, Definitions: []tool.Definition{}, Read: true}
	defs, err := queryAll(ctx, s.prep.on(nil), func(rows *sql.Rows) (tool.Definition, error) {
		var r toolRow
		if err := rows.Scan(append(r.dest(), &out.Version)...); err != nil {
			return tool.Definition{}, err
		}
		return rowToTool(r)
	}, sqlToolDefinitionsVersioned)
	if err != nil {
		return runtime.ToolsRead{}, fmt.Errorf("db: tool definitions: %w", err)
	}
	out.Definitions = defs
	return out, nil
}

// withVersion scans one more column, the tools' version, after the configuration's.
type withVersion struct {
	sc      scanner
	version *string
}

func (w withVersion) Scan(dest ...any) error { return w.sc.Scan(append(dest, w.version)...) }
