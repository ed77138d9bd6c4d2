package ui

import (
	"context"
	"strconv"
	"time"

	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/engine/curate"
	"mnemo/ui/common"
)

// The curation flow: the shell clusters the base scope in the background
// (at start, and again after the data changes, one run at a time), or reads
// its clusters from what the store keeps (curate.Kept), hands the
// views the result (common.Clusters), and runs what the curate view asks:
// a resolution (supersedes, curate.Apply) or a dismissal, each undoable.

// DefaultMaxClustered is the most records of the base scope the session
// clusters: every one is read (curate.Scope) and held in its index, and a
// pass over 10k records costs about a second of CPU (docs/curation.md).
const DefaultMaxClustered = curate.MaxLiveScope

// reclusterPause is the least time between two clusterings of a session
// whose store keeps changing; the pause is also at least reclusterShare
// times the last pass, so clustering takes at most a fifth of a core
// however busy the store.
const (
	reclusterPause = 2 * time.Second
	reclusterShare = 5
)

type clustersMsg struct {
	gen      int
	clusters *common.Clusters
	took     time.Duration
	// index is the clustering to keep up to date from the change feed
	// (nil when the session does not follow it); applied is how many of
	// the feed's changes the pass applied to it (0: a pass from scratch).
	index   *curate.Index
	applied int
}

type reclusterMsg struct{}

type resolvedMsg struct {
	what string
	keys []string
	done []curate.Done
	err  error
}

type dismissedMsg struct {
	cluster curate.Cluster
	undo    bool
	err     error
}

// curation tracks the background clustering.
type curation struct {
	gen     int
	running bool
	// dirty says the data changed while a run was under way: run again.
	dirty bool
	// took is how long the last pass took.
	took time.Duration
	// index is a live session's clustering of its reach, kept up to date
	// from the change feed: each store, review, supersede or forget is one
	// curate.Index step (about 0.3 ms at 100k records), not a new pass. It
	// is nil until built, and owned by the running pass while one runs.
	index *curate.Index
	// pending are the feed's changes since the last pass; rebuild says the
	// feed lost some (a reset, an overflow): the next pass starts over.
	pending []contract.Change
	rebuild bool
	// perChange is what applying one change to the index took lately;
	// lastChange when the feed last brought one, lastEnd when the last
	// pass ended; waiting says a pass put off by a burst is scheduled.
	perChange           time.Duration
	lastChange, lastEnd time.Time
	waiting             bool
	// scoped says the base scope is too large to cluster, so the last pass
	// clustered the drill-down scope of scopeGen: a new scope starts over.
	scoped   bool
	scopeGen int
}

// cost estimates what the next pass takes: applying the pending changes to
// the index, or (a pass from scratch) what the last one took; 0 when no
// pass is known yet.
func (cu *curation) cost() time.Duration {
	if cu.index != nil && !cu.rebuild {
		return time.Duration(len(cu.pending)) * cu.perChange
	}
	return cu.took
}

// reset forgets the clustering (the session's reach changed): a pass under
// way is dropped when it answers, and the next one starts from scratch.
func (cu *curation) reset() {
	cu.gen++
	cu.running, cu.dirty, cu.index, cu.pending, cu.rebuild = false, false, nil, nil, true
	cu.scoped = false
}

// follow queues the feed's changes for the next pass.
func (cu *curation) follow(changes []contract.Change, lost bool) {
	if len(changes) > 0 {
		cu.lastChange = time.Now()
	}
	cu.pending = append(cu.pending, changes...)
	cu.rebuild = cu.rebuild || lost
}

