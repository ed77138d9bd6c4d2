package ui

import (
	"mnemo/ui/common"
	"mnemo/views/activity"
	"mnemo/views/browse"
	"mnemo/views/curate"
	"mnemo/views/detail"
	"mnemo/views/explore"
	"mnemo/views/fetch"
	"mnemo/views/help"
	"mnemo/views/recall"
)

// ViewSpec registers one view of the shell: who it is for the key map (name,
// title, the default keys that show it, the actions it offers) and how a
// session makes one. The header's tabs, the view keys, the help screen, the
// palette and the key-conflict check are all derived from the registry, so a
// new view is one entry below (and its package under views/).
type ViewSpec struct {
	common.ViewInfo
	New func(c *common.Common) common.View
}

// listActions are the moves every list offers.
func listActions() []string {
	return []string{"up", "down", "page-up", "page-down", "half-page-up", "half-page-down", "top", "bottom"}
}

// recordActions are the keys every record offers.
func recordActions() []string { return []string{"copy-id", "copy-text", "forget", "undo"} }

// panes are the pane keys of the views with more than one pane.
func panes() []string { return []string{"next-pane", "prev-pane"} }

func with(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// Registry lists the views of a session in tab order; the first is shown at
// start.
func Registry() []ViewSpec {
	return []ViewSpec{
		{ViewInfo: common.ViewInfo{Name: common.ViewExplore, Title: "Explore", Keys: []string{"1"},
			Actions: with(panes(), listActions(), []string{"expand", "collapse", "filter"}, recordActions(),
				[]string{"forget-scope", "toggle-preview", "load-demo"})},
			New: func(c *common.Common) common.View { return explore.New(c) }},
		{ViewInfo: common.ViewInfo{Name: common.ViewBrowse, Title: "Browse", Keys: []string{"2"},
			Actions: with(panes(), listActions(), []string{"open", "filter"}, recordActions(),
				[]string{"forget-scope", "approve", "reject", "select", "sort", "add-sort", "prev-column", "next-column",
					"filter-editor", "toggle-preview"})},
			New: func(c *common.Common) common.View { return browse.New(c) }},
		{ViewInfo: common.ViewInfo{Name: common.ViewFetch, Title: "Fetch", Keys: []string{"3"},
			Actions: with(listActions(), []string{"open"}, recordActions(), []string{"cycle-mode"})},
			New: func(c *common.Common) common.View { return fetch.New(c) }},
		{ViewInfo: common.ViewInfo{Name: common.ViewRecall, Title: "Recall", Keys: []string{"4"},
			Actions: with(panes(), listActions(), []string{"open"})},
			New: func(c *common.Common) common.View { return recall.New(c) }},
		{ViewInfo: common.ViewInfo{Name: common.ViewActivity, Title: "Activity", Keys: []string{"5"},
			Actions: with(listActions(), []string{"open", "copy-id", "pause-feed"})},
			New: func(c *common.Common) common.View { return activity.New(c) }},
		{ViewInfo: common.ViewInfo{Name: common.ViewCurate, Title: "Curate", Keys: []string{"6"},
			Actions: with(listActions(), []string{"open", "prev-column", "next-column", "keep-newest", "keep-confident",
				"keep-this", "dismiss"}, recordActions())},
			New: func(c *common.Common) common.View { return curate.New(c) }},
	}
}

// detailInfo is the record detail: no tab and no key of its own (enter on a
// record opens it), but a key scope.
func detailInfo() common.ViewInfo {
	return common.ViewInfo{Name: common.ViewDetail, Title: "Detail",
		Actions: with(panes(), listActions(), []string{"search", "next-match", "prev-match"}, recordActions(), []string{"export"})}
}

// viewInfos are the key scopes of the registry and the detail, in help order.
func viewInfos() []common.ViewInfo {
	var out []common.ViewInfo
	for _, s := range Registry() {
		out = append(out, s.ViewInfo)
	}
	return append(out, detailInfo())
}

func newDetail(c *common.Common) *detail.Model { return detail.New(c) }

func newHelp(c *common.Common) overlay    { return help.NewHelp(c) }
func newPalette(c *common.Common) overlay { return help.NewPalette(c) }
