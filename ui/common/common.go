// Package common holds what every part of the mnemo TUI shares within one
// session: the engine, size, styles, keys, scope, clock and logger, plus the
// messages panes use to talk to the shell. One Common exists per session, so
// many SSH sessions can run in one process.
package common

import (
	"context"
	"log/slog"
	"time"

	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/engine/curate"
)

// Common is the per-session kernel handed to every view by pointer. Only the
// root model's Update changes it.
type Common struct {
	Ctx        context.Context
	Engine     contract.Engine
	Descriptor contract.Descriptor
	StoreLabel string
	Width      int
	Height     int
	Styles     Styles
	Keys       KeyMap
	Logger     *slog.Logger
	Now        func() time.Time
	ReadOnly   bool
	Plain      bool
	Scope      Scope
	// ScopeGen increases with every scope change, so panes know when to reload.
	ScopeGen int
	// Total is the number of records in the store (the header's count), -1 until known.
	Total int
	// Clusters is the latest background clustering of the base scope, nil
	// until it first answers (the curate view lists them, Explore and
	// Browse mark their records).
	Clusters *Clusters
	// Dismissed holds the clusters this user said are different.
	Dismissed *curate.Dismissed
	// Timer replaces tea.Tick (tests run timers without waiting); nil means tea.Tick.
	Timer func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd
}

// Tick is tea.Tick through the session's timer.
func (c *Common) Tick(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
	if c.Timer != nil {
		return c.Timer(d, fn)
	}
	return tea.Tick(d, fn)
}

// Filter is the current scope's filter.
func (c *Common) Filter() contract.MetaFilter { return c.Scope.MustFilter() }

// Log returns the session logger (a discarding one when none was given).
func (c *Common) Log() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// Context returns the session context.
func (c *Common) Context() context.Context {
	if c.Ctx == nil {
		return context.Background()
	}
	return c.Ctx
}