// clusterCmd starts a clustering of the base scope, or marks one under way
// as stale. A live session builds its index once and then applies the
// feed's changes to it; any other session clusters from scratch each time.
func (m *model) clusterCmd() tea.Cmd {
	if m.c.Engine == nil {
		return nil
	}
	cu := &m.curation
	if cu.running {
		cu.dirty = true
		return nil
	}
	if cost := cu.cost(); cost > 0 && time.Since(cu.lastChange) < reclusterPause && cost*reclusterShare > time.Since(cu.lastEnd) {
		// A burst of writes: catching up now would take more than a
		// fifth of a core, so the clusters stay as they are until the
		// writes calm down (or the budget allows).
		if cu.waiting {
			return nil
		}
		cu.waiting = true
		return m.c.Tick(reclusterPause, func(time.Time) tea.Msg { return reclusterMsg{} })
	}
	cu.running, cu.dirty = true, false
	cu.gen++
	gen := cu.gen
	engine, ctx, base := m.c.Engine, m.c.Context(), m.c.Scope.Base.Clone()
	scope, scopeGen, root, scoped := m.c.Filter(), m.c.ScopeGen, m.c.Scope.IsRoot(), cu.scoped
	cfg, dismissed, limit := m.opts.Curate, m.c.Dismissed, m.opts.MaxClustered
	if limit <= 0 {
		limit = DefaultMaxClustered
	}
	index, pending := cu.index, cu.pending
	if !m.live.enabled || cu.rebuild || len(pending) > limit/2 || cu.scoped && cu.scopeGen != scopeGen {
		index = nil
	}
	cu.index, cu.pending, cu.rebuild = nil, nil, false
	keep := m.live.enabled
	m.start("cluster", "clustering")
	return func() tea.Msg {
		start := time.Now()
		var progress curate.KeptAnswer
		if k, ok := engine.(curate.Kept); ok {
			// The store keeps its clusters (the process holding it
			// clusters all of it): read the base scope's, whatever its size.
			if a, err := k.KeptClusters(ctx, base, cfg); err == nil && a.Kept {
				visible, hidden := dismissed.Visible(a.Clusters)
				return clustersMsg{gen: gen, clusters: newClusters(visible, a.Records, hidden), took: time.Since(start)}
			} else if err == nil {
				progress = a
			}
		}
		var c *common.Clusters
		var ix *curate.Index
		if index != nil && scoped {
			c, ix = clusterScope(ctx, engine, scope, cfg, dismissed, limit, index, pending)
			c.Scoped, c.ScopeGen = true, scopeGen
		} else {
			c, ix = clusterScope(ctx, engine, base, cfg, dismissed, limit, index, pending)
			if c.TooMany > 0 {
				// The reach is too large to hold: cluster the drill-down
				// scope instead, and again whenever it changes.
				if !root {
					c, ix = clusterScope(ctx, engine, scope, cfg, dismissed, limit, nil, nil)
				}
				c.Scoped, c.ScopeGen = true, scopeGen
			}
		}
		if !keep {
			ix = nil
		}
		if c.TooMany > 0 && progress.Phase != "" {
			c.Pending, c.PendingDone, c.PendingTotal = progress.Phase, progress.Done, progress.Total
		}
		applied := 0
		if index != nil {
			applied = len(pending)
		}
		return clustersMsg{gen: gen, clusters: c, took: time.Since(start), index: ix, applied: applied}
	}
}

// clusterScope clusters a scope (the base, or the drill-down scope when the
// base is too large): from scratch when index is nil, else by applying the
// changes to it.
func clusterScope(ctx context.Context, engine contract.Engine, base contract.MetaFilter, cfg curate.Config,
	dismissed *curate.Dismissed, limit int, index *curate.Index, changes []contract.Change) (*common.Clusters, *curate.Index) {
	if index == nil {
		page, err := engine.Browse(ctx, contract.BrowseQuery{Filter: base,
			Status: []contract.Status{contract.StatusActive, contract.StatusCandidate}, Limit: 1})
		if err != nil {
			return &common.Clusters{Err: err}, nil
		}
		if page.Total > limit {
			return &common.Clusters{TooMany: page.Total}, nil
		}
		records, err := curate.Scope(ctx, engine, base)
		if err != nil {
			return &common.Clusters{Err: err}, nil
		}
		index = curate.NewIndex(cfg)
		for i, r := range records {
			if i%256 == 0 && ctx.Err() != nil {
				// The session ended: a pass nobody will see stops.
				return &common.Clusters{Err: ctx.Err()}, nil
			}
			index.Add(r)
		}
	} else {
		q := contract.BrowseQuery{Filter: base}
		for i, ch := range changes {
			if i%256 == 0 && ctx.Err() != nil {
				return &common.Clusters{Err: ctx.Err()}, nil
			}
			r := ch.Record
			if r != nil && (r.Status == contract.StatusActive || r.Status == contract.StatusCandidate) && q.Matches(r) {
				index.Add(*r)
			} else {
				index.Remove(ch.ID)
			}
		}
	}
	visible, hidden := dismissed.Visible(index.Clusters())
	return newClusters(visible, index.Len(), hidden), index
}

func newClusters(list []curate.Cluster, records, dismissed int) *common.Clusters {
	c := &common.Clusters{List: list, Of: map[string]int{}, Records: records, Dismissed: dismissed}
	for i, cl := range list {
		for _, r := range cl.Members {
			c.Of[r.ID] = i
		}
	}
	return c
}

