package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"mnemo/contract"
	"mnemo/server/wire"
)

func newHealthCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "health",
		Short: "Print the engine's health; exit 0 when it is serving",
		Long: `Print {"state": "ok" | "degraded" | "down", "reason": ...}. Exits 0 when the
engine is serving (ok or degraded), 1 when it is down.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := a.engine(cmd.Context())
			if err != nil {
				return err
			}
			h := e.Health(cmd.Context())
			if err := a.answer(h, func(s *screen) { drawHealth(s, h) }); err != nil {
				return err
			}
			if !h.IsServing() {
				return exitError{code: exitFailure}
			}
			return nil
		},
	}
}

// infoReport is `mnemo info`'s answer.
type infoReport struct {
	Version string `json:"version"`
	Store   string `json:"store"`
	Records int    `json:"records"`
	// Counts says what the records are (contract.RecordCounts): active, to
	// review, superseded, expired, in service sandboxes.
	Counts contract.RecordCounts `json:"counts"`
	Index  *indexInfo            `json:"index"`
	// HeldBy is the process holding a local store (docs/sharing.md).
	HeldBy     int                 `json:"held_by,omitempty"`
	Descriptor contract.Descriptor `json:"descriptor"`
	Config     string              `json:"config"`
	Log        string              `json:"log"`
}

func newInfoCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "info",
		Short: "Describe the store: version, location, record count, index state",
		Long: `Print {"version", "store", "records", "counts", "index": {"state", "applied_seq"},
"descriptor", "config", "log", "held_by"}. "records" counts every record, service sandboxes
included; "counts" says what they are, each counted once: {"active", "to_review",
"superseded", "expired", "in_sandboxes"} (the words the TUI's header uses); "held_by" is the pid of the process holding a
local store (this one, or the one every other process reaches it through); "config" is the config file read (or that would be read) and "log" the
file --debug writes to.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.openedStore(cmd.Context())
			if err != nil {
				return err
			}
			count, err := countRecords(cmd.Context(), s)
			if err != nil {
				return err
			}
			counts, err := contract.CountRecords(cmd.Context(), s.engine, contract.MetaFilter{}, a.now())
			if err != nil {
				return err
			}
			report := infoReport{
				Version:    version(),
				Store:      s.label,
				Records:    count,
				Counts:     counts,
				Descriptor: s.engine.Descriptor(),
				Config:     a.configPath,
				Log:        a.logPath,
			}
			if s.indexStatus != nil {
				st := s.indexStatus()
				report.Index = &st
			}
			if s.heldBy != nil {
				report.HeldBy = s.heldBy(cmd.Context())
			}
			return a.answer(report, func(s *screen) { drawInfo(s, report) })
		},
	}
}

// recordCounter is an engine that counts every record it holds, service
// sandboxes included (engine/memory and engine/bolt).
type recordCounter interface{ Len() int }

// countRecords counts every record. The contract's reads never enter service
// sandboxes without a reach naming them, so an engine that cannot count them
// reports explore's exact total of everything else.
func countRecords(ctx context.Context, s *openStore) (int, error) {
	if s.recordCount != nil {
		return s.recordCount(ctx)
	}
	if c, ok := s.engine.(recordCounter); ok {
		return c.Len(), nil
	}
	page, err := s.engine.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetStatus, Limit: len(contract.Statuses())})
	if err != nil {
		return 0, err
	}
	return int(page.Total), nil
}

// holds is what the store holds now, for a human summary after a write
// (nil when piped, or when it cannot be counted: the summary stands alone).
func (a *app) holds(ctx context.Context, e contract.Engine) *contract.RecordCounts {
	if !a.human() {
		return nil
	}
	c, err := contract.CountRecords(ctx, e, contract.MetaFilter{}, a.now())
	if err != nil {
		return nil
	}
	return &c
}

// tokenHint says what a person at the command line does about a refused
// token, where the server's own words speak of HTTP headers.
func tokenHint(err error, url, token string) error {
	if !errors.Is(err, contract.ErrUnauthorized) || wire.IsForbidden(err) {
		return err
	}
	var ce *contract.Error
	if token == "" {
		ce = contract.Unauthorized("the server at %s needs a token: set MNEMO_TOKEN to yours (mnemo serve prints the owner's; the keys file names the others'), or point --remote at another server", url)
	} else {
		ce = contract.Unauthorized("the server at %s does not know the token in MNEMO_TOKEN: check it, or point --remote at the server that issued it", url)
	}
	ce.Err = err
	return ce
}
