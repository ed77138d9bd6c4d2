package main

import (
	"context"

	"github.com/spf13/cobra"

	"mnemo/cliout"
	"mnemo/contract"
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
			if err := a.answer(h, func(s *cliout.Screen) { cliout.DrawHealth(s, h) }); err != nil {
				return err
			}
			if !h.IsServing() {
				return exitError{code: exitFailure}
			}
			return nil
		},
	}
}

func newInfoCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "info",
		Short: "Describe the store: version, location, record count, index state",
		Long: `Print {"version", "store", "records", "counts", "index": {"state", "applied_seq"},
"descriptor", "config", "log", "held_by", "settings"}. "records" counts every record, service sandboxes
included; "counts" says what they are, each counted once: {"active", "to_review",
"superseded", "expired", "in_sandboxes"} (the words the TUI's header uses); "held_by" is the pid of the process holding a
local store (this one, or the one every other process reaches it through); "config" is the config file read (or that would be read) and "log" the
file --debug writes to. "settings" is every setting as {"value", "source"}, the source saying where
the value came from: "flag --db", "env MNEMO_DB", "config file PATH" or "default" (store, remote,
token, config, log, and each key the config file sets). A token is only said to be set and a
password in a URL is masked; on a terminal, the settings not at their default are listed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.openedStore(cmd.Context())
			if err != nil {
				return err
			}
			count, err := s.Records(cmd.Context())
			if err != nil {
				return err
			}
			counts, err := contract.CountRecords(cmd.Context(), s.Engine, contract.MetaFilter{}, a.now())
			if err != nil {
				return err
			}
			report := cliout.Info{
				Version:    version(),
				Store:      s.Label,
				Records:    count,
				Counts:     counts,
				Descriptor: s.Engine.Descriptor(),
				Config:     a.configPath,
				Log:        a.settings.Log.Value,
				Settings:   a.settings.Report(),
			}
			if s.IndexStatus != nil {
				st := s.IndexStatus()
				report.Index = &st
			}
			if s.HeldBy != nil {
				report.HeldBy = s.HeldBy(cmd.Context())
			}
			return a.answer(report, func(s *cliout.Screen) { cliout.DrawInfo(s, report) })
		},
	}
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