// without answers the clusters with those of the given keys left out (a
// resolution or a dismissal shows at once, before the next clustering).
func without(c *common.Clusters, keys ...string) *common.Clusters {
	if c == nil {
		return nil
	}
	drop := map[string]bool{}
	for _, k := range keys {
		drop[k] = true
	}
	var list []curate.Cluster
	for _, cl := range c.List {
		if !drop[cl.Key] {
			list = append(list, cl)
		}
	}
	out := newClusters(list, c.Records, c.Dismissed)
	out.Scoped, out.ScopeGen = c.Scoped, c.ScopeGen
	return out
}

// curationMsg handles the flow's messages; ok is false for any other message.
func (m *model) curationMsg(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case clustersMsg:
		if msg.gen != m.curation.gen {
			return nil, true
		}
		m.curation.running, m.curation.took, m.curation.index = false, msg.took, msg.index
		m.curation.lastEnd = time.Now()
		if msg.applied > 0 {
			per := msg.took / time.Duration(msg.applied)
			if m.curation.perChange == 0 {
				m.curation.perChange = per
			} else {
				m.curation.perChange = (3*m.curation.perChange + per) / 4
			}
		}
		m.curation.scoped, m.curation.scopeGen = msg.clusters.Scoped, msg.clusters.ScopeGen
		m.done("cluster")
		if msg.clusters.Scoped && msg.clusters.ScopeGen != m.c.ScopeGen {
			// the scope changed while the pass ran: its clusters are of
			// the old one
			m.curation.reset()
			return m.clusterCmd(), true
		}
		m.c.Clusters = msg.clusters
		cmd := m.broadcast(common.ClustersMsg{})
		if m.curation.dirty || msg.clusters.Pending != "" {
			// Changed meanwhile, or the store's own clustering is under
			// way: ask again (it answers the whole store once done).
			pause := max(reclusterPause, reclusterShare*msg.took)
			cmd = tea.Batch(cmd, m.c.Tick(pause, func(time.Time) tea.Msg { return reclusterMsg{} }))
		}
		return cmd, true
	case reclusterMsg:
		m.curation.waiting = false
		return m.clusterCmd(), true
	case common.ResolveMsg:
		if m.c.ReadOnly || len(msg.Steps) == 0 {
			return nil, true
		}
		engine, ctx := m.c.Engine, m.c.Context()
		m.start("resolve", "resolving")
		keys := make([]string, len(msg.Steps))
		for i, s := range msg.Steps {
			keys[i] = s.Cluster
		}
		return func() tea.Msg {
			done, err := curate.Apply(ctx, engine, msg.Steps)
			return resolvedMsg{what: msg.What, keys: keys, done: done, err: err}
		}, true
	case resolvedMsg:
		m.done("resolve")
		if msg.err != nil {
			return m.fail("resolve", msg.err), true
		}
		m.undo = append(m.undo, undoEntry{superseded: msg.done})
		m.c.Clusters = without(m.c.Clusters, msg.keys...)
		text := msg.what + ", superseded " + strconv.Itoa(len(msg.done)) +
			" (" + common.KeyLabel(m.c.Keys.Undo.Keys()) + " undoes)"
		return tea.Batch(m.broadcast(common.ClustersMsg{}), m.say(text),
			m.changed(common.DataChangedMsg{Cause: common.ChangeCurate})), true
	case common.DismissMsg:
		if m.c.ReadOnly {
			return nil, true
		}
		d, c := m.c.Dismissed, msg.Cluster
		return func() tea.Msg { return dismissedMsg{cluster: c, err: d.Dismiss(c)} }, true
	case dismissedMsg:
		if msg.err != nil {
			return m.fail("dismiss", msg.err), true
		}
		if msg.undo {
			return tea.Batch(m.say("the dismissed cluster is back"), m.clusterCmd()), true
		}
		m.undo = append(m.undo, undoEntry{dismissed: &msg.cluster})
		if m.c.Clusters = without(m.c.Clusters, msg.cluster.Key); m.c.Clusters != nil {
			m.c.Clusters.Dismissed++
		}
		return tea.Batch(m.broadcast(common.ClustersMsg{}),
			m.say("dismissed "+strconv.Itoa(len(msg.cluster.Members))+" as different ("+
				common.KeyLabel(m.c.Keys.Undo.Keys())+" undoes)")), true
	}
	return nil, false
}

// undoCuration takes back a resolution or a dismissal.
func (m *model) undoCuration(last undoEntry) tea.Cmd {
	engine, ctx := m.c.Engine, m.c.Context()
	if last.dismissed != nil {
		d, c := m.c.Dismissed, *last.dismissed
		return func() tea.Msg { return dismissedMsg{cluster: c, undo: true, err: d.Undismiss(c)} }
	}
	m.start("undo", "restoring")
	done := last.superseded
	return func() tea.Msg {
		err := curate.Undo(ctx, engine, done)
		return restoredMsg{count: len(done), err: err}
	}
}
